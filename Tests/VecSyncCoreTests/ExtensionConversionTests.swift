import Testing

/// Vectors in and out: text and blobs become F32 or F64 blobs, and blobs become text, as
/// libSQL and sqlite-vec define them. Every case runs in-process and in the sqlite3 shell.
@Suite("Vector conversions")
struct ExtensionConversionTests {
    /// The three names of the F32 constructor: libSQL's two and sqlite-vec's.
    static let f32Constructors = ["vector32", "vector", "vec_f32"]

    /// vector32, vector and vec_f32 make F32 blobs from text and blobs.
    static let f32Cases: [SQLCase] = f32Constructors.flatMap { f in
        [
            SQLCase(
                "\(f) reads JSON-like text as little-endian float32",
                "SELECT hex(\(f)('[1, 2.5, -3e-2]'));",
                rows: ["0000803F000020408FC2F5BC"]),
            SQLCase(
                "\(f) accepts blanks around every token, as libSQL does",
                "SELECT hex(\(f)(' [ 1 , 2 ] '));",
                rows: ["0000803F00000040"]),
            SQLCase(
                "\(f) accepts tabs, newlines and carriage returns between tokens",
                "SELECT hex(\(f)('[' || char(9) || '1,' || char(10) || '2' || char(13, 10) || ']'));",
                rows: ["0000803F00000040"]),
            SQLCase(
                "\(f) reads exponents, signs and bare fractions",
                "SELECT hex(\(f)('[1e2, -2.5E-1, +3, .5]'));",
                rows: ["0000C842000080BE000040400000003F"]),
            f == "vec_f32"
                ? SQLCase(
                    "vec_f32 refuses '[]': sqlite-vec has no empty vector",
                    "SELECT vec_f32('[]');", error: ["zero-length vectors are not supported"])
                : SQLCase(
                    "\(f) turns '[]' into the empty blob, as libSQL does",
                    "SELECT typeof(\(f)('[]')), length(\(f)('[]')), hex(\(f)('[]'));",
                    rows: ["blob|0|"]),
            SQLCase(
                "\(f) keeps the bytes of an F32 blob",
                "SELECT hex(\(f)(x'0000803F00000040'));",
                rows: ["0000803F00000040"]),
            f == "vec_f32"
                ? SQLCase(
                    "vec_f32 refuses the empty blob", "SELECT vec_f32(x'');",
                    error: ["zero-length vectors are not supported"])
                : SQLCase(
                    "\(f) accepts the empty blob as the empty vector",
                    "SELECT typeof(\(f)(x'')), length(\(f)(x''));",
                    rows: ["blob|0"]),
            SQLCase(
                "\(f) drops libSQL's trailing F32 type byte 0x01",
                "SELECT hex(\(f)(x'0000803F0000004001'));",
                rows: ["0000803F00000040"]),
            SQLCase(
                "\(f) narrows an F64 blob made by vector64",
                "SELECT hex(\(f)(vector64('[1, 2.5]')));",
                rows: ["0000803F00002040"]),
        ]
    }

    /// vector32 keeps every float32 exactly, up to the dimension limit.
    static let f32EdgeCases: [SQLCase] = [
        SQLCase(
            "vector32 keeps the sign of negative zero",
            "SELECT hex(vector32('[-0, 0, -0.0]'));",
            rows: ["000000800000000000000080"]),
        SQLCase(
            "vector32 reads the smallest float32 denormal printed with %.9g",
            "SELECT hex(vector32('[1.40129846e-45, -1.40129846e-45]'));",
            rows: ["0100000001000080"]),
        SQLCase(
            "vector32 reads FLT_MAX printed with %.9g, which rounds to FLT_MAX",
            "SELECT hex(vector32('[3.40282347e+38, -3.40282347e+38]'));",
            rows: ["FFFF7F7FFFFF7FFF"]),
        SQLCase(
            "vector32 rounds text to the nearest float32",
            "SELECT hex(vector32('[0.1, 16777217]'));",
            rows: ["CDCCCC3D0000804B"]),
        SQLCase(
            "vector32 accepts exactly 65,536 dimensions from a blob",
            "SELECT length(vector32(zeroblob(4*65536)));",
            rows: ["262144"]),
        SQLCase(
            "vector32 accepts exactly 65,536 dimensions from text",
            "SELECT length(vector32('\(ExtensionConversionTests.zerosText(65536))'));",
            rows: ["262144"]),
    ]

