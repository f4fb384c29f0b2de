import Testing

/// sqlite-vec's functions, as sqlite-vec 0.1.9 answers them: int8 and bit vectors with their
/// subtypes, quantization, the L1 and hamming distances, slices, sums and `vec_each`.
///
/// Every expected value below is what sqlite-vec 0.1.9 (pip `sqlite-vec`) returned for the
/// same SQL; where sqlite-vec's error text differs, the case names the words of ours, and the
/// refusal itself is the same. Numbers are compared through `printf('%.17g', …)`, so both
/// ways of running the SQL print them alike. Every case runs in-process and in the shell.
@Suite("sqlite-vec functions")
struct SQLiteVecFunctionTests {
    /// vec_int8, vec_bit and vec_type make and name typed vectors.
    static let constructorCases: [SQLCase] = [
        SQLCase(
            "vec_int8 reads JSON integers into one byte each and marks them int8",
            "SELECT hex(vec_int8('[1, 2, -3]')), vec_type(vec_int8('[1, 2, -3]')), vec_length(vec_int8('[1, 2, -3]'));",
            rows: ["0102FD|int8|3"]),
        SQLCase(
            "vec_int8 takes the whole int8 range and blanks between tokens",
            "SELECT hex(vec_int8(' [-128, 127 ] '));",
            rows: ["807F"]),
        SQLCase(
            "vec_int8 keeps a blob's bytes as they are",
            "SELECT hex(vec_int8(x'0102')), hex(vec_int8(vec_f32('[1]'))), vec_type(vec_int8(vec_bit(x'01')));",
            rows: ["0102|0000803F|int8"]),
        SQLCase(
            "vec_int8 refuses an element beyond [-128, 127]",
            "SELECT vec_int8('[1, 2, 300]');", error: ["vec_int8", "element 2", "out of int8 range"]),
        SQLCase("vec_int8 refuses -129", "SELECT vec_int8('[-129]');", error: ["vec_int8", "out of int8 range"]),
        SQLCase("vec_int8 refuses a fraction", "SELECT vec_int8('[1.5]');", error: ["vec_int8", "not an integer"]),
        SQLCase(
            "vec_int8 refuses '[]'", "SELECT vec_int8('[]');",
            error: ["vec_int8", "zero-length vectors are not supported"]),
        SQLCase(
            "vec_int8 refuses the empty blob", "SELECT vec_int8(x'');",
            error: ["vec_int8", "zero-length vectors are not supported"]),
        SQLCase("vec_int8 refuses NULL", "SELECT vec_int8(NULL);", error: ["vec_int8", "NULL"]),
        SQLCase(
            "vec_bit keeps a blob as 8 bits a byte",
            "SELECT hex(vec_bit(x'f0')), vec_length(vec_bit(x'f0')), vec_type(vec_bit(x'f0')), vec_length(vec_bit(x'0102'));",
            rows: ["F0|8|bit|16"]),
        SQLCase("vec_bit refuses text", "SELECT vec_bit('[1,0]');", error: ["vec_bit", "blob"]),
        SQLCase("vec_bit refuses NULL", "SELECT vec_bit(NULL);", error: ["vec_bit", "NULL"]),
        SQLCase(
            "vec_bit refuses the empty blob", "SELECT vec_bit(x'');",
            error: ["vec_bit", "zero-length vectors are not supported"]),
        SQLCase(
            "vec_type names float32 for text, plain blobs and vec_f32",
            "SELECT vec_type('[1]'), vec_type(x'00000000'), vec_type(vec_f32('[1]'));",
            rows: ["float32|float32|float32"]),
        SQLCase("vec_type refuses NULL", "SELECT vec_type(NULL);", error: ["vec_type", "NULL"]),
        SQLCase(
            "vec_to_json prints int8 as integers and bits as 0/1, least significant first",
            "SELECT vec_to_json(vec_int8('[1, -2]')), vec_to_json(vec_bit(x'05'));",
            rows: ["[1,-2]|[1,0,1,0,0,0,0,0]"]),
        SQLCase(
            "a stored int8 vector is a float32 blob again: subtypes do not survive a table",
            """
            CREATE TABLE t(v);
            INSERT INTO t VALUES (vec_int8('[1, 2, 3, 4]'));
            SELECT vec_type(v), vec_type(vec_int8(v)) FROM t;
            """,
            rows: ["float32|int8"]),
    ]

