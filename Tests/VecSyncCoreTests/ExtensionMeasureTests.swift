import Testing
import VecSyncCore

/// Distances, normalisation and the build report. Every case runs in-process and in the
/// sqlite3 shell; a REAL prints as SQLite prints it (`1.0`, 15 significant digits).
@Suite("Vector distances and measures")
struct ExtensionMeasureTests {
    /// libSQL's and sqlite-vec's names for 1 − cosine similarity.
    static let cosineFunctions = ["vector_distance_cos", "vec_distance_cosine"]
    /// libSQL's and sqlite-vec's names for the Euclidean distance.
    static let l2Functions = ["vector_distance_l2", "vec_distance_l2"]

    /// vector_distance_cos and vec_distance_cosine are 1 - cosine similarity.
    static let cosineCases: [SQLCase] = cosineFunctions.flatMap { f in
        [
            SQLCase(
                "\(f) of orthogonal vectors is 1.0",
                "SELECT \(f)(vector32('[1,0]'), vector32('[0,1]'));",
                rows: ["1.0"]),
            SQLCase(
                "\(f) of identical vectors is 0.0",
                "SELECT \(f)('[1,2,3]', '[1,2,3]');",
                rows: ["0.0"]),
            // sqlite-vec's name sums in float32, as sqlite-vec does (its figures below).
            SQLCase(
                "\(f) ignores length: parallel vectors are at 0.0",
                "SELECT \(f)('[1,2]', '[10,20]');",
                rows: [f.hasPrefix("vec_") ? "1.11022302462516e-16" : "0.0"]),
            SQLCase(
                "\(f) of opposite vectors is 2.0",
                "SELECT \(f)('[1,2]', '[-1,-2]');",
                rows: ["2.0"]),
            SQLCase(
                "\(f) at 45 degrees is 1 - 1/sqrt(2), in float32 as libSQL and sqlite-vec give it",
                "SELECT \(f)('[1,1]', '[1,0]');",
                rows: ["0.29289323091507"]),
            SQLCase(
                "\(f) with a zero vector is NULL, on either side",
                "SELECT \(f)('[0,0]', '[1,1]'), \(f)(vector32('[1,1]'), vector32('[0,0]'));",
                rows: ["NULL|NULL"]),
            SQLCase(
                "\(f) compares text with an F32 blob",
                "SELECT \(f)('[1,0]', vector32('[0,1]'));",
                rows: ["1.0"]),
            SQLCase(
                "\(f) refuses an F64 vector beside an F32 one, as libSQL does",
                "SELECT \(f)(vector64('[1,0]'), vector32('[1,0]'));",
                error: [f, f.hasPrefix("vec_") ? "different types" : "vectors must have the same type"]),
        ]
    }

    /// vector_distance_l2 and vec_distance_l2 are the Euclidean distance.
    static let l2Cases: [SQLCase] = l2Functions.flatMap { f in
        [
            SQLCase(
                "\(f) is Euclidean, not squared: [0,0] to [3,4] is 5.0",
                "SELECT \(f)('[0,0]', '[3,4]');",
                rows: ["5.0"]),
            SQLCase(
                "\(f) of identical vectors is 0.0",
                "SELECT \(f)(vector32('[1,2,3]'), vector32('[1,2,3]'));",
                rows: ["0.0"]),
            SQLCase(
                "\(f) between F64 vectors",
                "SELECT \(f)(vector64('[0,0]'), vector64('[3,4]'));",
                rows: ["5.0"]),
            SQLCase(
                "\(f) between text and an F32 blob, in float32 as libSQL and sqlite-vec give it",
                "SELECT \(f)('[1,0]', x'0000404000008040');",
                rows: ["4.4721360206604"]),
            SQLCase(
                "\(f) is defined for zero vectors",
                "SELECT \(f)('[0,0,0]', '[0,0,0]'), \(f)('[0]', '[-2]');",
                rows: ["0.0|2.0"]),
        ]
    }

    /// vec_normalize returns a unit vector.
    static let normalizeCases: [SQLCase] = [
        SQLCase(
            "vec_normalize scales to unit length, as F32",
            "SELECT hex(vec_normalize('[3,4]')), vec_to_json(vec_normalize('[3,4]'));",
            rows: ["9A99193FCDCC4C3F|[0.600000,0.800000]"]),
        SQLCase(
            "vec_normalize keeps the direction of a negative vector",
            "SELECT hex(vec_normalize(vector32('[-2]'))), vec_length(vec_normalize('[0,0,7]'));",
            rows: ["000080BF|3"]),
        SQLCase(
            "vec_normalize narrows an F64 vector to F32",
            "SELECT hex(vec_normalize(vector64('[0,5]')));",
            rows: ["000000000000803F"]),
        SQLCase(
            "vec_normalize refuses a zero vector, which has no direction",
            "SELECT vec_normalize('[0,0]');",
            error: ["vec_normalize", "zero vector"]),
    ]

    /// vecsync_version and vecsync_debug report the build.
    static let buildCases: [SQLCase] = [
        SQLCase(
            "vecsync_version() is the Swift module's version",
            "SELECT vecsync_version();",
            rows: [VecSyncExtension.version]),
        SQLCase(
            "vecsync_debug() reports the version, the BLAS and the SIMD level",
            """
            SELECT instr(vecsync_debug(), vecsync_version()) > 0,
                   instr(lower(vecsync_debug()), 'blas') > 0,
                   instr(lower(vecsync_debug()), 'simd') > 0;
            """,
            rows: ["1|1|1"]),
    ]

    @Test("vecsync_version() is a semantic version")
    func versionIsSemantic() {
        let parts = VecSyncExtension.version.split(separator: ".")
        #expect(
            parts.count == 3 && parts.allSatisfy { Int($0) != nil },
            "vecsync_version() = \(VecSyncExtension.version)")
    }

    /// Every case of every group above, each in-process and in the sqlite3 shell.
    static let everyCase: [SQLCase] = cosineCases + l2Cases + normalizeCases + buildCases

    @Test(
        "Distances, norms and the build are measured and reported as documented", arguments: SQLPath.allCases, everyCase
    )
    func measuresAreAsDocumented(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
