/// Reads the lines of a case file into its groups (the format: `Tests/SQLCases/README.md`),
/// throwing at the first line that breaks the format.
struct SQLCaseFileParser {
    /// The file's name in `Tests/SQLCases/`, for errors and each case's origin.
    let file: String

    private var groups: [SQLCaseGroup] = []
    /// The setup being read or last read, and its cases so far.
    private var group = SQLCaseGroup(setup: "", onFile: false, cases: [], line: 0)
    private var setupLines: [String] = []
    private var inSetup = false
    private var seenGroup = false
    private var titles: Set<String> = []

    /// The case being read: its title and line, flags, SQL and expectation so far.
    private var title: String?
    private var caseLine = 0
    private var readOnly = false
    private var sqlLines: [String] = []
    private var rows: [String] = []
    private var errorWords: [String] = []
    private var noRows = false
    private var expecting = false

    /// The flags only the Python runner reads (`python/tests/test_sql_cases.py`), each
    /// followed by a reason.
    static let pythonFlags = ["-- python skips: ", "-- apsw skips: ", "-- apsw fails: "]

    init(file: String) {
        self.file = file
    }

    /// The groups of `text`, in order.
    mutating func parse(_ text: String) throws(SQLCaseFileError) -> [SQLCaseGroup] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        for (index, line) in lines.enumerated() {
            try read(line.hasSuffix("\r") ? String(line.dropLast()) : line, at: index + 1)
        }
        try finishCase()
        try finishGroup(at: lines.count)
        if groups.isEmpty {
            throw fault(0, "the file has no case (a case starts with `-- case: TITLE`)")
        }
        return groups
    }

    private func fault(_ line: Int, _ problem: String) -> SQLCaseFileError {
        SQLCaseFileError(file: file, line: line, problem: problem)
    }

    private mutating func read(_ line: String, at number: Int) throws(SQLCaseFileError) {
        if line.hasPrefix("-- case: ") {
            try startCase(String(line.dropFirst("-- case: ".count)), at: number)
        } else if line == "-- setup" || line == "-- file setup" {
            try finishCase()
            try finishGroup(at: number)
            group = SQLCaseGroup(setup: "", onFile: line == "-- file setup", cases: [], line: number)
            inSetup = true
            seenGroup = true
        } else if line == "-- read-only" || Self.pythonFlags.contains(where: line.hasPrefix) {
            guard title != nil, sqlLines.allSatisfy(\.isBlank), !expecting else {
                throw fault(number, "a flag (`\(line)`) belongs right after its `-- case:` line, before the SQL")
            }
            if line == "-- read-only" {
                readOnly = true
            } else if line.drop(while: { $0 != ":" }).dropFirst().isBlank {
                throw fault(number, "`\(line)` needs a reason")
            }
        } else if line == "-- row:" || line.hasPrefix("-- row: ") {
            try expect(line, at: number, allowed: errorWords.isEmpty && !noRows)
            rows.append(String(line.dropFirst(min(line.count, "-- row: ".count))))
        } else if line == "-- no rows" {
            try expect(line, at: number, allowed: errorWords.isEmpty && rows.isEmpty && !noRows)
            noRows = true
        } else if line.hasPrefix("-- error: ") {
            let words = String(line.dropFirst("-- error: ".count))
            guard !words.isBlank else { throw fault(number, "`-- error:` needs the words the message must contain") }
            try expect(line, at: number, allowed: rows.isEmpty && !noRows)
            errorWords.append(words)
        } else if Self.looksLikeAKeyLine(line) {
            throw fault(
                number,
                "`\(line)` looks like a case file's line but is not one: the lines are `-- case: TITLE`, `-- row: …`, "
                    + "`-- no rows`, `-- error: …`, `-- read-only`, `-- python skips: …`, `-- apsw skips: …`, "
                    + "`-- apsw fails: …`, `-- setup`, `-- file setup`")
        } else if title != nil {
            if !expecting {
                sqlLines.append(line)
            } else if !line.isBlank && !line.hasPrefix("--") {
                throw fault(
                    number,
                    "SQL after what case “\(title ?? "")” must print: a new case starts with `-- case: TITLE`")
            }
        } else if inSetup {
            setupLines.append(line)
        } else if !line.isBlank && !line.hasPrefix("--") {
            throw fault(number, "SQL before the first `-- case:` or `-- setup`")
        }
    }

    private mutating func startCase(_ rawTitle: String, at number: Int) throws(SQLCaseFileError) {
        try finishCase()
        let newTitle = rawTitle.trimmingBlanks
        guard !newTitle.isEmpty else { throw fault(number, "`-- case:` needs a title") }
        guard !titles.contains(newTitle) else { throw fault(number, "a second case titled “\(newTitle)”") }
        if inSetup {
            group.setup = Self.block(setupLines).map { $0 + "\n" }.joined()
            setupLines = []
            inSetup = false
        }
        titles.insert(newTitle)
        title = newTitle
        caseLine = number
    }

    private mutating func expect(_ line: String, at number: Int, allowed: Bool) throws(SQLCaseFileError) {
        guard let title else { throw fault(number, "`\(line)` outside a case") }
        guard !Self.block(sqlLines).isEmpty else {
            throw fault(number, "case “\(title)” has no SQL before what it must print")
        }
        guard allowed else {
            throw fault(
                number,
                "case “\(title)” mixes rows, `-- no rows` and `-- error:`: it prints rows or fails once, not both")
        }
        expecting = true
    }

    private mutating func finishCase() throws(SQLCaseFileError) {
        guard let title else { return }
        guard expecting else {
            throw fault(
                caseLine, "case “\(title)” does not say what it must print (`-- row:`, `-- no rows` or `-- error:`)")
        }
        let sql = Self.block(sqlLines).joined(separator: "\n")
        var sqlCase =
            errorWords.isEmpty
            ? SQLCase(title, sql, rows: rows) : SQLCase(title, sql, error: errorWords)
        sqlCase.readOnly = readOnly
        sqlCase.origin = "Tests/SQLCases/\(file):\(caseLine)"
        group.cases.append(sqlCase)
        self.title = nil
        readOnly = false
        sqlLines = []
        rows = []
        errorWords = []
        noRows = false
        expecting = false
    }

    private mutating func finishGroup(at number: Int) throws(SQLCaseFileError) {
        if group.cases.isEmpty {
            if seenGroup {
                throw fault(group.line, "a setup without a case after it (line \(number) ends it)")
            }
            return
        }
        groups.append(group)
    }

    /// `lines` without the blank lines at either end.
    private static func block(_ lines: [String]) -> [String] {
        guard let first = lines.firstIndex(where: { !$0.isBlank }),
            let last = lines.lastIndex(where: { !$0.isBlank })
        else { return [] }
        return Array(lines[first...last])
    }

    /// Whether `line` reads like one of the key lines, misspelt (`--case:`, `-- Rows:`,
    /// `-- readonly`): such a line is refused rather than taken as SQL.
    private static func looksLikeAKeyLine(_ line: String) -> Bool {
        let text = line.trimmingBlanks.lowercased()
        guard text.hasPrefix("--") else { return false }
        let rest = text.dropFirst(2).drop(while: { $0 == " " || $0 == "\t" })
        let keys = [
            "case", "row", "rows", "no rows", "no row", "error", "errors", "read-only", "readonly", "read only",
            "python skips", "python skip", "apsw skips", "apsw skip", "apsw fails", "apsw fail", "setup",
            "file setup",
        ]
        return keys.contains { key in
            guard rest.hasPrefix(key) else { return false }
            let after = rest.dropFirst(key.count)
            return after.isEmpty || after.first == ":"
        }
    }
}

extension StringProtocol {
    /// Whether the text is empty or only spaces and tabs.
    fileprivate var isBlank: Bool { allSatisfy { $0 == " " || $0 == "\t" } }

    /// The text without spaces and tabs at either end.
    fileprivate var trimmingBlanks: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
