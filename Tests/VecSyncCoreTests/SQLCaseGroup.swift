/// One setup of a case file and the cases that follow it (see `Tests/SQLCases/README.md`).
struct SQLCaseGroup: Sendable {
    /// The setup's SQL, each line ended by a newline; empty when there is none.
    var setup: String
    /// Whether the setup is a file setup: run once on a new database file, its cases then
    /// in order on that file, each on a new connection. Otherwise each case runs alone in
    /// memory, with the setup before its SQL.
    var onFile: Bool
    /// The cases, their SQL without the setup.
    var cases: [SQLCase]
    /// The line of the file the setup starts at (0 for cases before any setup).
    var line: Int

    /// The cases as each runs alone: the setup, then the case's SQL.
    var standaloneCases: [SQLCase] {
        cases.map { sqlCase in
            var copy = sqlCase
            copy.sql = setup + sqlCase.sql
            return copy
        }
    }
}