    /// quantization gives sqlite-vec's bytes.
    static let quantizeCases: [SQLCase] = [
        SQLCase(
            "vec_quantize_binary sets bit i when element i is positive",
            "SELECT hex(vec_quantize_binary('[1, -1, 0.5, -0.5, 0, 1, 1, -1]')), vec_type(vec_quantize_binary('[1, -1, 0.5, -0.5, 0, 1, 1, -1]'));",
            rows: ["65|bit"]),
        SQLCase(
            "vec_quantize_binary of int8 vectors",
            "SELECT hex(vec_quantize_binary(vec_int8('[1, -1, 0, 2, 3, 4, 5, -6]')));",
            rows: ["79"]),
        SQLCase(
            "vec_quantize_binary needs a multiple of 8 elements",
            "SELECT vec_quantize_binary('[1, -1, 0.5]');", error: ["vec_quantize_binary", "divisible by 8"]),
        SQLCase(
            "vec_quantize_binary refuses a bit vector",
            "SELECT vec_quantize_binary(vec_bit(x'ff'));", error: ["vec_quantize_binary", "bit"]),
        SQLCase(
            "vec_quantize_int8 maps [-1, 1] onto int8 and clamps outside",
            "SELECT vec_to_json(vec_quantize_int8('[0.1, -0.2, 1, -1, 0.5, 0, 2, -2]', 'unit')), vec_type(vec_quantize_int8('[0.1]', 'unit'));",
            rows: ["[12,-26,126,-128,63,0,127,-128]|int8"]),
        SQLCase(
            "vec_quantize_int8 rounds as sqlite-vec does near the steps",
            "SELECT hex(vec_quantize_int8('[0.99, 0.999, -0.99, -0.999, 0.003, -0.003, 0.0039, 0.004]', 'unit'));",
            rows: ["7D7E828100000000"]),
        SQLCase(
            "vec_quantize_int8 takes 'unit' in any case",
            "SELECT hex(vec_quantize_int8('[1, 2]', 'UNIT'));", rows: ["7E7F"]),
        SQLCase(
            "vec_quantize_int8 refuses another range",
            "SELECT vec_quantize_int8('[0.1]', 'foo');", error: ["vec_quantize_int8", "'unit'"]),
        SQLCase(
            "vec_quantize_int8 refuses an int8 vector",
            "SELECT vec_quantize_int8(vec_int8('[1, 2]'), 'unit');", error: ["vec_quantize_int8", "int8"]),
    ]

