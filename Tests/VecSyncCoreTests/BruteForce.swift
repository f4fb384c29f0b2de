import Foundation
import GRDB
import Testing
import VecSyncCore

/// An independent k-nearest-neighbour reference for the vec0 and vector_top_k suites.
///
/// It shares nothing with the extension: distances are computed here, in Double, from the
/// float32 values the test stored, and ordered by (distance, rowid).
///
/// ```swift
/// let reference = BruteForce(metric: .cosine, rows: rows)
/// BruteForce.expectMatches(got, reference.nearest(to: q, k: 10), context: "seed 42")
/// ```
struct BruteForce: Sendable {
    /// One stored row: its key as text (a text primary key, or the rowid), rowid, vector.
    struct Row: Sendable {
        var key: String
        var rowid: Int64
        var vector: [Float]
    }

    /// One answer row: a key and a distance.
    struct Hit: Sendable, Equatable, CustomStringConvertible {
        var key: String
        var distance: Double
        var description: String { "\(key)@\(distance)" }
    }

    var metric: Metric
    var rows: [Row]

    /// Every row, nearest to `query` first, ties by ascending rowid; the first `k` of them.
    func nearest(to query: [Float], k: Int = .max, where include: (Row) -> Bool = { _ in true }) -> [Hit] {
        let scored = rows.filter(include).map { (row: $0, distance: metric.distance($0.vector, query)) }
        let sorted = scored.sorted { a, b in
            a.distance != b.distance ? a.distance < b.distance : a.row.rowid < b.row.rowid
        }
        return sorted.prefix(k).map { Hit(key: $0.row.key, distance: $0.distance) }
    }

    /// Records an issue unless `got` is `expected`: the same keys in the same order, except
    /// that where reference distances lie within 1e-6 (relative) of each other any of those
    /// keys is accepted at that position, and distances within 1e-5.
    ///
    /// `all` is the whole ranked reference (not cut at k), so near ties across the cut are
    /// recognised.
    static func expectMatches(
        _ got: [Hit], _ expected: [Hit], all: [Hit]? = nil, context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if let problem = mismatch(got, expected, all: all ?? expected) {
            Issue.record(
                Comment(
                    rawValue: """
                        \(context): \(problem)
                        expected: \(expected.prefix(20).map(\.description).joined(separator: ", "))
                        got:      \(got.prefix(20).map(\.description).joined(separator: ", "))
                        """), sourceLocation: sourceLocation)
        }
    }

    /// Why `got` differs from `expected`, or nil when it does not.
    static func mismatch(_ got: [Hit], _ expected: [Hit], all: [Hit]) -> String? {
        guard got.count == expected.count else {
            return "\(got.count) rows, expected \(expected.count)"
        }
        guard Set(got.map(\.key)).count == got.count else { return "a key comes back twice" }
        for (i, hit) in got.enumerated() {
            let want = expected[i]
            if abs(hit.distance - want.distance) > 1e-5 {
                return "row \(i): distance \(hit.distance), expected \(want.distance)"
            }
            if hit.key == want.key { continue }
            let tolerance = 1e-6 * max(1, abs(want.distance))
            let tied = all.filter { abs($0.distance - want.distance) <= tolerance }.map(\.key)
            if tied.count < 2 || !tied.contains(hit.key) {
                return "row \(i): key \(hit.key), expected \(want.key)"
            }
        }
        return nil
    }
}

// MARK: - Vectors for the tests

extension BruteForce {
    /// A vector of multiples of 1/256 in -1 ... 1: exact in float32 and as JSON text, so the
    /// shell and a bound blob store the same numbers. Never all zeros (cosine refuses them).
    static func randomVector(_ dimensions: Int, using random: inout ExtensionRandom) -> [Float] {
        while true {
            let v = (0..<dimensions).map { _ in Float(Int.random(in: -256...256, using: &random)) / 256 }
            if v.contains(where: { $0 != 0 }) { return v }
        }
    }

    /// The vector as float32 bytes (little-endian), to bind as a blob.
    static func blob(_ vector: [Float]) -> Data {
        var data = Data(capacity: vector.count * 4)
        for x in vector {
            withUnsafeBytes(of: x.bitPattern.littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// The vectors' float32 bytes laid end to end: a `vecsync_knn_batch` queries blob.
    static func blob(_ vectors: [[Float]]) -> Data {
        vectors.reduce(into: Data()) { $0.append(blob($1)) }
    }

    /// The vector as JSON text, `[0.5,-0.25,…]`.
    static func json(_ vector: [Float]) -> String {
        "[" + vector.map { "\($0)" }.joined(separator: ",") + "]"
    }

    /// A key column's value as text: an integer key as its digits, text as itself.
    static func keyText(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .int64(let i): "\(i)"
        case .string(let s): s
        case .double(let d): "\(d)"
        case .blob(let b): "blob(\(b.count))"
        case .null: "NULL"
        }
    }

    /// Rows `key|distance` as the shell prints them, as hits.
    static func hits(fromShellRows rows: [String]) -> [Hit] {
        rows.map { line in
            let parts = line.split(separator: "|", omittingEmptySubsequences: false)
            return Hit(key: String(parts.first ?? ""), distance: parts.count > 1 ? Double(parts[1]) ?? .nan : .nan)
        }
    }

    /// A new in-memory or on-disk connection with the extension installed.
    static func openQueue(path: String? = nil) throws -> DatabaseQueue {
        if let path { return try DatabaseQueue(path: path, configuration: .vecSync()) }
        return try DatabaseQueue(configuration: .vecSync())
    }

    /// The first two columns of every row of `sql`, as key and distance.
    static func hits(_ db: Database, _ sql: String, _ arguments: StatementArguments = []) throws -> [Hit] {
        try GRDB.Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            Hit(key: keyText(row[0] as DatabaseValue), distance: (row[1] as Double?) ?? .nan)
        }
    }
}
