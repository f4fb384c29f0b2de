import Testing

/// What sqlite-vec 0.1.9 does with typed columns, primary keys and tables without one, done
/// the same way here (messages as sqlite-vec words them), in-process and in the shell.
@Suite("vec0 column types, keys and rowid as sqlite-vec has them")
struct Vec0SqliteVecSemanticsTests {
    @Test(arguments: SQLPath.allCases, SQLCaseFile.cases("vec0-sqlite-vec-semantics.cases"))
    func behavesAsSqliteVec(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
