import Testing

/// Every case of every file in `Tests/SQLCases/` (what each covers: its opening comment),
/// in this process and in the sqlite3 shell. A new `.cases` file runs here, and from Python
/// (`python/tests/test_sql_cases.py`), without a line of code; so do the SQL examples of the
/// README and of `docs/` (`SQLCaseFile+Docs.swift`).
@Suite("SQL case files")
struct SQLCaseFilesTests {
    @Test("Each case of a file, alone, prints what it says", arguments: SQLPath.allCases, SQLCaseFile.everyStandaloneCase)
    func eachCase(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }

    @Test(
        "The cases of a file with a file setup, in order on one database file, print what they say",
        arguments: SQLPath.allCases, SQLCaseFile.everySessionFile)
    func session(path: SQLPath, file: String) throws {
        try path.verify(casesIn: file)
    }

    @Test(
        "Each SQL example of README.md and docs/*.md prints what the page says",
        arguments: SQLPath.allCases, SQLCaseFile.everyDocExample)
    func docExample(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
