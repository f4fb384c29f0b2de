import Foundation
import Testing

/// Seeded random vectors, chosen to include the hard cases on purpose: denormals, negative
/// zero, magnitudes up to FLT_MAX, the empty vector, identical, opposite and zero vectors.
///
/// Every failure message carries the seed; `VECSYNC_SEED=<seed>` replays the same vectors.
@Suite("Randomised vector round trips")
struct ExtensionRoundTripPropertyTests {
    /// Vectors per round-trip run, and pairs per distance run.
    static let vectorCount = 48
    static let pairCount = 48
    /// Largest dimension generated (besides the fixed small ones).
    static let maxDimensions = 2000
    /// Dimensions every run covers before the random ones.
    static let fixedDimensions = [0, 1, 2, 3, 4, 7, 8, 9, 31, 32, 33, 2000]
    /// At most this many failures are reported one by one; the rest are counted.
    static let reportLimit = 6

    @Test(
        "Random float32 vectors survive blob, %.9g text and F64 round trips bit for bit",
        arguments: SQLPath.allCases)
    func randomVectorsRoundTripBitForBit(path: SQLPath) throws {
        var random = ExtensionRandom.fromEnvironment()
        var checks: [(sql: String, expected: String)] = []
        for index in 0..<Self.vectorCount {
            let dimensions =
                index < Self.fixedDimensions.count
                ? Self.fixedDimensions[index]
                : Int.random(in: 0...Self.maxDimensions, using: &random)
            let vector = Self.vector(dimensions: dimensions, style: index % 4, using: &random)
            let hex = Self.hex(vector)
            let separator = [",", ", ", " , "][index % 3]
            let text = "[" + vector.map { String(format: "%.9g", Double($0)) }.joined(separator: separator) + "]"
            checks.append(("SELECT 'blob \(index)', hex(vector32(x'\(hex)'));", "blob \(index)|\(hex)"))
            checks.append(("SELECT 'text \(index)', hex(vector32('\(text)'));", "text \(index)|\(hex)"))
            checks.append(("SELECT 'f64 \(index)', hex(vector32(vector64(x'\(hex)')));", "f64 \(index)|\(hex)"))
        }

        let run = try path.run(checks.map(\.sql).joined(separator: "\n"))
        let rowsByTag = Self.rowsByTag(run)
        var failures: [String] = []
        for check in checks {
            let tag = Self.tag(of: check.expected)
            let got = rowsByTag[tag]
            if got != check.expected {
                failures.append(
                    """
                    SQL:      \(SQLRun.abbreviated(check.sql))
                    expected: \(SQLRun.abbreviated(check.expected))
                    got:      \(got.map { SQLRun.abbreviated($0) } ?? "no row")
                    """)
            }
        }
        report(failures, of: checks.count, run: run, path: path, seed: random.seed)
    }

