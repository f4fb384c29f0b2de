import Testing

/// Bad input gets one clear error and nothing else: no row, no crash, no silent
/// truncation. Each message names the function and the problem. Every case runs in-process
/// and in the sqlite3 shell.
@Suite("Bad vector input")
struct ExtensionBadInputTests {
    @Test(
        "Bad vector input is one clear error that names the function and the problem", arguments: SQLPath.allCases,
        SQLCaseFile.cases("bad-vector-input.cases"))
    func badInputIsOneClearError(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
