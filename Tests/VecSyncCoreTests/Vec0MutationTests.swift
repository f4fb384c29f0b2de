import Foundation
import GRDB
import Testing
import VecSyncTestSupport

/// vec0 answers stay equal to brute force after every kind of change: updates of the
/// embedding and of metadata, deletes, INSERT OR REPLACE, slot reuse, reopening the file,
/// ROLLBACK, ROLLBACK TO a savepoint, and writes made by another connection.
@Suite("vec0 KNN after changes")
struct Vec0MutationTests {
    static let dimensions = 12

    /// Checks a few random queries, plain and filtered, against the reference.
    static func expectAgreement(
        _ db: Database, _ fixture: Vec0Fixture, _ random: inout ExtensionRandom,
        _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for _ in 0..<6 {
            let q = fixture.query(using: &random)
            let k = Int.random(in: 1...15, using: &random)
            let (top, all) = fixture.expected(q, k: k)
            BruteForce.expectMatches(
                try fixture.knn(db, q, k: k), top, all: all,
                context: "\(context), k = \(k), seed \(random.seed)", sourceLocation: sourceLocation)
            let (ftop, fall) = fixture.expected(q, k: k, where: { $0.cat == "b" })
            BruteForce.expectMatches(
                try fixture.knn(db, q, k: k, filter: "cat = 'b'"), ftop, all: fall,
                context: "\(context), cat = 'b', k = \(k), seed \(random.seed)",
                sourceLocation: sourceLocation)
        }
        let count = try Int.fetchOne(db, sql: "select count(*) from t") ?? -1
        #expect(count == fixture.rows.count, "\(context): count(*)", sourceLocation: sourceLocation)
    }

    @Test(arguments: Vec0KeyKind.allCases)
    func knnFollowsUpdatesAndDeletes(keyKind: Vec0KeyKind) throws {
        try Vec0Fixture.withRows(
            400, keyKind: keyKind, metric: .cosine, dimensions: Self.dimensions
        ) { db, fixture, random in
            let key = keyKind.keyColumn
            for _ in 0..<60 {
                let j = Int.random(in: fixture.rows.indices, using: &random)
                try fixture.update(db, row: j, vector: BruteForce.randomVector(Self.dimensions, using: &random))
            }
            for _ in 0..<60 {
                let j = Int.random(in: fixture.rows.indices, using: &random)
                try fixture.update(db, row: j, cat: ["a", "b", "c", nil].randomElement(using: &random) ?? nil)
            }
            // Embedding and metadata in one statement.
            let j = Int.random(in: fixture.rows.indices, using: &random)
            try fixture.update(db, row: j, vector: BruteForce.randomVector(Self.dimensions, using: &random), cat: "b")
            try Self.expectAgreement(db, fixture, &random, "after updates, \(keyKind)")

            for _ in 0..<100 {
                let j = Int.random(in: fixture.rows.indices, using: &random)
                try db.execute(sql: "delete from t where \(key) = ?", arguments: [fixture.rows[j].key])
                fixture.rows.remove(at: j)
            }
            try db.execute(sql: "delete from t where seq between 10 and 19")
            fixture.rows.removeAll { (10...19).contains($0.seq) }
            try Self.expectAgreement(db, fixture, &random, "after deletes, \(keyKind)")
        }
    }

