import Foundation
import GRDB
import Testing

/// A vec0 table `t` and the same rows in Swift, for the brute-force reference.
///
/// ```sql
/// create virtual table t using vec0(
///   id text primary key,                      -- or integer primary key, or none
///   embedding float[D] distance_metric=M,
///   cat text, seq integer, +note text);
/// ```
/// Row i has `seq = i`; `cat` is 'rare' for 1 % of rows, NULL for 1 %, 'odd' for 1 %, else
/// 'a', 'b' or 'c'.
struct Vec0Fixture {
    var keyKind: Vec0KeyKind
    var metric: BruteForce.Metric
    var dimensions: Int
    /// The rows in Swift, with their metadata; `rows[i].seq == i` until rows change.
    var rows: [Vec0FixtureRow] = []

    /// Runs `body` on a new in-memory connection holding a table of `count` rows, with the
    /// fixture and the generator that drew them (seeded from `$VECSYNC_SEED`, else at random:
    /// messages carry `random.seed`).
    static func withRows(
        _ count: Int, keyKind: Vec0KeyKind, metric: BruteForce.Metric, dimensions: Int,
        _ body: (Database, inout Vec0Fixture, inout ExtensionRandom) throws -> Void
    ) throws {
        var random = ExtensionRandom.fromEnvironment()
        var fixture = Vec0Fixture(keyKind: keyKind, metric: metric, dimensions: dimensions)
        try BruteForce.openQueue().inDatabase { db in
            try fixture.populate(db, count: count, using: &random)
            try body(db, &fixture, &random)
        }
    }

    /// One row as the test stored it.
    struct Vec0FixtureRow {
        var key: String
        var rowid: Int64
        var vector: [Float]
        var cat: String?
        var seq: Int
    }

    static func category(_ i: Int) -> String? {
        switch i % 100 {
        case 0: "rare"
        case 1: nil
        case 2: "odd"
        default: ["a", "b", "c"][i % 3]
        }
    }

    var createSQL: String {
        let key: String =
            switch keyKind {
            case .text: "id text primary key, "
            case .integer: "id integer primary key, "
            case .none: ""
            }
        return
            "create virtual table t using vec0(\(key)embedding float[\(dimensions)] distance_metric=\(metric.rawValue), cat text, seq integer, +note text)"
    }

    /// The key of row i: text, or an integer id that runs against insertion order.
    func key(for i: Int) -> String? {
        switch keyKind {
        case .text: String(format: "k-%05d", (i * 7919) % 100_003)
        case .integer: "\((100_000 - i) * 3 + (i % 2))"
        case .none: nil
        }
    }

    /// Creates the table and inserts `count` random rows (some of them duplicates).
    mutating func populate(_ db: Database, count: Int, using random: inout ExtensionRandom) throws {
        try db.execute(sql: createSQL)
        var vectors: [[Float]] = []
        for i in 0..<count {
            // One row in 25 repeats an earlier vector, so ties occur on purpose.
            if i > 0, i % 25 == 0 {
                vectors.append(vectors[Int.random(in: 0..<i, using: &random)])
            } else {
                vectors.append(BruteForce.randomVector(dimensions, using: &random))
            }
        }
        try insert(db, vectors: vectors, startingAt: 0)
    }

    /// Inserts rows `start ..< start + vectors.count` and records their rowids.
    mutating func insert(_ db: Database, vectors: [[Float]], startingAt start: Int) throws {
        let keyColumn = keyKind == .none ? "" : "id, "
        let keyMark = keyKind == .none ? "" : "?, "
        let statement = try db.makeStatement(
            sql: "insert into t(\(keyColumn)embedding, cat, seq, note) values (\(keyMark)?, ?, ?, ?)")
        for (offset, vector) in vectors.enumerated() {
            let i = start + offset
            var arguments: StatementArguments = []
            if let key = key(for: i) {
                arguments += keyKind == .integer ? [Int64(key)] : [key]
            }
            arguments += [BruteForce.blob(vector), Self.category(i), i, "note \(i)"]
            try statement.execute(arguments: arguments)
            let rowid = db.lastInsertedRowID
            rows.append(
                Vec0FixtureRow(
                    key: key(for: i) ?? "\(rowid)", rowid: rowid,
                    vector: vector, cat: Self.category(i), seq: i))
        }
        // The rowids as the table reports them, not as last_insert_rowid says.
        let stored = try Dictionary(
            uniqueKeysWithValues: GRDB.Row.fetchAll(db, sql: "select seq, rowid from t")
                .map { (($0[0] as Int), ($0[1] as Int64)) })
        for j in rows.indices {
            if let rowid = stored[rows[j].seq] {
                rows[j].rowid = rowid
                if keyKind == .none { rows[j].key = "\(rowid)" }
            }
        }
    }

    /// Updates row `j` of `t`, found by its key, in one statement: its vector, its category
    /// (`.some(nil)` sets NULL), or both; the Swift copy follows.
    mutating func update(_ db: Database, row j: Int, vector: [Float]? = nil, cat: String?? = nil) throws {
        var assignments: [String] = []
        var arguments: StatementArguments = []
        if let vector {
            assignments.append("embedding = ?")
            arguments += [BruteForce.blob(vector)]
        }
        if let cat {
            assignments.append("cat = ?")
            arguments += [cat]
        }
        arguments += [rows[j].key]
        try db.execute(
            sql: "update t set \(assignments.joined(separator: ", ")) where \(keyKind.keyColumn) = ?",
            arguments: arguments)
        if let vector { rows[j].vector = vector }
        if let cat { rows[j].cat = cat }
    }

    /// The reference over the current rows.
    var reference: BruteForce {
        BruteForce(metric: metric, rows: rows.map { BruteForce.Row(key: $0.key, rowid: $0.rowid, vector: $0.vector) })
    }

    /// The reference answer, restricted to rows that pass `include`.
    func expected(_ query: [Float], k: Int, where include: (Vec0FixtureRow) -> Bool = { _ in true })
        -> (top: [BruteForce.Hit], all: [BruteForce.Hit])
    {
        let passing = Set(rows.filter(include).map(\.key))
        let all = reference.nearest(to: query, where: { passing.contains($0.key) })
        return (Array(all.prefix(k)), all)
    }

    /// The extension's answer to `where embedding match ? and k = ? <filter>`.
    func knn(
        _ db: Database, _ query: [Float], k: Int, filter: String = "",
        _ arguments: StatementArguments = []
    ) throws -> [BruteForce.Hit] {
        try BruteForce.hits(
            db,
            """
            select \(keyKind.keyColumn), distance from t
             where embedding match ? and k = ?\(filter.isEmpty ? "" : " and " + filter)
             order by distance
            """, [BruteForce.blob(query), k] + arguments)
    }

    /// A query: usually random, sometimes a stored vector (distance 0, and its duplicates tie).
    func query(using random: inout ExtensionRandom) -> [Float] {
        if !rows.isEmpty, Bool.random(using: &random) {
            return rows[Int.random(in: rows.indices, using: &random)].vector
        }
        return BruteForce.randomVector(dimensions, using: &random)
    }
}
