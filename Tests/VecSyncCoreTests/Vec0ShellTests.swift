import Foundation
import GRDB
import Testing
import VecSyncTestSupport

/// The rows a script printed after each `select '#name';` marker, by name.
func shellSections(_ rows: [String]) -> [String: [String]] {
    var sections: [String: [String]] = [:]
    var current = ""
    for row in rows {
        if row.hasPrefix("#") {
            current = String(row.dropFirst())
            sections[current] = []
        } else {
            sections[current, default: []].append(row)
        }
    }
    return sections
}

/// vec0 in the real sqlite3 shell, vectors as JSON text, equals the brute-force reference.
@Suite("vec0 KNN in the sqlite3 shell equals brute force")
struct Vec0ShellTests {
    static let dimensions = 8

    /// The SQL that creates and fills the fixture's table, vectors as JSON.
    static func populateSQL(_ fixture: inout Vec0Fixture, count: Int, using random: inout ExtensionRandom) -> String {
        var sql = fixture.createSQL + ";\nbegin;\n"
        for i in 0..<count {
            let v =
                i > 0 && i % 25 == 0
                ? fixture.rows[Int.random(in: 0..<i, using: &random)].vector
                : BruteForce.randomVector(dimensions, using: &random)
            let key = fixture.key(for: i)
            // With no primary key the rowid is given explicitly, so the test knows it.
            let rowid = Int64(i * 2 + 1)
            let keySQL =
                fixture.keyKind == .text
                ? "'\(key ?? "")', " : fixture.keyKind == .integer ? "\(key ?? ""), " : "\(rowid), "
            let keyColumn = fixture.keyKind == .none ? "rowid, " : "id, "
            let cat = Vec0Fixture.category(i).map { "'\($0)'" } ?? "NULL"
            sql +=
                "insert into t(\(keyColumn)embedding, cat, seq, note) values (\(keySQL)'\(BruteForce.json(v))', \(cat), \(i), 'n');\n"
            fixture.rows.append(
                .init(
                    key: key ?? "\(rowid)", rowid: fixture.keyKind == .text ? Int64(i + 1) : Int64(key ?? "") ?? rowid,
                    vector: v, cat: Vec0Fixture.category(i), seq: i))
        }
        return sql + "commit;\n"
    }

    struct Query {
        var name: String
        var vector: [Float]
        var k: Int
        var filter: String
        var include: (Vec0Fixture.Vec0FixtureRow) -> Bool
        var limitForm = false
    }

    static func querySQL(_ q: Query, _ keyKind: Vec0KeyKind) -> String {
        let match = "select \(keyKind.keyColumn), distance from t where embedding match '\(BruteForce.json(q.vector))'"
        let body =
            q.limitForm
            ? "\(match)\(q.filter.isEmpty ? "" : " and " + q.filter) order by distance limit \(q.k);"
            : "\(match) and k = \(q.k)\(q.filter.isEmpty ? "" : " and " + q.filter) order by distance;"
        return "select '#\(q.name)';\n\(body)\n"
    }

    static func queries(_ fixture: Vec0Fixture, tag: String, using random: inout ExtensionRandom) -> [Query] {
        var list: [Query] = []
        for j in 0..<6 {
            let filters: [(String, (Vec0Fixture.Vec0FixtureRow) -> Bool)] = [
                ("", { _ in true }), ("cat = 'a'", { $0.cat == "a" }), ("seq < 40", { $0.seq < 40 }),
                ("cat in ('b', 'rare')", { $0.cat == "b" || $0.cat == "rare" }), ("cat is null", { $0.cat == nil }),
                ("", { _ in true }),
            ]
            list.append(
                Query(
                    name: "\(tag)\(j)", vector: fixture.query(using: &random),
                    k: Int.random(in: 1...12, using: &random),
                    filter: filters[j].0, include: filters[j].1, limitForm: j == 5))
        }
        return list
    }

