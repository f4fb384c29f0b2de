import Testing

/// Bad input gets one clear error and nothing else: no row, no crash, no silent
/// truncation. Each message names the function and the problem. Every case runs in-process
/// and in the sqlite3 shell.
@Suite("Bad vector input")
struct ExtensionBadInputTests {
    /// Malformed vector text is an error that quotes it.
    static let malformedText: [SQLCase] = [
        SQLCase(
            "two commas in a row are refused", "SELECT vector32('[1,,2]');",
            error: ["vector32", "invalid vector text", "'[1,,2]'", "expected a number"]),
        SQLCase(
            "a list without brackets is refused", "SELECT vector32('1,2');",
            error: ["vector32", "invalid vector text", "must start with '['"]),
        SQLCase(
            "a number with two decimal points is refused", "SELECT vector32('[1.1.1]');",
            error: ["vector32", "invalid vector text", "expected ',' or ']'"]),
        SQLCase(
            "a missing closing bracket is refused", "SELECT vector('[1,2');",
            error: ["vector", "invalid vector text", "expected ',' or ']'"]),
        SQLCase(
            "text after the closing bracket is refused", "SELECT vec_f32('[1,2] x');",
            error: ["vec_f32", "unexpected text after ']'"]),
        SQLCase(
            "a trailing comma is refused", "SELECT vector32('[1,]');",
            error: ["vector32", "expected a number"]),
        SQLCase(
            "the empty string is refused", "SELECT vector32('');",
            error: ["vector32", "must start with '['"]),
        SQLCase(
            "an exponent without digits is refused", "SELECT vector32('[1e]');",
            error: ["vector32", "invalid vector text"]),
        SQLCase(
            "NaN written as text is refused", "SELECT vector32('[nan]');",
            error: ["vector32", "expected a number"]),
        SQLCase(
            "infinity written as text is refused", "SELECT vector32('[1, inf]');",
            error: ["vector32", "expected a number"]),
        SQLCase(
            "malformed text is refused by vector_extract too", "SELECT vector_extract('[1,,2]');",
            error: ["vector_extract", "invalid vector text"]),
        SQLCase(
            "malformed text is refused by a distance", "SELECT vector_distance_cos('[1,2]', '1,2');",
            error: ["vector_distance_cos", "must start with '['"]),
        SQLCase(
            "malformed text is refused by vector64", "SELECT vector64('[1 2]');",
            error: ["vector64", "expected ',' or ']'"]),
    ]

    /// NaN, infinities and values beyond float32's range are refused.
    static let nonFinite: [SQLCase] = [
        SQLCase(
            "a NaN element of an F32 blob is refused", "SELECT vector32(x'0000c07f');",
            error: ["vector32", "element 0", "NaN"]),
        SQLCase(
            "a NaN element is refused wherever it sits", "SELECT vec_length(x'0000803F0000c07f');",
            error: ["vec_length", "element 1", "NaN"]),
        SQLCase(
            "a NaN element is refused by a distance",
            "SELECT vector_distance_l2(x'0000c07f', x'0000803F');",
            error: ["vector_distance_l2", "NaN"]),
        SQLCase(
            "an infinite element of an F32 blob is refused", "SELECT vector32(x'0000807f');",
            error: ["vector32", "element 0", "infinite"]),
        SQLCase(
            "a NaN element of an F64 blob is refused", "SELECT vector64(x'000000000000F87F02');",
            error: ["vector64", "element 0", "NaN"]),
        SQLCase(
            "a value beyond float32's range is refused, not stored as Inf",
            "SELECT vector32('[1e39]');",
            error: ["vector32", "element 0", "out of float32 range"]),
        SQLCase(
            "a negative value beyond float32's range is refused", "SELECT vec_f32('[1, -1e39]');",
            error: ["vec_f32", "element 1", "out of float32 range"]),
        SQLCase(
            "a value beyond double's range is refused", "SELECT vector64('[1e400]');",
            error: ["vector64", "out of range"]),
        SQLCase(
            "narrowing an F64 vector beyond float32's range is refused",
            "SELECT vector32(vector64('[1e300]'));",
            error: ["vector32", "out of float32 range"]),
    ]

