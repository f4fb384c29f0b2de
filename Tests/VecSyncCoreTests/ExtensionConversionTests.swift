import Testing

/// Vectors in and out: text and blobs become F32 or F64 blobs, and blobs become text, as
/// libSQL and sqlite-vec define them. Every case runs in-process and in the sqlite3 shell.
@Suite("Vector conversions")
struct ExtensionConversionTests {
    @Test(
        "Vectors are made from text and blobs, and read back, exactly", arguments: SQLPath.allCases,
        SQLCaseFile.cases("vector-conversions.cases"))
    func vectorsConvertExactly(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