    @Test(
        "Distances of random vectors match their reference within 1e-6 (libSQL's and sqlite-vec's Float sums)",
        arguments: SQLPath.allCases)
    func randomDistancesMatchDoubleReference(path: SQLPath) throws {
        var random = ExtensionRandom.fromEnvironment()
        var pairs: [(a: [Float], b: [Float])] = []
        var sql = ""
        for index in 0..<Self.pairCount {
            let dimensions =
                index < Self.fixedDimensions.count
                ? max(1, Self.fixedDimensions[index])
                : Int.random(in: 1...Self.maxDimensions, using: &random)
            let a = Self.vector(dimensions: dimensions, style: index % 4, using: &random)
            let b: [Float]
            switch index % 7 {
            case 0: b = a  // distance 0
            case 1: b = a.map { -$0 }  // cosine distance 2
            case 2: b = [Float](repeating: 0, count: dimensions)  // cosine NULL
            case 3: b = a.map { $0 * 0.5 }  // parallel
            default: b = Self.vector(dimensions: dimensions, style: index % 4, using: &random)
            }
            pairs.append((a, b))
            sql += """
                SELECT 'pair \(index)', vector_distance_cos(a, b), vector_distance_l2(a, b),
                       vec_distance_cosine(a, b), vec_distance_l2(a, b)
                  FROM (SELECT x'\(Self.hex(a))' AS a, x'\(Self.hex(b))' AS b);

                """
        }

        let run = try path.run(sql)
        let rowsByTag = Self.rowsByTag(run)
        var failures: [String] = []
        for (index, pair) in pairs.enumerated() {
            let cosine = Self.libsqlCosine(pair.a, pair.b)
            let l2 = Self.sqliteVecL2(pair.a, pair.b)
            // Both sum in Float, as libSQL and sqlite-vec do; libSQL's cosine rounds the
            // product of the norms to Float, sqlite-vec's takes each root in Double.
            let expected = [cosine, l2, Self.sqliteVecCosine(pair.a, pair.b), Self.sqliteVecL2(pair.a, pair.b)]
            let what = "pair \(index) (\(pair.a.count) dimensions)"
            guard let row = rowsByTag["pair \(index)"] else {
                failures.append("\(what): no row; expected cos \(Self.show(cosine)), l2 \(Self.show(l2))")
                continue
            }
            let got = row.split(separator: "|").dropFirst().map(String.init)
            let names = ["vector_distance_cos", "vector_distance_l2", "vec_distance_cosine", "vec_distance_l2"]
            guard got.count == 4 else {
                failures.append("\(what): malformed row \(SQLRun.quoted(row))")
                continue
            }
            for column in 0..<4 where !Self.matches(got[column], expected[column], isCosine: column % 2 == 0) {
                failures.append(
                    """
                    \(what): \(names[column])(a, b)
                    a = \(SQLRun.abbreviated(Self.hex(pair.a)))
                    b = \(SQLRun.abbreviated(Self.hex(pair.b)))
                    expected: \(Self.show(expected[column])) (\(column < 2 ? "libSQL's Float" : "sqlite-vec's Float") reference, tolerance 1e-6)
                    got:      \(got[column])
                    """)
            }
        }
        report(failures, of: pairs.count * 4, run: run, path: path, seed: random.seed)
    }

    // MARK: - Generators

    /// The float32 values that break codecs: zeros of both signs, the extremes of the
    /// range, the smallest normal and denormal, values that round when read as text, and
    /// 2^24, past which float32 no longer holds every integer.
    static let specialValues: [Float] = [
        0, -0.0, 1, -1, 0.1, 16_777_216,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, Float.greatestFiniteMagnitude.nextDown,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
        Float.leastNormalMagnitude.nextDown,
    ]

    /// A vector of `dimensions` elements. Style 0 is everyday embeddings in [-1, 1]; 1 mixes
    /// every kind of hard value; 2 is denormals only; 3 is large magnitudes only.
    static func vector(dimensions: Int, style: Int, using random: inout ExtensionRandom) -> [Float] {
        (0..<dimensions).map { _ in
            switch style {
            case 0: Float.random(in: -1...1, using: &random)
            case 2: denormal(using: &random)
            case 3: large(using: &random)
            default: hardValue(using: &random)
            }
        }
    }