    @Test func updatedRowsAreFoundAtTheirNewVectorOnly() throws {
        try BruteForce.openQueue().inDatabase { db in
            try db.execute(
                sql: """
                    create virtual table t using vec0(id text primary key, embedding float[2] distance_metric=l2, cat text);
                    insert into t values ('a', '[0, 0]', 'x'), ('b', '[10, 0]', 'x'), ('c', '[20, 0]', 'y');
                    update t set embedding = '[30, 0]' where id = 'a';
                    update t set cat = 'y' where id = 'b';
                    """)
            let near0 = try BruteForce.hits(
                db, "select id, distance from t where embedding match '[0, 0]' and k = 3 order by distance")
            #expect(
                near0 == [.init(key: "b", distance: 10), .init(key: "c", distance: 20), .init(key: "a", distance: 30)])
            let ys = try String.fetchAll(
                db, sql: "select id from t where embedding match '[0, 0]' and k = 3 and cat = 'y' order by distance")
            #expect(ys == ["b", "c"])
        }
    }

    @Test(arguments: [Vec0KeyKind.text, .integer])
    func insertOrReplaceReplacesAndAPlainDuplicateInsertFails(keyKind: Vec0KeyKind) throws {
        try Vec0Fixture.withRows(
            200, keyKind: keyKind, metric: .l2, dimensions: Self.dimensions
        ) { db, fixture, random in
            let victim = fixture.rows[17]
            let keyValue: DatabaseValueConvertible = keyKind == .integer ? Int64(victim.key)! : victim.key
            do {
                try db.execute(
                    sql: "insert into t(id, embedding, cat, seq) values (?, ?, 'a', 9999)",
                    arguments: [keyValue, BruteForce.blob(victim.vector)])
                Issue.record("a duplicate primary key was accepted")
            } catch let error as DatabaseError {
                #expect(error.message?.contains("UNIQUE constraint failed") == true, "\(error)")
            }
            #expect(try Int.fetchOne(db, sql: "select count(*) from t where seq = 9999") == 0)

            let v = BruteForce.randomVector(Self.dimensions, using: &random)
            try db.execute(
                sql: "insert or replace into t(id, embedding, cat, seq) values (?, ?, 'b', 17)",
                arguments: [keyValue, BruteForce.blob(v)])
            let stored = try GRDB.Row.fetchOne(
                db, sql: "select rowid, cat, seq from t where id = ?", arguments: [keyValue])
            #expect((stored?["cat"] as String?) == "b")
            fixture.rows[17].vector = v
            fixture.rows[17].cat = "b"
            if let rowid: Int64 = stored?["rowid"] { fixture.rows[17].rowid = rowid }
            #expect(try Int.fetchOne(db, sql: "select count(*) from t") == 200)
            try Self.expectAgreement(db, fixture, &random, "after INSERT OR REPLACE, \(keyKind)")
            let top = try fixture.knn(db, v, k: 1)
            #expect(top.first?.key == victim.key && top.first?.distance == 0, "\(top)")
        }
    }

    @Test func insertDeleteChurnReusesSlots() throws {
        try Vec0Fixture.withRows(
            300, keyKind: .none, metric: .dot, dimensions: Self.dimensions
        ) { db, fixture, random in
            let blocksBefore = try Int.fetchOne(db, sql: "select count(*) from t_vectors") ?? 0
            var next = 300
            for _ in 0..<20 {
                // Delete 100 rows, insert 100 new ones: the row count stays 300.
                for _ in 0..<100 {
                    let j = Int.random(in: fixture.rows.indices, using: &random)
                    try db.execute(sql: "delete from t where rowid = ?", arguments: [fixture.rows[j].rowid])
                    fixture.rows.remove(at: j)
                }
                let vectors = (0..<100).map { _ in BruteForce.randomVector(Self.dimensions, using: &random) }
                try fixture.insert(db, vectors: vectors, startingAt: next)
                next += 100
            }
            let blocksAfter = try Int.fetchOne(db, sql: "select count(*) from t_vectors") ?? 0
            let freeSlots = try Int.fetchOne(db, sql: "select count(*) from t_free") ?? 0
            #expect(
                blocksAfter <= max(blocksBefore, 1) + 1,
                "t_vectors grew from \(blocksBefore) to \(blocksAfter) blocks for a constant 300 rows")
            #expect(freeSlots <= 300, "\(freeSlots) free slots")
            try Self.expectAgreement(db, fixture, &random, "after churn")
        }
    }

    @Test func knnIsTheSameAfterClosingAndReopeningTheFile() throws {
        var random = ExtensionRandom.fromEnvironment()
        try withTemporaryFile("knn", named: "t.sqlite") { path in
            var fixture = Vec0Fixture(keyKind: .text, metric: .cosine, dimensions: Self.dimensions)
            let queries = (0..<8).map { _ in BruteForce.randomVector(Self.dimensions, using: &random) }
            var before: [[BruteForce.Hit]] = []
            do {
                let queue = try BruteForce.openQueue(path: path)
                try queue.write { db in
                    try fixture.populate(db, count: 500, using: &random)
                    try db.execute(sql: "delete from t where seq < 40")
                    try db.execute(
                        sql: "update t set embedding = ? where seq = 100", arguments: [BruteForce.blob(queries[0])])
                }
                fixture.rows.removeAll { $0.seq < 40 }
                if let j = fixture.rows.firstIndex(where: { $0.seq == 100 }) { fixture.rows[j].vector = queries[0] }
                before = try queue.read { db in try queries.map { try fixture.knn(db, $0, k: 10) } }
                try queue.close()
            }
            let reopened = try BruteForce.openQueue(path: path)
            try reopened.read { db in
                for (j, q) in queries.enumerated() {
                    let got = try fixture.knn(db, q, k: 10)
                    #expect(got == before[j], "query \(j) after reopening, seed \(random.seed)")
                    let (top, all) = fixture.expected(q, k: 10)
                    BruteForce.expectMatches(got, top, all: all, context: "after reopening, seed \(random.seed)")
                }
                try Self.expectAgreement(db, fixture, &random, "after reopening")
            }
            try reopened.close()
        }
    }

    @Test func rollbackUndoesInsertsUpdatesAndDeletes() throws {
        try Vec0Fixture.withRows(
            300, keyKind: .integer, metric: .l2, dimensions: Self.dimensions
        ) { db, fixture, random in
            let q = fixture.query(using: &random)
            try Self.expectAgreement(db, fixture, &random, "before the transaction")
            try db.execute(sql: "begin")
            try db.execute(sql: "delete from t where seq < 100")
            try db.execute(
                sql: "update t set embedding = ?, cat = 'b' where seq >= 100", arguments: [BruteForce.blob(q)])
            try db.execute(
                sql: "insert into t(id, embedding, cat, seq) values (1, ?, 'b', -1)", arguments: [BruteForce.blob(q)])
            // Inside the transaction the changes are visible: every row now sits at q.
            let inside = try fixture.knn(db, q, k: 3)
            #expect(inside.map(\.distance) == [0, 0, 0])
            try db.execute(sql: "rollback")
            try Self.expectAgreement(db, fixture, &random, "after ROLLBACK")
            let (top, all) = fixture.expected(q, k: 10)
            BruteForce.expectMatches(
                try fixture.knn(db, q, k: 10), top, all: all, context: "after ROLLBACK, seed \(random.seed)")
        }
    }

    @Test func rollbackToASavepointUndoesOnlyWhatFollowedIt() throws {
        try Vec0Fixture.withRows(
            200, keyKind: .text, metric: .cosine, dimensions: Self.dimensions
        ) { db, fixture, random in
            try db.execute(sql: "begin")
            // Kept: a delete and an insert before the savepoint.
            try db.execute(sql: "delete from t where seq < 20")
            fixture.rows.removeAll { $0.seq < 20 }
            let kept = (0..<30).map { _ in BruteForce.randomVector(Self.dimensions, using: &random) }
            try fixture.insert(db, vectors: kept, startingAt: 1000)
            try db.execute(sql: "savepoint s")
            // Undone: deletes, an update to a query's own vector, inserts.
            let q = fixture.query(using: &random)
            try db.execute(sql: "delete from t where seq between 50 and 120")
            try db.execute(sql: "update t set embedding = ? where seq >= 120", arguments: [BruteForce.blob(q)])
            var scratch = fixture
            try scratch.insert(db, vectors: [q, q, q], startingAt: 2000)
            try db.execute(sql: "rollback to s")
            try db.execute(sql: "release s")
            try Self.expectAgreement(db, fixture, &random, "after ROLLBACK TO a savepoint, inside the transaction")
            try db.execute(sql: "commit")
            try Self.expectAgreement(db, fixture, &random, "after ROLLBACK TO a savepoint and COMMIT")
        }
    }

    @Test func aSecondConnectionSeesCommittedWritesAndNotUncommittedOnes() throws {
        var random = ExtensionRandom.fromEnvironment()
        try withTemporaryFile("knn", named: "t.sqlite") { path in
            var fixture = Vec0Fixture(keyKind: .text, metric: .l2, dimensions: Self.dimensions)
            let writer = try BruteForce.openQueue(path: path)
            let reader = try BruteForce.openQueue(path: path)
            try writer.write { db in try fixture.populate(db, count: 300, using: &random) }
            // The reader searches once, so it holds a cached copy that later commits must refresh.
            try reader.read { db in try Self.expectAgreement(db, fixture, &random, "second connection, first read") }

            let q = BruteForce.randomVector(Self.dimensions, using: &random)
            try writer.write { db in
                try db.execute(sql: "delete from t where seq < 50")
                try db.execute(
                    sql: "update t set embedding = ?, cat = 'b' where seq = 200", arguments: [BruteForce.blob(q)])
                try fixture.insert(
                    db, vectors: [q, BruteForce.randomVector(Self.dimensions, using: &random)], startingAt: 500)
            }
            fixture.rows.removeAll { $0.seq < 50 }
            if let j = fixture.rows.firstIndex(where: { $0.seq == 200 }) {
                fixture.rows[j].vector = q
                fixture.rows[j].cat = "b"
            }
            try reader.read { db in
                try Self.expectAgreement(db, fixture, &random, "second connection after the writer's commit")
                let (top, all) = fixture.expected(q, k: 2)
                BruteForce.expectMatches(try fixture.knn(db, q, k: 2), top, all: all, context: "seed \(random.seed)")
            }

            // An uncommitted write is not seen by the reader.
            try writer.inDatabase { db in
                try db.execute(sql: "begin")
                try db.execute(sql: "delete from t")
                try reader.read { rdb in
                    #expect(try Int.fetchOne(rdb, sql: "select count(*) from t") == fixture.rows.count)
                    try Self.expectAgreement(rdb, fixture, &random, "second connection during an open write")
                }
                try db.execute(sql: "rollback")
            }
            try writer.close()
            try reader.close()
        }
    }

    @Test func aFailedMultiRowInsertWritesNothing() throws {
        try BruteForce.openQueue().inDatabase { db in
            try db.execute(
                sql: """
                    create virtual table t using vec0(id text primary key, embedding float[2], cat text);
                    insert into t values ('a', '[1, 0]', 'x');
                    """)
            for (sql, words) in [
                ("insert into t values ('b', '[0, 1]', 'x'), ('c', '[1, 2, 3]', 'x')", ["3 dimensions", "has 2"]),
                ("insert into t values ('b', '[0, 1]', 'x'), ('a', '[1, 1]', 'x')", ["UNIQUE constraint failed"]),
                ("insert into t values ('b', '[0, 1]', 'x'), ('c', x'0000c07f0000c07f', 'x')", ["NaN"]),
                ("insert into t values ('b', '[0, 1]', 'x'), ('c', NULL, 'x')", ["NULL"]),
            ] {
                do {
                    try db.execute(sql: sql)
                    Issue.record("accepted: \(sql)")
                } catch let error as DatabaseError {
                    for word in words {
                        #expect(error.message?.contains(word) == true, "\(sql): \(error)")
                    }
                }
                #expect(try String.fetchAll(db, sql: "select id from t") == ["a"], "partial write after: \(sql)")
                let knn = try String.fetchAll(
                    db, sql: "select id from t where embedding match '[0, 1]' and k = 5 order by distance")
                #expect(knn == ["a"], "the search sees a partial write after: \(sql)")
            }
        }
    }

    @Test func cursorsSharingKeptStatementsStayIndependent() throws {
        // Point lookups, scans and KNN rows reuse statements kept on the table; two cursors
        // of one table open at once must not share one, and a rename must drop them.
        try BruteForce.openQueue().inDatabase { db in
            try db.execute(
                sql: """
                    create virtual table t using vec0(id text primary key, embedding float[2], cat text);
                    insert into t values ('a', '[1, 0]', 'x'), ('b', '[0, 1]', 'y'), ('c', '[1, 1]', 'z');
                    """)
            let pair = try Row.fetchOne(
                db, sql: "select a.cat, b.cat from t as a, t as b where a.id = 'a' and b.id = 'c'")
            #expect(pair?[0] as String? == "x" && pair?[1] as String? == "z")
            let nested = try String.fetchAll(
                db,
                sql: """
                    select a.id || (select b.cat from t as b where b.id = a.id) from t as a order by a.id
                    """)
            #expect(nested == ["ax", "by", "cz"])
            let knnJoin = try String.fetchAll(
                db,
                sql: """
                    select k.id || ':' || p.cat from t as k, t as p
                    where k.embedding match '[1, 0]' and k.k = 2 and p.rowid = k.rowid order by k.distance
                    """)
            #expect(knnJoin == ["a:x", "c:z"])
            for id in ["a", "b", "c", "a"] {
                #expect(try String.fetchOne(db, sql: "select cat from t where id = ?", arguments: [id]) != nil)
            }
            try db.execute(sql: "alter table t rename to u")
            #expect(try String.fetchAll(db, sql: "select cat from u where id = 'b'") == ["y"])
            #expect(try String.fetchAll(db, sql: "select id from u where embedding match '[0, 1]' and k = 1") == ["b"])
            #expect(try Int.fetchOne(db, sql: "select count(*) from u") == 3)
        }
    }
}
