import Testing

/// One way of running the extension: in this process from Swift, or in the `sqlite3` shell.
enum SQLPath: String, Sendable, CaseIterable, CustomTestStringConvertible {
    /// GRDB in this process, with the extension installed on the connection (`Configuration.vecSync()`).
    case inProcess = "in-process"
    /// The real `sqlite3` binary with `.load libvecsync`.
    case shell = "sqlite3 shell"

    var testDescription: String { rawValue }

    /// Runs `sql` this way and returns its rows and errors; with `readOnly`, on a connection
    /// that opened the file read-only (GRDB's `readonly`, the shell's `-readonly`).
    func run(_ sql: String, databasePath: String? = nil, readOnly: Bool = false) throws -> SQLRun {
        switch self {
        case .inProcess:
            try InProcess.run(sql, databasePath: databasePath, readOnly: readOnly)
        case .shell:
            try Shell.run(sql, databasePath: databasePath ?? ":memory:", readOnly: readOnly).run
        }
    }
}

/// What an SQL case must produce.
enum SQLExpectation: Sendable, CustomStringConvertible {
    /// Exactly these rows (columns joined with `|`, `NULL` for null), and no error.
    case rows([String])
    /// No row, and an error whose message contains each of these words (any case).
    case error(mentioning: [String])
    /// Nothing: the case file this case was to come from cannot be read.
    case unreadable(SQLCaseFileError)

    var description: String {
        switch self {
        case .rows(let rows):
            rows.isEmpty ? "no rows" : "rows " + rows.map(SQLRun.quoted).joined(separator: ", ")
        case .error(let words):
            "an error mentioning " + words.map(SQLRun.quoted).joined(separator: ", ")
        case .unreadable(let error):
            "a readable case file (\(error))"
        }
    }

    /// Whether `run` is what this expectation asks for.
    func isMet(by run: SQLRun) -> Bool {
        switch self {
        case .rows(let rows):
            return run.errors.isEmpty && run.rows == rows
        case .error(let words):
            guard run.rows.isEmpty, run.errors.count == 1, let message = run.errors.first else {
                return false
            }
            return words.allSatisfy { message.localizedCaseInsensitiveContains($0) }
        case .unreadable:
            return false
        }
    }
}

/// An SQL script and what it must produce, stated the way a bug report states it.
///
/// ```swift
/// let cases: [SQLCase] = [
///     SQLCase("l2 is Euclidean, not squared",
///             "SELECT vector_distance_l2('[0,0]', '[3,4]');", rows: ["5.0"]),
///     SQLCase("NULL is refused", "SELECT vector32(NULL);", error: ["vector32", "NULL"]),
/// ]
///
/// @Test(arguments: SQLPath.allCases, cases)
/// func behaves(path: SQLPath, sqlCase: SQLCase) { sqlCase.verify(path) }
/// ```
struct SQLCase: Sendable, CustomTestStringConvertible {
    /// What the case shows, in words.
    var title: String
    /// The statements, as typed into the shell.
    var sql: String
    /// What they must produce.
    var expected: SQLExpectation
    /// Whether the case runs on a connection that opened the file read-only.
    var readOnly = false
    /// Where the case is written, `Tests/SQLCases/<file>:<line>`, when it comes from a case file.
    var origin: String?

    /// A case that must return exactly `rows` and no error.
    init(_ title: String, _ sql: String, rows: [String]) {
        self.title = title
        self.sql = sql
        self.expected = .rows(rows)
    }

    /// A case that must fail with one error whose message contains every word of `error`.
    init(_ title: String, _ sql: String, error words: [String]) {
        self.title = title
        self.sql = sql
        self.expected = .error(mentioning: words)
    }

    /// The title, after the file and line it is written at when it comes from a case file.
    var testDescription: String {
        guard let origin else { return title }
        let place = origin.dropFirst("Tests/SQLCases/".count)
        return "\(place.hasPrefix("../../") ? place.dropFirst("../../".count) : place) \(title)"
    }

    /// A case that only fails, saying why its case file cannot be run, at the file's line.
    static func unreadable(_ error: SQLCaseFileError) -> SQLCase {
        var sqlCase = SQLCase(error.place, "", rows: [])
        sqlCase.expected = .unreadable(error)
        return sqlCase
    }

    /// The same case, run on a connection that opened the file read-only.
    var readingOnly: SQLCase {
        var copy = self
        copy.readOnly = true
        return copy
    }

    /// One case for each of `functions`: `SELECT f(arguments);` fails with an error naming
    /// the function and every word of `error`; each is titled "f refuses `what`".
    static func eachRefuses(_ functions: [String], _ what: String, arguments: String, error: [String]) -> [SQLCase] {
        functions.map { f in SQLCase("\(f) refuses \(what)", "SELECT \(f)(\(arguments));", error: [f] + error) }
    }

    /// Runs the case on `path` and records an issue that reads like a bug report when the
    /// outcome differs from the expectation (or the case could not run at all).
    func verify(
        _ path: SQLPath, databasePath: String? = nil, readOnly: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if case .unreadable(let error) = expected {
            Issue.record(
                "[\(path.rawValue)] cannot run the cases of \(error)",
                sourceLocation: SourceLocation(
                    fileID: "SQLCases/\(error.file)", filePath: SQLCaseFile.folder.appendingPathComponent(error.file).path,
                    line: max(error.line, 1), column: 1))
            return
        }
        // A plain `swift test` without a built extension (or with a shell that cannot load
        // it) skips the shell's half of each case: Shell.skipReason() has said why, once.
        if path == .shell, Shell.skipReason() != nil { return }
        let run: SQLRun
        do {
            run = try path.run(sql, databasePath: databasePath, readOnly: readOnly || self.readOnly)
        } catch {
            Issue.record(
                "[\(path.rawValue)] \(title): cannot run the SQL: \(error)\n\(report)",
                sourceLocation: sourceLocation)
            return
        }
        if !expected.isMet(by: run) {
            Issue.record(
                Comment(rawValue: "[\(path.rawValue)] \(title)\n\(report)\ngot:      \(run)"),
                sourceLocation: sourceLocation)
        }
    }

    /// The SQL and the expectation, for failure messages.
    var report: String {
        let lines = sql.split(separator: "\n").map { "  " + SQLRun.abbreviated(String($0)) }
        let place = origin.map { "case:     \($0)\n" } ?? ""
        return place + "SQL:\n" + lines.joined(separator: "\n") + "\nexpected: \(expected)"
    }
}