    /// distances over float32, int8 and bit vectors give sqlite-vec's figures.
    static let distanceCases: [SQLCase] = [
        SQLCase(
            "vec_distance_hamming counts the differing bits, as a REAL",
            "SELECT vec_distance_hamming(vec_bit(x'ff'), vec_bit(x'0f')), typeof(vec_distance_hamming(vec_bit(x'ff'), vec_bit(x'0f')));",
            rows: ["4.0|real"]),
        SQLCase(
            "vec_distance_hamming refuses float32 vectors",
            "SELECT vec_distance_hamming('[1]', '[2]');", error: ["vec_distance_hamming", "bit vectors", "float32"]),
        SQLCase(
            "vec_distance_hamming refuses int8 vectors",
            "SELECT vec_distance_hamming(vec_int8('[1]'), vec_int8('[2]'));", error: ["vec_distance_hamming", "int8"]),
        SQLCase(
            "vec_distance_hamming refuses bit vectors of different lengths",
            "SELECT vec_distance_hamming(vec_bit(x'ff'), vec_bit(x'0f00'));",
            error: ["vec_distance_hamming", "different dimensions", "8 and 16"]),
        SQLCase(
            "vec_distance_hamming refuses a bit vector beside a float32 one",
            "SELECT vec_distance_hamming(vec_bit(x'01'), '[1]');", error: ["different types", "bit", "float32"]),
        SQLCase(
            "vec_distance_l1 of float32 vectors is a REAL",
            "SELECT vec_distance_l1('[1, 2]', '[3, 5]'), typeof(vec_distance_l1('[1, 2]', '[3, 5]'));",
            rows: ["5.0|real"]),
        SQLCase(
            "vec_distance_l1 sums the float32 differences in double precision",
            "SELECT printf('%.17g', vec_distance_l1('[0.1, 0.2, 0.3]', '[0.4, 0.5, 0.7]'));",
            rows: ["0.9999999776482582"]),
        SQLCase(
            "vec_distance_l1 of int8 vectors is an INTEGER",
            "SELECT vec_distance_l1(vec_int8('[1, 2]'), vec_int8('[3, -5]')), typeof(vec_distance_l1(vec_int8('[1, 2]'), vec_int8('[3, -5]'))), vec_distance_l1(vec_int8('[-128, 127]'), vec_int8('[127, -128]'));",
            rows: ["9|integer|510"]),
        SQLCase(
            "vec_distance_l1 refuses int8 beside float32",
            "SELECT vec_distance_l1(vec_int8('[1, 2]'), '[3, -5]');",
            error: ["vec_distance_l1", "different types", "int8", "float32"]),
        SQLCase(
            "vec_distance_l2 of int8 vectors",
            "SELECT vec_distance_l2(vec_int8('[1, 2]'), vec_int8('[4, 6]')), printf('%.17g', vec_distance_l2(vec_int8('[1, 2, 3]'), vec_int8('[-7, 50, 127]')));",
            rows: ["5.0|133.2066040039062"]),
        SQLCase(
            "vec_distance_cosine of int8 vectors",
            "SELECT printf('%.17g', vec_distance_cosine(vec_int8('[1, 2]'), vec_int8('[4, 6]'))), printf('%.17g', vec_distance_cosine(vec_int8('[1, 2, 3]'), vec_int8('[-7, 50, 127]')));",
            rows: ["0.007722123060375452|0.07306530326604843"]),
        SQLCase(
            "vec_distance_cosine of an all-zero int8 vector is NULL",
            "SELECT vec_distance_cosine(vec_int8('[0, 0]'), vec_int8('[1, 1]'));", rows: ["NULL"]),
        SQLCase(
            "vec_distance_l2 refuses bit vectors",
            "SELECT vec_distance_l2(vec_bit(x'01'), vec_bit(x'03'));",
            error: ["vec_distance_l2", "bit vectors", "hamming"]),
        SQLCase(
            "vec_distance_cosine refuses bit vectors",
            "SELECT vec_distance_cosine(vec_bit(x'01'), vec_bit(x'03'));",
            error: ["vec_distance_cosine", "bit vectors"]),
        SQLCase(
            "vec_distance_l1 refuses bit vectors",
            "SELECT vec_distance_l1(vec_bit(x'01'), vec_bit(x'03'));", error: ["vec_distance_l1", "bit vectors"]),
        SQLCase(
            "vec_distance_l2 refuses vectors of different lengths",
            "SELECT vec_distance_l2('[1, 2]', '[1]');", error: ["vec_distance_l2", "different dimensions", "2 and 1"]),
        SQLCase(
            "vec_distance_l2 refuses empty vectors",
            "SELECT vec_distance_l2('[]', '[]');", error: ["vec_distance_l2", "zero-length vectors are not supported"]),
        SQLCase(
            "vec_distance_l2 and vec_distance_cosine of float32 vectors sum in float32, as sqlite-vec",
            "SELECT printf('%.17g', vec_distance_l2('[0.1, 0.2, 0.3]', '[0.4, 0.5, 0.7]')), printf('%.17g', vec_distance_cosine('[0.1, 0.2, 0.3]', '[0.4, 0.5, 0.7]'));",
            rows: ["0.5830951929092407|0.01398667693138122"]),
        // Eight-element vectors drawn at random (seed 12); sqlite-vec's answers.
        SQLCase(
            "vec_distance_l1, l2 and cosine agree with sqlite-vec on random vectors",
            """
            SELECT printf('%.17g', vec_distance_l1('[-0.076, 0.472, 0.499, -1.072, -1.467, -0.376, -0.678, 0.931]', '[0.572, 0.304, 0.175, 0.484, -1.064, -0.18, -1.013, 1.218]'));
            SELECT printf('%.17g', vec_distance_l2(vec_int8('[-98, -26, -90, 44, 79, -84, -119, -97]'), vec_int8('[-14, -82, 88, 99, -71, 88, -59, 32]')));
            SELECT printf('%.17g', vec_distance_cosine(vec_int8('[-98, -26, -90, 44, 79, -84, -119, -97]'), vec_int8('[-14, -82, 88, 99, -71, 88, -59, 32]')));
            SELECT printf('%.17g', vec_distance_l1('[1.146, 0.174, 1.428, 1.157, 0.165, 0.022, -1.249, 0.322]', '[0.504, -0.091, 0.328, 0.123, 0.422, -1.252, -0.924, 0.862]'));
            SELECT printf('%.17g', vec_distance_l2(vec_int8('[5, 54, 57, 69, 30, -70, 1, -8]'), vec_int8('[43, 58, 62, -37, -114, 67, 92, -112]')));
            SELECT printf('%.17g', vec_distance_cosine(vec_int8('[5, 54, 57, 69, 30, -70, 1, -8]'), vec_int8('[43, 58, 62, -37, -114, 67, 92, -112]')));
            SELECT printf('%.17g', vec_distance_l1('[0.057, -0.833, -0.218, -0.335, 0.816, -1.192, 0.15, -0.966]', '[0.588, -1.389, -0.67, -0.467, 0.411, -1.344, -0.122, -0.874]'));
            SELECT printf('%.17g', vec_distance_cosine(vec_int8('[16, 105, 115, 118, -6, -43, 109, 58]'), vec_int8('[-35, -32, -16, -125, 9, 46, -37, -5]')));
            """,
            rows: [
                "3.917000152170658", "342.3828125", "1.187132239341735", "5.436999797821044",
                "267.0636596679687", "1.097415089607238", "2.592000011354684", "1.773331761360168",
            ]),
        SQLCase(
            "vec_quantize_int8, vec_normalize and vec_quantize_binary agree with sqlite-vec on random vectors",
            """
            SELECT hex(vec_quantize_int8('[-0.076, 0.472, 0.499, -1.072, -1.467, -0.376, -0.678, 0.931]', 'unit'));
            SELECT hex(vec_normalize('[-0.076, 0.472, 0.499, -1.072, -1.467, -0.376, -0.678, 0.931]'));
            SELECT hex(vec_quantize_binary('[-0.076, 0.472, 0.499, -1.072, -1.467, -0.376, -0.678, 0.931]'));
            SELECT hex(vec_quantize_int8('[1.146, 0.174, 1.428, 1.157, 0.165, 0.022, -1.249, 0.322]', 'unit'));
            SELECT hex(vec_normalize('[1.146, 0.174, 1.428, 1.157, 0.165, 0.022, -1.249, 0.322]'));
            SELECT hex(vec_quantize_int8('[0.057, -0.833, -0.218, -0.335, 0.816, -1.192, 0.15, -0.966]', 'unit'));
            SELECT hex(vec_normalize('[0.057, -0.833, -0.218, -0.335, 0.816, -1.192, 0.15, -0.966]'));
            """,
            rows: [
                "F63B3F8080D0AA76", "6DE707BD4502533E4C145F3EC89EEFBEE2F423BF801728BE048D97BE5F1AD03E", "86",
                "7F157F7F14028028", "C2B3E73E3AB88C3DE45B103F1AEDE93EE870853D4D560E3CED86FCBEC334023E",
                "0696E4D567801285", "F877EC3C2DFCD7BEE218E2BDB3B82DBEC393D33ECA881ABF4C929B3D5678FABE",
            ]),
    ]

