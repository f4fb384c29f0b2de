import Testing

/// sqlite-vec's functions, as sqlite-vec 0.1.9 answers them: int8 and bit vectors with their
/// subtypes, quantization, the L1 and hamming distances, slices, sums and `vec_each`.
///
/// Every expected value (Tests/SQLCases/sqlite-vec-functions.cases) is what sqlite-vec 0.1.9 (pip `sqlite-vec`) returned for the
/// same SQL; where sqlite-vec's error text differs, the case names the words of ours, and the
/// refusal itself is the same. Numbers are compared through `printf('%.17g', …)`, so both
/// ways of running the SQL print them alike. Every case runs in-process and in the shell.
@Suite("sqlite-vec functions")
struct SQLiteVecFunctionTests {
    @Test(
        "sqlite-vec's functions make, measure and take apart typed vectors as sqlite-vec does",
        arguments: SQLPath.allCases, SQLCaseFile.cases("sqlite-vec-functions.cases"))
    func functionsAnswerAsSqliteVec(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