    /// A blob of the wrong length or an unsupported libSQL type is refused.
    static let badBlobs: [SQLCase] = [
        SQLCase(
            "a 5-byte blob is not a float32 vector", "SELECT vector32(x'0000803F00');",
            error: ["vector32", "5 bytes", "multiple of 4"]),
        SQLCase(
            "a 6-byte blob is not a float32 vector", "SELECT vector32(x'0000803F0000');",
            error: ["vector32", "6 bytes", "multiple of 4"]),
        SQLCase(
            "a 3-byte blob is not a float32 vector", "SELECT vector_extract(x'000000');",
            error: ["vector_extract", "3 bytes", "multiple of 4"]),
        SQLCase(
            "a 7-byte blob is refused by a distance",
            "SELECT vector_distance_cos(x'0000803F000000', x'0000803F');",
            error: ["vector_distance_cos", "7 bytes", "multiple of 4"]),
        SQLCase(
            "a blob too short for libSQL's FLOAT8 layout is named and refused", "SELECT vector32(x'0000803F04');",
            error: ["vector32", "5 bytes", "FLOAT8"]),
        SQLCase(
            "a blob whose FLOAT1BIT counts do not add up is named and refused", "SELECT vec_length(x'FF0003');",
            error: ["vec_length", "FLOAT1BIT"]),
    ]

    /// NULL, integers and reals are not vectors.
    static let nullAndWrongTypes: [SQLCase] =
        [
            "vector32", "vector", "vec_f32", "vector64", "vector_extract", "vec_to_json",
            "vec_length", "vec_normalize",
        ].map { f in
            SQLCase("\(f)(NULL) is an error", "SELECT \(f)(NULL);", error: [f, "NULL"])
        }
        + ExtensionMeasureTests.cosineFunctions.flatMap { f in
            [
                SQLCase(
                    "\(f) with a NULL first argument is an error", "SELECT \(f)(NULL, '[1]');",
                    error: [f, "NULL"]),
                SQLCase(
                    "\(f) with a NULL second argument is an error", "SELECT \(f)('[1]', NULL);",
                    error: [f, "NULL"]),
            ]
        }
        + [
            SQLCase(
                "an integer is not a vector", "SELECT vector32(1);",
                error: ["vector32", "integer", "expected text"]),
            SQLCase(
                "an integer is not a vector for a distance", "SELECT vector_distance_l2(1, '[1]');",
                error: ["vector_distance_l2", "integer"]),
            SQLCase(
                "an integer is not a vector for vec_length", "SELECT vec_length(42);",
                error: ["vec_length", "integer"]),
            SQLCase(
                "a real number is not a vector", "SELECT vector64(1.5);",
                error: ["vector64", "real number"]),
        ]

    /// Distances need two non-empty vectors of the same length.
    static let incomparable: [SQLCase] =
        (ExtensionMeasureTests.cosineFunctions + ExtensionMeasureTests.l2Functions).flatMap { f in
            [
                SQLCase(
                    "\(f) of vectors of different lengths names both lengths",
                    "SELECT \(f)('[1,2]', '[1,2,3]');",
                    error: [f, "different dimensions", "2 and 3"]),
                SQLCase(
                    "\(f) of blobs of different lengths names both lengths",
                    "SELECT \(f)(vector32('[1,2,3,4]'), x'0000803F');",
                    error: [f, "different dimensions", "4 and 1"]),
                SQLCase(
                    "\(f) of empty vectors is undefined",
                    "SELECT \(f)('[]', vector32('[]'));",
                    // sqlite-vec's names refuse zero-length vectors as sqlite-vec does.
                    error: [f, f.hasPrefix("vec_") ? "zero-length vectors are not supported" : "empty"]),
            ]
        }

    /// More than 65,536 dimensions is an error.
    static let tooManyDimensions: [SQLCase] = [
        SQLCase(
            "an F32 blob of 65,537 dimensions is refused",
            "SELECT vector32(zeroblob(4*65537));",
            error: ["vector32", "65537", "65536"]),
        SQLCase(
            "text of 65,537 numbers is refused",
            "SELECT vector32('\(ExtensionConversionTests.zerosText(65537))');",
            error: ["vector32", "more than 65536 dimensions"]),
        SQLCase(
            "an F64 blob of 65,537 dimensions is refused",
            // || makes text; CAST keeps the bytes and makes the result a blob again.
            "SELECT vector64(CAST(zeroblob(8*65537) || x'02' AS BLOB));",
            error: ["vector64", "65537", "65536"]),
        SQLCase(
            "a distance between vectors of 65,537 dimensions is refused",
            "SELECT vector_distance_l2(zeroblob(4*65537), zeroblob(4*65537));",
            error: ["vector_distance_l2", "65537", "65536"]),
        SQLCase(
            "vec_length of 65,537 dimensions is refused, not truncated",
            "SELECT vec_length(zeroblob(4*65537));",
            error: ["vec_length", "65537"]),
    ]

    /// Every case of every group above, each in-process and in the sqlite3 shell.
    static let everyCase: [SQLCase] =
        malformedText + nonFinite + badBlobs + nullAndWrongTypes + incomparable + tooManyDimensions

    @Test(
        "Bad vector input is one clear error that names the function and the problem", arguments: SQLPath.allCases,
        everyCase)
    func badInputIsOneClearError(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