    static func check(
        _ sections: [String: [String]], _ queries: [Query], _ fixture: Vec0Fixture, _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for q in queries {
            let (top, all) = fixture.expected(q.vector, k: q.k, where: q.include)
            BruteForce.expectMatches(
                BruteForce.hits(fromShellRows: sections[q.name] ?? []), top, all: all,
                context: "[sqlite3 shell] \(context), query \(q.name) k = \(q.k) \(q.filter)",
                sourceLocation: sourceLocation)
        }
    }

    static let cases: [(BruteForce.Metric, Vec0KeyKind)] = [
        (.cosine, .text), (.l2, .text), (.dot, .text), (.l2, .integer), (.cosine, .none), (.dot, .integer),
    ]

    @Test(arguments: cases)
    func shellKNNEqualsBruteForceBeforeAndAfterChanges(metric: BruteForce.Metric, keyKind: Vec0KeyKind) throws {
        var random = ExtensionRandom.fromEnvironment()
        var fixture = Vec0Fixture(keyKind: keyKind, metric: metric, dimensions: Self.dimensions)
        let context = "\(metric) \(keyKind), seed \(random.seed)"
        var sql = Self.populateSQL(&fixture, count: 200, using: &random)
        let before = Self.queries(fixture, tag: "before", using: &random)
        sql += before.map { Self.querySQL($0, keyKind) }.joined()
        let reference0 = fixture

        // Updates (embedding, metadata), deletes, INSERT OR REPLACE, a rolled-back transaction.
        let key = keyKind.keyColumn
        func literal(_ k: String) -> String { keyKind == .text ? "'\(k)'" : k }
        for _ in 0..<20 {
            let j = Int.random(in: fixture.rows.indices, using: &random)
            let v = BruteForce.randomVector(Self.dimensions, using: &random)
            sql +=
                "update t set embedding = '\(BruteForce.json(v))', cat = 'b' where \(key) = \(literal(fixture.rows[j].key));\n"
            fixture.rows[j].vector = v
            fixture.rows[j].cat = "b"
        }
        for _ in 0..<30 {
            let j = Int.random(in: fixture.rows.indices, using: &random)
            sql += "delete from t where \(key) = \(literal(fixture.rows[j].key));\n"
            fixture.rows.remove(at: j)
        }
        if keyKind != .none {
            let j = Int.random(in: fixture.rows.indices, using: &random)
            let v = BruteForce.randomVector(Self.dimensions, using: &random)
            sql +=
                "insert into t(id, embedding, cat, seq) values (\(literal(fixture.rows[j].key)), '\(BruteForce.json(v))', 'a', -1);\n"
            sql +=
                "insert or replace into t(id, embedding, cat, seq) values (\(literal(fixture.rows[j].key)), '\(BruteForce.json(v))', 'a', \(fixture.rows[j].seq));\n"
            fixture.rows[j].vector = v
            fixture.rows[j].cat = "a"
            if keyKind == .text { fixture.rows[j].rowid = 201 }  // a replaced text-keyed row gets a new rowid
        }
        let extraKey = keyKind == .text ? "id, " : keyKind == .integer ? "id, " : ""
        let extraValue = keyKind == .text ? "'extra', " : keyKind == .integer ? "424242, " : ""
        sql +=
            "begin; delete from t; insert into t(\(extraKey)embedding, seq) values (\(extraValue)'\(BruteForce.json(fixture.rows[0].vector))', 999); rollback;\n"
        let after = Self.queries(fixture, tag: "after", using: &random)
        sql += after.map { Self.querySQL($0, keyKind) }.joined()
        sql += "select '#count';\nselect count(*) from t;\n"

        let output = try Shell.run(sql)
        let run = output.run
        let expectedErrors = keyKind == .none ? 0 : 1  // the plain duplicate insert
        #expect(run.errors.count == expectedErrors, "\(context): \(run.errors)")
        if keyKind != .none {
            #expect(run.errors.first?.contains("UNIQUE constraint failed: t.id") == true, "\(run.errors)")
        }
        let sections = shellSections(run.rows)
        Self.check(sections, before, reference0, "before changes, \(context)")
        Self.check(sections, after, fixture, "after changes, \(context)")
        #expect(sections["count"] == ["\(fixture.rows.count)"], "\(context)")
    }