    static func hardValue(using random: inout ExtensionRandom) -> Float {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: specialValues[Int.random(in: 0..<specialValues.count, using: &random)]
        case 1: denormal(using: &random)
        case 2: large(using: &random)
        case 3, 4: anyFinite(using: &random)
        default: Float.random(in: -1...1, using: &random)
        }
    }

    /// Any finite float32, uniform over bit patterns (exponent 0…254).
    static func anyFinite(using random: inout ExtensionRandom) -> Float {
        let sign = UInt32.random(in: 0...1, using: &random) << 31
        let exponent = UInt32.random(in: 0...254, using: &random) << 23
        let fraction = UInt32.random(in: 0...0x7F_FFFF, using: &random)
        return Float(bitPattern: sign | exponent | fraction)
    }

    /// A nonzero denormal of either sign.
    static func denormal(using random: inout ExtensionRandom) -> Float {
        let sign = UInt32.random(in: 0...1, using: &random) << 31
        return Float(bitPattern: sign | UInt32.random(in: 1...0x7F_FFFF, using: &random))
    }

    /// A magnitude between 1e30 and FLT_MAX inclusive, of either sign; FLT_MAX itself often.
    static func large(using random: inout ExtensionRandom) -> Float {
        let sign: Float = Bool.random(using: &random) ? 1 : -1
        if Int.random(in: 0..<8, using: &random) == 0 { return sign * .greatestFiniteMagnitude }
        return sign * Float.random(in: 1e30...Float.greatestFiniteMagnitude, using: &random)
    }

    // MARK: - References and formatting

    /// 1 − cos as libSQL's vector_distance_cos computes it: Float sums, element after
    /// element, the product of the squared norms in Float, the rest in Double, the result
    /// rounded to Float; nil (NULL) where that is NaN (a zero vector).
    static func libsqlCosine(_ a: [Float], _ b: [Float]) -> Double? {
        let (dot, aa, bb) = BruteForce.floatDotAndNorms(a, b)
        let norms = aa * bb
        let r = Float(1 - Double(dot) / Double(norms).squareRoot())
        return r.isNaN ? nil : Double(r)
    }

    /// 1 − cos as sqlite-vec computes it: Float sums, element after element, square roots
    /// in Double; nil (NULL) where that is NaN.
    static func sqliteVecCosine(_ a: [Float], _ b: [Float]) -> Double? {
        let (dot, aa, bb) = BruteForce.floatDotAndNorms(a, b)
        guard aa != 0, bb != 0 else { return nil }
        let r = Float(1 - Double(dot) / (Double(aa).squareRoot() * Double(bb).squareRoot()))
        return r.isNaN ? nil : Double(r)
    }

    /// The Euclidean distance as sqlite-vec computes it: a Float sum of squares.
    static func sqliteVecL2(_ a: [Float], _ b: [Float]) -> Double? {
        BruteForce.floatL2(a, b)
    }

    /// Whether SQLite's text `got` is the reference within 1e-6 relative. A cosine distance
    /// is a difference from 1, so its error is measured against max(|reference|, 1).
    static func matches(_ got: String, _ reference: Double?, isCosine: Bool) -> Bool {
        guard let reference else { return got == "NULL" }
        if !reference.isFinite {
            return got.lowercased() == (reference > 0 ? "inf" : "-inf") || Double(got) == reference
        }
        guard let value = Double(got) else { return false }
        let scale = isCosine ? max(abs(reference), 1) : abs(reference)
        return abs(value - reference) <= 1e-6 * scale
    }

    static func show(_ value: Double?) -> String {
        value.map { "\($0)" } ?? "NULL"
    }

    /// The little-endian bytes of `vector` in upper-case hex, as SQLite's hex() prints them.
    static func hex(_ vector: [Float]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(vector.count * 8)
        for element in vector {
            let bits = element.bitPattern.littleEndian
            for byte in 0..<4 {
                let value = UInt8(truncatingIfNeeded: bits >> (8 * byte))
                out.append(digits[Int(value >> 4)])
                out.append(digits[Int(value & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The first column of a row: its tag.
    static func tag(of row: String) -> String {
        String(row.prefix { $0 != "|" })
    }

    static func rowsByTag(_ run: SQLRun) -> [String: String] {
        var rows: [String: String] = [:]
        for row in run.rows { rows[tag(of: row)] = row }
        return rows
    }

    /// Records the first failures as issues, with the seed and the run's errors.
    func report(
        _ failures: [String], of total: Int, run: SQLRun, path: SQLPath, seed: UInt64,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard !failures.isEmpty else { return }
        let errors = run.errors.prefix(Self.reportLimit).map { "  " + SQLRun.abbreviated($0) }
        var message =
            "[\(path.rawValue)] \(failures.count) of \(total) checks failed. "
            + "Replay with VECSYNC_SEED=\(seed)\n"
        if !errors.isEmpty {
            message += "SQL errors (\(run.errors.count)):\n" + errors.joined(separator: "\n") + "\n"
        }
        message += failures.prefix(Self.reportLimit).joined(separator: "\n---\n")
        if failures.count > Self.reportLimit {
            message += "\n--- and \(failures.count - Self.reportLimit) more"
        }
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    }
}
