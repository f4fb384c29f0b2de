import Foundation
import GRDB
import Testing

/// How a vec0 table in these tests is keyed.
enum Vec0KeyKind: String, Sendable, CaseIterable, CustomTestStringConvertible {
    /// `id text primary key`
    case text = "text primary key"
    /// `id integer primary key`, with ids that are not in insertion order
    case integer = "integer primary key"
    /// no primary key: the rowid
    case none = "no primary key"

    var testDescription: String { rawValue }

    /// The key column as selected in a query.
    var keyColumn: String { self == .none ? "rowid" : "id" }
}

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

/// vec0 KNN queries give the brute-force reference's answer, for every metric and kind of key.
@Suite("vec0 KNN equals brute force")
struct Vec0KNNTests {
    static let dimensions = 16

    @Test(arguments: BruteForce.Metric.allCases, Vec0KeyKind.allCases)
    func knnEqualsBruteForceForEachMetricAndKey(metric: BruteForce.Metric, keyKind: Vec0KeyKind) throws {
        var random = ExtensionRandom.fromEnvironment()
        let context = "\(metric) \(keyKind), seed \(random.seed) (VECSYNC_SEED=\(random.seed) to replay)"
        var fixture = Vec0Fixture(keyKind: keyKind, metric: metric, dimensions: Self.dimensions)
        try BruteForce.openQueue().inDatabase { db in
            try fixture.populate(db, count: 400, using: &random)
            for _ in 0..<25 {
                let q = fixture.query(using: &random)
                let k = Int.random(in: 1...30, using: &random)
                let (top, all) = fixture.expected(q, k: k)
                BruteForce.expectMatches(try fixture.knn(db, q, k: k), top, all: all, context: "\(context), k = \(k)")
            }
        }
    }

    @Test(arguments: BruteForce.Metric.allCases)
    func kLargerThanTheRowCountReturnsEveryRowNearestFirst(metric: BruteForce.Metric) throws {
        var random = ExtensionRandom.fromEnvironment()
        var fixture = Vec0Fixture(keyKind: .text, metric: metric, dimensions: 8)
        try BruteForce.openQueue().inDatabase { db in
            try fixture.populate(db, count: 60, using: &random)
            let q = fixture.query(using: &random)
            let (top, all) = fixture.expected(q, k: .max)
            #expect(top.count == 60)
            BruteForce.expectMatches(
                try fixture.knn(db, q, k: 10_000), top, all: all,
                context: "\(metric) k = 10000 over 60 rows, seed \(random.seed)")
        }
    }

    @Test(arguments: Vec0KeyKind.allCases)
    func limitFormEqualsKForm(keyKind: Vec0KeyKind) throws {
        var random = ExtensionRandom.fromEnvironment()
        var fixture = Vec0Fixture(keyKind: keyKind, metric: .l2, dimensions: Self.dimensions)
        try BruteForce.openQueue().inDatabase { db in
            try fixture.populate(db, count: 300, using: &random)
            for _ in 0..<10 {
                let q = fixture.query(using: &random)
                let got = try BruteForce.hits(
                    db,
                    """
                    select \(keyKind.keyColumn), distance from t where embedding match ? order by distance limit 10
                    """, [BruteForce.blob(q)])
                let (top, all) = fixture.expected(q, k: 10)
                BruteForce.expectMatches(got, top, all: all, context: "LIMIT 10, \(keyKind), seed \(random.seed)")
            }
        }
    }

    @Test func queryAsJSONTextEqualsQueryAsBlob() throws {
        var random = ExtensionRandom.fromEnvironment()
        var fixture = Vec0Fixture(keyKind: .text, metric: .cosine, dimensions: Self.dimensions)
        try BruteForce.openQueue().inDatabase { db in
            try fixture.populate(db, count: 200, using: &random)
            let q = fixture.query(using: &random)
            let asText = try BruteForce.hits(
                db, "select id, distance from t where embedding match ? and k = 7 order by distance",
                [BruteForce.json(q)])
            let (top, all) = fixture.expected(q, k: 7)
            BruteForce.expectMatches(asText, top, all: all, context: "JSON query, seed \(random.seed)")
            #expect(asText == (try fixture.knn(db, q, k: 7)), "seed \(random.seed)")
        }
    }

    @Test(arguments: BruteForce.Metric.allCases)
    func duplicateVectorsComeBackByAscendingRowid(metric: BruteForce.Metric) throws {
        try BruteForce.openQueue().inDatabase { db in
            try db.execute(
                sql:
                    "create virtual table t using vec0(id integer primary key, embedding float[3] distance_metric=\(metric.rawValue))"
            )
            let same = BruteForce.blob([0.5, -0.25, 1])
            // Inserted out of order: 50, 7, 30, 12 hold the same vector; 3 is elsewhere.
            for id in [50, 7, 30, 12] {
                try db.execute(sql: "insert into t(id, embedding) values (?, ?)", arguments: [id, same])
            }
            try db.execute(sql: "insert into t(id, embedding) values (3, '[-1, 2, 0.5]')")
            let all = try Int64.fetchAll(
                db, sql: "select id from t where embedding match ? and k = 10 order by distance", arguments: [same])
            #expect(all == [7, 12, 30, 50, 3], "\(metric): ties by ascending rowid")
            let cut = try Int64.fetchAll(
                db, sql: "select id from t where embedding match ? and k = 2 order by distance", arguments: [same])
            #expect(cut == [7, 12], "\(metric): a k that cuts through the ties keeps the smallest rowids")
            // The same from a query that is not the stored vector but equally far from each copy.
            let far = try Int64.fetchAll(
                db, sql: "select id from t where embedding match '[-1, 2, 0.5]' and k = 5 order by distance")
            #expect(far == [3, 7, 12, 30, 50], "\(metric)")
        }
    }

    @Test func batchEqualsOneMatchQueryPerQuery() throws {
        var random = ExtensionRandom.fromEnvironment()
        for keyKind in Vec0KeyKind.allCases {
            var fixture = Vec0Fixture(keyKind: keyKind, metric: .cosine, dimensions: Self.dimensions)
            try BruteForce.openQueue().inDatabase { db in
                try fixture.populate(db, count: 500, using: &random)
                let queries = (0..<37).map { _ in fixture.query(using: &random) }
                let k = 8
                let rows = try GRDB.Row.fetchAll(
                    db,
                    sql: """
                        select query_index, id, distance from vecsync_knn_batch('t', ?, ?)
                        """, arguments: [BruteForce.blob(queries), k])
                var byQuery = [[BruteForce.Hit]](repeating: [], count: queries.count)
                for row in rows {
                    let j: Int = row[0]
                    byQuery[j].append(BruteForce.Hit(key: BruteForce.keyText(row[1]), distance: row[2]))
                }
                for (j, q) in queries.enumerated() {
                    let single = try fixture.knn(db, q, k: k)
                    let (top, all) = fixture.expected(q, k: k)
                    BruteForce.expectMatches(
                        byQuery[j], single, all: all,
                        context: "batch query \(j) vs MATCH, \(keyKind), seed \(random.seed)")
                    BruteForce.expectMatches(
                        byQuery[j], top, all: all,
                        context: "batch query \(j) vs brute force, \(keyKind), seed \(random.seed)")
                }
            }
        }
    }
}
