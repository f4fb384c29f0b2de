import Foundation
import Testing

/// A file of SQL cases in `Tests/SQLCases/`, parsed (the format: that folder's README.md).
///
/// ```swift
/// @Test(arguments: SQLPath.allCases, SQLCaseFile.cases("vec0-bad-input.cases"))
/// func behaves(path: SQLPath, sqlCase: SQLCase) { sqlCase.verify(path) }
/// ```
///
/// A file that cannot be read or parsed never stops the run: ``cases(_:)`` gives one case
/// that fails naming the file and line, and ``SQLPath/verify(casesIn:)`` records the issue.
struct SQLCaseFile: Sendable {
    /// The file's name in `Tests/SQLCases/`.
    var name: String
    /// Its setups in order, each with the cases that follow it.
    var groups: [SQLCaseGroup]

    /// `Tests/SQLCases/` of this package, found from this source file's path.
    static var folder: URL {
        Shell.packageRoot.appendingPathComponent("Tests/SQLCases", isDirectory: true)
    }

    /// Reads and parses `Tests/SQLCases/<name>`.
    init(named name: String) throws(SQLCaseFileError) {
        let url = Self.folder.appendingPathComponent(name)
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw SQLCaseFileError(file: name, line: 0, problem: "cannot read \(url.path): \(error)")
        }
        try self.init(name: name, text: text)
    }

    /// Parses `text` as the file `name`.
    init(name: String, text: String) throws(SQLCaseFileError) {
        self.name = name
        var parser = SQLCaseFileParser(file: name)
        groups = try parser.parse(text)
    }

    /// Every case of `Tests/SQLCases/<name>`, each to run alone with its setup before its
    /// SQL; a file that cannot be read, or that needs a database file (a file setup), is
    /// one case that fails naming the file and line.
    static func cases(_ name: String) -> [SQLCase] {
        do throws(SQLCaseFileError) {
            let file = try SQLCaseFile(named: name)
            if let onFile = file.groups.first(where: \.onFile) {
                throw SQLCaseFileError(
                    file: name, line: onFile.line,
                    problem: "a file setup's cases run in order on one file: run them with SQLPath.verify(casesIn:)")
            }
            return file.groups.flatMap(\.standaloneCases)
        } catch {
            return [SQLCase.unreadable(error)]
        }
    }
}
