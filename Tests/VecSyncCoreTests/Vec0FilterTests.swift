import Foundation
import GRDB
import Testing

/// A metadata filter inside a vec0 KNN query is applied during the scan: a query returns
/// exactly k rows whenever k rows match, the k nearest of the matching rows.
@Suite("vec0 KNN with metadata filters")
struct Vec0FilterTests {
    /// A filter in SQL and the same filter in Swift.
    struct Filter: Sendable {
        var sql: String
        var arguments: [String]
        var include: @Sendable (Vec0Fixture.Vec0FixtureRow) -> Bool

        init(
            _ sql: String, _ arguments: [String] = [],
            _ include: @escaping @Sendable (Vec0Fixture.Vec0FixtureRow) -> Bool
        ) {
            self.sql = sql
            self.arguments = arguments
            self.include = include
        }
    }

    /// Over 5,000 rows, each filter lets through about 1 % of them (about 50 rows).
    static let selective: [Filter] = [
        Filter("cat = 'rare'") { $0.cat == "rare" },
        Filter("cat = ?", ["odd"]) { $0.cat == "odd" },
        Filter("seq > 4950") { $0.seq > 4950 },
        Filter("seq < 50") { $0.seq < 50 },
        Filter("seq >= 100 and seq <= 149") { (100...149).contains($0.seq) },
        Filter("cat in ('rare', 'odd')") { $0.cat == "rare" || $0.cat == "odd" },
        Filter("cat is null") { $0.cat == nil },
        Filter("cat = 'a' and seq < 150") { $0.cat == "a" && $0.seq < 150 },
        Filter("cat is not null and seq > 4900") { $0.cat != nil && $0.seq > 4900 },
        Filter("cat <> 'a' and seq < 80") { $0.cat != nil && $0.cat != "a" && $0.seq < 80 },
    ]

    @Test(arguments: BruteForce.Metric.allCases)
    func knnReturnsKRowsWhenASelectiveFilterMatchesMoreThanK(metric: BruteForce.Metric) throws {
        try Vec0Fixture.withRows(5000, keyKind: .text, metric: metric, dimensions: 16) { db, fixture, random in
            for filter in Self.selective {
                let matching = fixture.rows.filter(filter.include).count
                #expect(matching >= 20 && matching <= 200, "\(filter.sql) matches \(matching) rows")
                for k in [1, 10, 20] {
                    let q = fixture.query(using: &random)
                    let got = try fixture.knn(db, q, k: k, filter: filter.sql, StatementArguments(filter.arguments))
                    #expect(got.count == k, "\(metric) where \(filter.sql), k = \(k): seed \(random.seed)")
                    let (top, all) = fixture.expected(q, k: k, where: filter.include)
                    BruteForce.expectMatches(
                        got, top, all: all,
                        context: "\(metric) where \(filter.sql), k = \(k), seed \(random.seed)")
                }
            }
        }
    }

    @Test func aFilterMatchingFewerThanKRowsReturnsThemAll() throws {
        try Vec0Fixture.withRows(1000, keyKind: .integer, metric: .l2, dimensions: 8) { db, fixture, random in
            let q = fixture.query(using: &random)
            // seq 0, 100, ..., 900 are 'rare' and seq 0 ..< 300 keeps three of them.
            let got = try fixture.knn(db, q, k: 10, filter: "cat = 'rare' and seq < 300")
            let (top, all) = fixture.expected(q, k: 10, where: { $0.cat == "rare" && $0.seq < 300 })
            #expect(top.count == 3)
            BruteForce.expectMatches(got, top, all: all, context: "seed \(random.seed)")
            #expect(try fixture.knn(db, q, k: 10, filter: "cat = 'nowhere'").isEmpty)
        }
    }

    @Test func aFilterOnTheTextPrimaryKeyRestrictsTheSearch() throws {
        try Vec0Fixture.withRows(300, keyKind: .text, metric: .cosine, dimensions: 8) { db, fixture, random in
            let chosen = Array(fixture.rows.map(\.key).shuffled(using: &random).prefix(12))
            let list = chosen.map { "'\($0)'" }.joined(separator: ", ")
            let q = fixture.query(using: &random)
            let got = try fixture.knn(db, q, k: 5, filter: "id in (\(list))")
            let (top, all) = fixture.expected(q, k: 5, where: { chosen.contains($0.key) })
            BruteForce.expectMatches(got, top, all: all, context: "id in (…), seed \(random.seed)")
        }
    }
}
