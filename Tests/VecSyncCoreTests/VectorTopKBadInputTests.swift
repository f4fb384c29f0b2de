import Testing

/// Bad input to vector_top_k and libsql_vector_idx is one clear error, in-process and in
/// the shell.
@Suite("vector_top_k bad input")
struct VectorTopKBadInputTests {
    @Test(arguments: SQLPath.allCases, SQLCaseFile.cases("vector-top-k-bad-input.cases"))
    func vectorTopKBadInputIsOneClearError(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
