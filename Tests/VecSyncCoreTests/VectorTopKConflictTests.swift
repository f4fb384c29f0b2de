import Testing

/// A libSQL vector index stays in step with its table through every way SQLite resolves a
/// conflict: OR IGNORE and upserts keep the row's index entry, OR REPLACE swaps it, a
/// replacement with a NULL embedding removes it.
@Suite("vector_top_k through conflict resolution")
struct VectorTopKConflictTests {
    @Test(
        "The index follows the table through conflicts", arguments: SQLPath.allCases,
        SQLCaseFile.cases("vector-top-k-conflicts.cases"))
    func indexFollowsConflicts(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
