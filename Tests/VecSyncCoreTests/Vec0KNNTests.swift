import Foundation
import GRDB
import Testing

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
        try Vec0Fixture.withRows(60, keyKind: .text, metric: metric, dimensions: 8) { db, fixture, random in
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
        try Vec0Fixture.withRows(
            300, keyKind: keyKind, metric: .l2, dimensions: Self.dimensions
        ) { db, fixture, random in
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
        try Vec0Fixture.withRows(
            200, keyKind: .text, metric: .cosine, dimensions: Self.dimensions
        ) { db, fixture, random in
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