    /// vector64 writes libSQL's F64 layout.
    static let f64Cases: [SQLCase] = [
        SQLCase(
            "vector64 writes 8 little-endian bytes an element, then the type byte 0x02",
            "SELECT hex(vector64('[1, 2.5]')), length(vector64('[1, 2.5]'));",
            rows: ["000000000000F03F000000000000044002|17"]),
        SQLCase(
            "vector64 of '[]' is the type byte alone",
            "SELECT hex(vector64('[]'));",
            rows: ["02"]),
        SQLCase(
            "vector64 widens an F32 blob exactly",
            "SELECT hex(vector64(vector32('[0.5, -1]')));",
            rows: ["000000000000E03F000000000000F0BF02"]),
        SQLCase(
            "vector64 reads its own blobs back unchanged",
            "SELECT hex(vector64(vector64('[1, 2.5]')));",
            rows: ["000000000000F03F000000000000044002"]),
        SQLCase(
            "vector64 keeps double precision and range from text",
            "SELECT vector_extract(vector64('[0.1, 1e300, -2.5e-300]'));",
            rows: ["[0.1,1e+300,-2.5e-300]"]),
    ]

    /// vector_extract, vec_to_json and vec_length read vectors back.
    static let textCases: [SQLCase] = [
        SQLCase(
            "vector_extract prints an F32 vector as libSQL does",
            "SELECT vector_extract(vector32('[1, 2.5, -3e-2]'));",
            rows: ["[1,2.5,-0.03]"]),
        SQLCase(
            "vector_extract reads text directly",
            "SELECT vector_extract('[ 4 , -0.5 ]');",
            rows: ["[4,-0.5]"]),
        SQLCase(
            "vector_extract uses %g: six significant digits, exponent when large or small",
            "SELECT vector_extract(vector32('[123456789, 1e-7, 0.1, -100000, 1000000]'));",
            rows: ["[1.23457e+08,1e-07,0.1,-100000,1e+06]"]),
        SQLCase(
            "vector_extract prints an F64 vector with %g",
            "SELECT vector_extract(vector64('[123456789, 0.1, -3]'));",
            rows: ["[1.23457e+08,0.1,-3]"]),
        SQLCase(
            "vector_extract of the empty vector is []",
            "SELECT vector_extract(vector32('[]')), vector_extract(vector64('[]'));",
            rows: ["[]|[]"]),
        SQLCase(
            "vector_extract reads a blob with libSQL's F32 type byte",
            "SELECT vector_extract(x'0000803F0000004001');",
            rows: ["[1,2]"]),
        SQLCase(
            "vec_to_json prints each element with %f, as sqlite-vec does",
            "SELECT vec_to_json('[1, -2.5, 0.125]');",
            rows: ["[1.000000,-2.500000,0.125000]"]),
        SQLCase(
            "vec_to_json reads F32 and F64 blobs",
            "SELECT vec_to_json(vector32('[0.5]')), vec_to_json(vector64('[0.25, 3]'));",
            rows: ["[0.500000]|[0.250000,3.000000]"]),
        SQLCase(
            "vec_to_json refuses the empty vector, as sqlite-vec does",
            "SELECT vec_to_json(x'');",
            error: ["vec_to_json", "zero-length vectors are not supported"]),
        SQLCase(
            "vec_length counts the elements of text, F32 and F64 vectors",
            "SELECT vec_length('[1,2,3]'), vec_length(vector32('[1,2]')), "
                + "vec_length(vector64('[1,2,3,4]')), vec_length(x'0000803F01');",
            rows: ["3|2|4|1"]),
        SQLCase(
            "vec_length refuses the empty vector, as sqlite-vec does",
            "SELECT vec_length('[]');",
            error: ["vec_length", "zero-length vectors are not supported"]),
        SQLCase(
            "vec_length counts up to 65,536 elements",
            "SELECT vec_length(zeroblob(4*65536));",
            rows: ["65536"]),
    ]

    /// `'[0,0,…]'` with `count` zeros, for the dimension limit.
    static func zerosText(_ count: Int) -> String {
        "[" + Array(repeating: "0", count: count).joined(separator: ",") + "]"
    }

    /// Every case of every group above, each in-process and in the sqlite3 shell.
    static let everyCase: [SQLCase] = f32Cases + f32EdgeCases + f64Cases + textCases

    @Test("Vectors are made from text and blobs, and read back, exactly", arguments: SQLPath.allCases, everyCase)
    func vectorsConvertExactly(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
