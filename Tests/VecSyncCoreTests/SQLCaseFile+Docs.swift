import Foundation

/// The ```` ```sql ```` examples of `README.md` and `docs/*.md`, read as SQL cases, so a page
/// cannot say what the extension does not print.
///
/// Each fence is one or more cases in the format of `Tests/SQLCases/README.md`: its SQL, then
/// what it must print (`-- row: A|B`, `-- no rows`, `-- error: words`). A fence that does not
/// begin with `-- case:` or `-- setup` is one case, titled by its line. Every fence starts
/// afresh (an empty `-- setup` ends what an earlier fence set up), and the line numbers of
/// the cases are the page's own, so a failure names the page and the line.
///
/// ```sql
/// select vector_distance_l2('[0,0]', '[3,4]');
/// -- row: 5.0
/// ```
extension SQLCaseFile {
    /// The pages whose SQL examples run: `README.md`, then `docs/*.md` in name order, as
    /// paths from `Tests/SQLCases/` (so an error's place opens the page).
    static var docPages: [String] {
        let docs = Shell.packageRoot.appendingPathComponent("docs", isDirectory: true)
        let pages = (try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []
        return ["../../README.md"] + pages.filter { $0.hasSuffix(".md") }.sorted().map { "../../docs/" + $0 }
    }

    /// The SQL examples of `page` (a path from `Tests/SQLCases/`) as a case file: every line
    /// outside a ```` ```sql ```` fence blank, the fences' lines where they are.
    static func casesText(ofPage text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var output = Array(repeating: "", count: lines.count)
        var index = 0
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            guard line == "```sql" else {
                if line.hasPrefix("```") { index = Self.fenceEnd(after: index, in: lines) }
                index += 1
                continue
            }
            let end = Self.fenceEnd(after: index, in: lines)
            let first = lines[(index + 1)..<end].first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
            if first.hasPrefix("-- case: ") {
                output[index] = "-- setup"
            } else if !first.hasPrefix("-- setup") && !first.hasPrefix("-- file setup") {
                if index > 0 { output[index - 1] = "-- setup" }
                output[index] = "-- case: example at line \(index + 2)"
            }
            for content in (index + 1)..<end { output[content] = lines[content] }
            index = end + 1
        }
        lines = output
        return lines.joined(separator: "\n")
    }

    /// The line of the fence that closes the one opened at `start` (the last line if none does).
    private static func fenceEnd(after start: Int, in lines: [String]) -> Int {
        var index = start + 1
        while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" { index += 1 }
        return min(index, lines.count - 1)
    }

    /// Every SQL example of every page, as cases that run alone; a page whose examples break
    /// the format is one case that fails naming the page and line.
    static var everyDocExample: [SQLCase] {
        docPages.flatMap { page -> [SQLCase] in
            let url = folder.appendingPathComponent(page)
            do throws(SQLCaseFileError) {
                let text: String
                do {
                    text = try String(contentsOf: url, encoding: .utf8)
                } catch {
                    throw SQLCaseFileError(file: page, line: 0, problem: "cannot read \(url.path): \(error)")
                }
                let casesText = casesText(ofPage: text)
                guard casesText.contains("-- case: ") else { return [] }
                return try SQLCaseFile(name: page, text: casesText).groups.flatMap(\.standaloneCases)
            } catch {
                return [SQLCase.unreadable(error)]
            }
        }
    }
}