    /// slices, sums and differences keep the type.
    static let arithmeticCases: [SQLCase] = [
        SQLCase(
            "vec_slice keeps elements start to end - 1, of the same type",
            "SELECT vec_to_json(vec_slice('[1, 2, 3, 4]', 1, 3)), vec_type(vec_slice('[1, 2, 3, 4]', 1, 3)), vec_to_json(vec_slice(vec_int8('[1, 2, 3, 4]'), 1, 3)), vec_type(vec_slice(vec_int8('[1, 2, 3, 4]'), 1, 3));",
            rows: ["[2.000000,3.000000]|float32|[2,3]|int8"]),
        SQLCase(
            "vec_slice of a bit vector cuts whole bytes",
            "SELECT hex(vec_slice(vec_bit(x'ff00ff'), 8, 16)), vec_length(vec_slice(vec_bit(x'ff00ff'), 8, 24)), vec_type(vec_slice(vec_bit(x'ff00ff'), 0, 8));",
            rows: ["00|16|bit"]),
        SQLCase(
            "vec_slice refuses a bit slice off a byte boundary",
            "SELECT vec_slice(vec_bit(x'ff00ff'), 1, 16);", error: ["vec_slice", "multiples of 8"]),
        SQLCase(
            "vec_slice refuses start after end",
            "SELECT vec_slice('[1, 2, 3, 4]', 3, 1);", error: ["vec_slice", "start (3) is after end (1)"]),
        SQLCase(
            "vec_slice refuses an empty slice",
            "SELECT vec_slice('[1, 2, 3, 4]', 2, 2);", error: ["vec_slice", "zero-length"]),
        SQLCase(
            "vec_slice refuses a negative start",
            "SELECT vec_slice('[1, 2, 3, 4]', -1, 2);", error: ["vec_slice", "negative"]),
        SQLCase(
            "vec_slice refuses an end beyond the vector",
            "SELECT vec_slice('[1, 2, 3, 4]', 0, 5);", error: ["vec_slice", "beyond", "4 dimensions"]),
        SQLCase(
            "vec_add and vec_sub work element by element on float32",
            "SELECT vec_to_json(vec_add('[1, 2]', '[3, 4]')), vec_type(vec_add('[1, 2]', '[3, 4]')), vec_to_json(vec_sub('[1, 2]', '[3, 5]'));",
            rows: ["[4.000000,6.000000]|float32|[-2.000000,-3.000000]"]),
        SQLCase(
            "vec_add and vec_sub of int8 wrap around, as sqlite-vec's do",
            "SELECT vec_to_json(vec_add(vec_int8('[100, 2]'), vec_int8('[100, 4]'))), vec_to_json(vec_sub(vec_int8('[-100, 2]'), vec_int8('[100, 4]'))), vec_type(vec_add(vec_int8('[1]'), vec_int8('[1]')));",
            rows: ["[-56,6]|[56,-2]|int8"]),
        SQLCase(
            "vec_add refuses bit vectors", "SELECT vec_add(vec_bit(x'01'), vec_bit(x'01'));",
            error: ["vec_add", "bit vectors"]),
        SQLCase(
            "vec_sub refuses bit vectors", "SELECT vec_sub(vec_bit(x'01'), vec_bit(x'01'));",
            error: ["vec_sub", "bit vectors"]),
        SQLCase(
            "vec_add refuses vectors of different lengths", "SELECT vec_add('[1, 2]', '[1]');",
            error: ["vec_add", "different dimensions"]),
        SQLCase(
            "vec_add refuses int8 beside float32", "SELECT vec_add(vec_int8('[1, 2]'), '[1, 2]');",
            error: ["vec_add", "different types"]),
        SQLCase(
            "vec_normalize refuses an int8 vector", "SELECT vec_normalize(vec_int8('[3, 4]'));",
            error: ["vec_normalize", "int8"]),
        SQLCase(
            "vec_normalize returns a float32 vector",
            "SELECT hex(vec_normalize('[3, 4]')), vec_type(vec_normalize('[3, 4]'));",
            rows: ["9A99193FCDCC4C3F|float32"]),
    ]

