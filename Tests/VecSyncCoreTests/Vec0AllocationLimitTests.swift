import Testing

/// No statement allocates without bound: a vec0 block (`chunk_size` vectors) takes at most
/// 256 MiB (`VEC0_MAX_BLOCK_BYTES`), and the errors name the limit and what would fit.
@Suite("vec0 allocations are bounded, with errors that name the limit")
struct Vec0AllocationLimitTests {
    @Test("Block and batch limits", arguments: SQLPath.allCases, SQLCaseFile.cases("vec0-allocation-limits.cases"))
    func limits(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