    @Test func aFileWrittenInProcessIsSearchedIdenticallyByTheShellAndBack() throws {
        var random = ExtensionRandom.fromEnvironment()
        try withTemporaryFile("knn", named: "t.sqlite") { path in
            var fixture = Vec0Fixture(keyKind: .text, metric: .cosine, dimensions: 16)
            let queue = try BruteForce.openQueue(path: path)
            try queue.write { db in
                try fixture.populate(db, count: 500, using: &random)
                try db.execute(sql: "delete from t where seq % 7 = 3")
            }
            fixture.rows.removeAll { $0.seq % 7 == 3 }
            try queue.close()

            let queries = (0..<5).map { _ in fixture.query(using: &random) }
            var sql = ""
            for (j, q) in queries.enumerated() {
                sql +=
                    "select '#q\(j)';\nselect id, distance from t where embedding match '\(BruteForce.json(q))' and k = 10 and cat <> 'c' order by distance;\n"
            }
            // The shell writes too; the in-process side must then see its writes.
            let fresh = BruteForce.randomVector(16, using: &random)
            sql +=
                "insert into t(id, embedding, cat, seq) values ('from-shell', '\(BruteForce.json(fresh))', 'a', 100000);\n"
            let run = try Shell.run(sql, databasePath: path).run
            #expect(run.errors.isEmpty, "\(run.errors)")
            let sections = shellSections(run.rows)
            for (j, q) in queries.enumerated() {
                let (top, all) = fixture.expected(q, k: 10, where: { $0.cat != "c" && $0.cat != nil })
                BruteForce.expectMatches(
                    BruteForce.hits(fromShellRows: sections["q\(j)"] ?? []), top, all: all,
                    context: "[sqlite3 shell] file written in-process, query \(j), seed \(random.seed)")
            }
            let reopened = try BruteForce.openQueue(path: path)
            try reopened.read { db in
                let top = try BruteForce.hits(
                    db, "select id, distance from t where embedding match ? and k = 1", [BruteForce.blob(fresh)])
                #expect(top.first?.key == "from-shell", "\(top)")
                #expect(try Int.fetchOne(db, sql: "select count(*) from t") == fixture.rows.count + 1)
            }
            try reopened.close()
        }
    }

    @Test func shellBatchEqualsPerQueryMatch() throws {
        var random = ExtensionRandom.fromEnvironment()
        var fixture = Vec0Fixture(keyKind: .integer, metric: .l2, dimensions: Self.dimensions)
        var sql = Self.populateSQL(&fixture, count: 150, using: &random)
        let queries = (0..<4).map { _ in fixture.query(using: &random) }
        // The batch: the queries' float32 bytes end to end, as a blob literal.
        let hex = BruteForce.blob(queries).map { String(format: "%02x", $0) }.joined()
        sql +=
            "select '#batch';\nselect query_index || ':' || id, distance from vecsync_knn_batch('t', x'\(hex)', 6);\n"
        let run = try Shell.run(sql).run
        #expect(run.errors.isEmpty, "\(run.errors)")
        let hits = BruteForce.hits(fromShellRows: shellSections(run.rows)["batch"] ?? [])
        for (j, q) in queries.enumerated() {
            let mine = hits.filter { $0.key.hasPrefix("\(j):") }.map {
                BruteForce.Hit(key: String($0.key.dropFirst("\(j):".count)), distance: $0.distance)
            }
            let (top, all) = fixture.expected(q, k: 6)
            BruteForce.expectMatches(
                mine, top, all: all, context: "[sqlite3 shell] batch query \(j), seed \(random.seed)")
        }
    }
}