    /// vec_each lists the elements of a vector.
    static let eachCases: [SQLCase] = [
        SQLCase(
            "vec_each lists a float32 vector's elements as REALs, rowid from 0",
            "SELECT rowid, value, typeof(value) FROM vec_each('[1, 2.5, 3]');",
            rows: ["0|1.0|real", "1|2.5|real", "2|3.0|real"]),
        SQLCase(
            "vec_each lists int8 elements as INTEGERs",
            "SELECT rowid, * FROM vec_each(vec_int8('[1, -2]'));",
            rows: ["0|1", "1|-2"]),
        SQLCase(
            "vec_each lists a byte's bits from the most significant, as sqlite-vec does",
            "SELECT group_concat(value, '') FROM vec_each(vec_bit(x'05'));",
            rows: ["00000101"]),
        SQLCase(
            "vec_each joins with a table, one row per element",
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, v);
            INSERT INTO t VALUES (1, '[1, 2]'), (2, '[3]');
            SELECT t.id, e.rowid, e.value FROM t, vec_each(t.v) AS e ORDER BY t.id, e.rowid;
            """,
            rows: ["1|0|1.0", "1|1|2.0", "2|0|3.0"]),
        SQLCase(
            "vec_each refuses the empty vector", "SELECT * FROM vec_each('[]');",
            error: ["vec_each", "zero-length vectors are not supported"]),
        SQLCase("vec_each refuses NULL", "SELECT * FROM vec_each(NULL);", error: ["vec_each", "NULL"]),
        SQLCase(
            "vec_each refuses a bad vector with the codec's message", "SELECT * FROM vec_each('[1, x]');",
            error: ["vec_each", "expected a number"]),
    ]

    /// Every case of every group above, each in-process and in the sqlite3 shell.
    static let everyCase: [SQLCase] = constructorCases + quantizeCases + distanceCases + arithmeticCases + eachCases

    @Test(
        "sqlite-vec's functions make, measure and take apart typed vectors as sqlite-vec does",
        arguments: SQLPath.allCases, everyCase)
    func functionsAnswerAsSqliteVec(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
