import Foundation
import Testing
import VecSyncTestSupport

/// A KNN answer is exact under every constraint: the rows whose reported distance is within
/// the bounds, nearest first, ties by ascending rowid, the first k — whatever the metric, the
/// element type or the quantizer, with many rows tied at the cut or at a bound.
@Suite("vec0 KNN answers are exact with ties, duplicates and bounds")
struct Vec0ExactAnswerTests {
    /// One kind of vector column the random cases cover.
    struct Column: Sendable, CustomTestStringConvertible {
        var element: BruteForce.Element
        var dims: Int
        var metric: String
        var quantizer: String? = nil
        var seed: UInt64

        var testDescription: String {
            "\(element.rawValue)[\(dims)] \(metric)" + (quantizer.map { " rescore \($0)" } ?? "")
        }

        var declaration: String {
            var d = "e \(element.rawValue)[\(dims)]"
            if element != .bit { d += " distance_metric=\(metric)" }
            // Oversample 1024: every row is a candidate even at k = 1, so the answer must be
            // the exact one (with fewer candidates, which rows come back is as good as the
            // coarse scores; the hand-written cases cover bounds at oversample 1).
            if let quantizer { d += " indexed by rescore(quantizer=\(quantizer), oversample=1024)" }
            return d + ", chunk_size=8"
        }

        /// A vector of this column: few values, so rows tie and repeat; never all zeros.
        func vector(_ random: inout SeededRandom) -> [Float] {
            while true {
                let v: [Float] = (0..<dims).map { _ in
                    switch element {
                    case .float32: Float(Int.random(in: -2...2, using: &random)) / 2
                    case .int8: Float(Int.random(in: -2...2, using: &random))
                    case .bit: Float(Int.random(in: 0...1, using: &random))
                    }
                }
                if v.contains(where: { $0 != 0 }) { return v }
            }
        }

        /// The vector as SQL: JSON text, or through vec_int8() / vec_bit().
        func sql(_ v: [Float]) -> String {
            switch element {
            case .float32: return "'" + BruteForce.json(v) + "'"
            case .int8: return "vec_int8('[" + v.map { "\(Int($0))" }.joined(separator: ",") + "]')"
            case .bit:
                let bytes = stride(from: 0, to: v.count, by: 8).map { start in
                    (0..<8).reduce(0) { $0 | (v[start + $1] != 0 ? 1 << $1 : 0) }
                }
                return "vec_bit(x'" + bytes.map { String(format: "%02x", $0) }.joined() + "')"
            }
        }
    }

    static let columns: [Column] = [
        Column(element: .float32, dims: 3, metric: "l2", seed: 0x5eed_0240),
        Column(element: .float32, dims: 3, metric: "cosine", seed: 0x5eed_0241),
        Column(element: .float32, dims: 3, metric: "dot", seed: 0x5eed_0242),
        Column(element: .float32, dims: 3, metric: "l1", seed: 0x5eed_0243),
        Column(element: .float32, dims: 4, metric: "l2", quantizer: "int8", seed: 0x5eed_0244),
        Column(element: .float32, dims: 4, metric: "cosine", quantizer: "bit", seed: 0x5eed_0245),
        Column(element: .int8, dims: 3, metric: "l2", seed: 0x5eed_0246),
        Column(element: .int8, dims: 3, metric: "cosine", seed: 0x5eed_0247),
        Column(element: .int8, dims: 3, metric: "l1", seed: 0x5eed_0248),
        Column(element: .bit, dims: 8, metric: "hamming", seed: 0x5eed_0249),
    ]

    /// A seeded table of 90 rows drawn mostly from 5 vectors (so 17 or more rows share a
    /// distance), inserted in random rowid order, some deleted and their slots reused; then
    /// queries from stored and new vectors with k from 1 to above the rows, under no bound,
    /// each of >, >=, <, <=, and two at once, at literal values and at the very distance a
    /// row has. The expected rowids come from BruteForce; the case runs in-process and in the
    /// shell.
    static func randomCase(_ column: Column) -> SQLCase {
        var random = SeededRandom(seed: column.seed)
        let pool = (0..<5).map { _ in column.vector(&random) }
        var stored: [Int64: [Float]] = [:]
        var sql = "create virtual table t using vec0(\(column.declaration));\n"
        for rowid in Array(Int64(1)...120).shuffled(using: &random).prefix(90) {
            let v =
                Double.random(in: 0..<1, using: &random) < 0.85
                ? pool.randomElement(using: &random)! : column.vector(&random)
            stored[rowid] = v
            sql += "insert into t(rowid, e) values (\(rowid), \(column.sql(v)));\n"
        }
        for rowid in stored.keys.sorted().shuffled(using: &random).prefix(10) {
            stored[rowid] = nil
            sql += "delete from t where rowid = \(rowid);\n"
        }
        for rowid in Int64(200)..<Int64(210) {
            let v = pool.randomElement(using: &random)!
            stored[rowid] = v
            sql += "insert into t(rowid, e) values (\(rowid), \(column.sql(v)));\n"
        }
        var expected: [String] = []
        let queries = Array(pool.prefix(3)) + (0..<2).map { _ in column.vector(&random) }
        for query in queries {
            let rows = stored.map { rowid, v in
                let (key, figure) = BruteForce.vec0Distances(
                    metric: column.metric, element: column.element, query: query, row: v)
                return (rowid: rowid, key: key, figure: figure)
            }
            let byRowid = Dictionary(uniqueKeysWithValues: rows.map { ($0.rowid, $0.figure) })
            for k in [1, 4, 19, 200] {
                // A bound at a row's own distance, read back by a KNN query of its own.
                let atRow = stored.keys.randomElement(using: &random)!
                let rowBound = (
                    sql: "(select distance from t where e match \(column.sql(query)) and k = 500 and rowid = \(atRow))",
                    value: byRowid[atRow]!
                )
                let literal = [0.0, 1.0, 2.0].randomElement(using: &random)!
                let bounds: [(sql: String, accepts: (Double) -> Bool)] = [
                    ("", { _ in true }),
                    ("and distance > 0", { $0 > 0 }),
                    ("and distance > \(rowBound.sql)", { $0 > rowBound.value }),
                    ("and distance >= \(rowBound.sql)", { $0 >= rowBound.value }),
                    ("and distance < \(rowBound.sql)", { $0 < rowBound.value }),
                    ("and distance <= \(rowBound.sql)", { $0 <= rowBound.value }),
                    (
                        "and distance >= \(literal) and distance < \(rowBound.sql)",
                        { $0 >= literal && $0 < rowBound.value }
                    ),
                ]
                for bound in bounds {
                    sql +=
                        "select group_concat(rowid, ' ') from (select rowid from t where e match \(column.sql(query)) and k = \(k) \(bound.sql));\n"
                    let answer = BruteForce.vec0Answer(rows, k: k, accepts: bound.accepts)
                    expected.append(answer.isEmpty ? "NULL" : answer.map(String.init).joined(separator: " "))
                }
            }
        }
        return SQLCase("\(column.testDescription), seed \(column.seed)", sql, rows: expected)
    }

    @Test(
        "Random tables of ties and duplicates, every bound, against brute force", arguments: SQLPath.allCases, columns)
    func againstBruteForce(path: SQLPath, column: Column) {
        Self.randomCase(column).verify(path)
    }
}
