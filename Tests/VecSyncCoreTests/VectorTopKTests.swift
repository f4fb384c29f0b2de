import Foundation
import GRDB
import Testing
import VecSyncTestSupport

/// `vector_top_k` over a libSQL vector index gives the brute-force answer over the table's
/// rows, through every kind of change to the table.
@Suite("vector_top_k equals brute force")
struct VectorTopKTests {
    static let dimensions = 16
    static let metrics: [BruteForce.Metric] = [.cosine, .l2]

    @Test(arguments: metrics, [true, false])
    func topKEqualsBruteForceWhetherIndexedBeforeOrAfterTheRows(metric: BruteForce.Metric, indexFirst: Bool) throws {
        try VectorTopKFixture.withRows(
            800, metric: metric, dimensions: Self.dimensions, indexFirst: indexFirst
        ) { db, fixture, random in
            try fixture.expectAgreement(
                db, &random, indexFirst ? "index before the rows" : "index on existing rows (backfill)")
            // k beyond the row count: every row with an embedding, NULL embeddings skipped.
            let withVectors = fixture.rows.values.filter { $0.vector != nil }.count
            let q = fixture.query(using: &random)
            let every = try VectorTopKFixture.topK(db, q, k: 100_000)
            #expect(every.count == withVectors, "seed \(random.seed)")
            let all = try fixture.reference(db).nearest(to: q)
            BruteForce.expectMatches(every, all, all: all, context: "k = 100000, seed \(random.seed)")
        }
    }

    @Test(arguments: metrics)
    func filtersAfterTheJoinKeepTheMatchingRowsOfTheTopK(metric: BruteForce.Metric) throws {
        try VectorTopKFixture.withRows(
            600, metric: metric, dimensions: Self.dimensions, indexFirst: true
        ) { db, fixture, random in
            let reference = try fixture.reference(db, byID: true)
            var checked = 0
            for _ in 0..<20 {
                let q = fixture.query(using: &random)
                let k = Int.random(in: 5...60, using: &random)
                let all = reference.nearest(to: q)
                // libSQL's semantics: the k nearest, then the join's filter.
                if all.count > k, abs(all[k].distance - all[k - 1].distance) <= 1e-6 * max(1, abs(all[k].distance)) {
                    continue  // a near tie at the cut: either row may be in the k
                }
                let expected = all.prefix(k).filter {
                    fixture.rows[$0.key]?.thread == "t3" && fixture.rows[$0.key]?.status == "approved"
                }
                let got = try BruteForce.hits(
                    db,
                    """
                    select m.id, v.distance from vector_top_k('docs_idx', ?, ?) as v
                      join docs m on m.rowid = v.id
                     where m.thread = 't3' and m.status = 'approved'
                     order by v.distance, v.id
                    """, [BruteForce.blob(q), k])
                BruteForce.expectMatches(
                    got, Array(expected), all: all, context: "join filter, k = \(k), seed \(random.seed)")
                // libSQL's other form: rowid in (select id from vector_top_k(...)).
                let ids = try String.fetchAll(
                    db,
                    sql: """
                        select id from docs where rowid in (select id from vector_top_k('docs_idx', ?, ?)) order by id
                        """, arguments: [BruteForce.blob(q), k])
                #expect(ids == all.prefix(k).map(\.key).sorted(), "rowid in (…), k = \(k), seed \(random.seed)")
                checked += 1
            }
            #expect(checked >= 10, "too many near ties, seed \(random.seed)")
        }
    }

    @Test func theHiddenDistanceColumnIsTheMetricAndSelectStarIsJustTheID() throws {
        try BruteForce.openQueue().inDatabase { db in
            try db.execute(
                sql: """
                    create table docs(id text primary key, embedding F32_BLOB(2));
                    create index docs_idx on docs(libsql_vector_idx(embedding, 'metric=l2'));
                    insert into docs values ('a', vector32('[0, 0]')), ('b', vector32('[3, 4]')), ('c', NULL), ('d', vector32('[0, 1]'));
                    """)
            let star = try GRDB.Row.fetchAll(db, sql: "select * from vector_top_k('docs_idx', vector32('[0, 0]'), 10)")
            #expect(star.map { Array($0.columnNames) } == [["id"], ["id"], ["id"]])
            #expect(star.map { $0[0] as Int64 } == [1, 4, 2])
            let withDistance = try BruteForce.hits(
                db, "select id, distance from vector_top_k('docs_idx', vector32('[0, 0]'), 10)")
            #expect(
                withDistance == [
                    .init(key: "1", distance: 0), .init(key: "4", distance: 1), .init(key: "2", distance: 5),
                ])
            let empty = try Int.fetchOne(
                db, sql: "select count(*) from vector_top_k('docs_idx', vector32('[0, 0]'), 10) where 0")
            #expect(empty == 0)
            try db.execute(sql: "delete from docs")
            #expect(
                try Int64.fetchAll(db, sql: "select id from vector_top_k('docs_idx', vector32('[0, 0]'), 10)").isEmpty,
                "an empty index returns no rows")
        }
    }

    @Test(arguments: metrics)
    func topKFollowsUpdatesDeletesAndInsertOrReplace(metric: BruteForce.Metric) throws {
        try VectorTopKFixture.withRows(
            400, metric: metric, dimensions: Self.dimensions, indexFirst: true
        ) { db, fixture, random in
            try fixture.expectAgreement(db, &random, "before changes")  // builds the store
            var ids = fixture.rows.keys.sorted()
            for n in 0..<80 {
                let id = ids.randomElement(using: &random) ?? ""
                // Mostly new vectors; some to NULL, some back from NULL.
                let v: [Float]? = n % 8 == 0 ? nil : BruteForce.randomVector(Self.dimensions, using: &random)
                try db.execute(
                    sql: "update docs set embedding = ? where id = ?", arguments: [v.map(BruteForce.blob), id])
                fixture.rows[id]?.vector = v
            }
            try db.execute(sql: "update docs set status = 'archived' where thread = 't1'")  // not the vector
            for key in fixture.rows.keys where fixture.rows[key]?.thread == "t1" {
                fixture.rows[key]?.status = "archived"
            }
            try fixture.expectAgreement(db, &random, "after updates")

            for _ in 0..<60 {
                let id = ids.remove(at: Int.random(in: ids.indices, using: &random))
                try db.execute(sql: "delete from docs where id = ?", arguments: [id])
                fixture.rows[id] = nil
            }
            try fixture.expectAgreement(db, &random, "after deletes")

            // INSERT OR REPLACE on the text primary key: the old row (and rowid) goes.
            for _ in 0..<30 {
                let id = ids.randomElement(using: &random) ?? ""
                let v = BruteForce.randomVector(Self.dimensions, using: &random)
                try fixture.put(db, id, .init(vector: v, thread: "t9", status: "approved"), orReplace: true)
            }
            let q = BruteForce.randomVector(Self.dimensions, using: &random)
            try db.execute(
                sql: """
                    insert into docs(id, thread, status, embedding) values (?, 't0', 'approved', ?)
                    on conflict(id) do update set embedding = excluded.embedding
                    """, arguments: [ids[0], BruteForce.blob(q)])
            fixture.rows[ids[0]]?.vector = q
            try fixture.expectAgreement(db, &random, "after INSERT OR REPLACE and upsert")
            #expect(try Int.fetchOne(db, sql: "select count(*) from docs") == fixture.rows.count)
            let top = try VectorTopKFixture.topK(db, q, k: 1)
            let rowid = try Int64.fetchOne(db, sql: "select rowid from docs where id = ?", arguments: [ids[0]])
            #expect(top.first?.key == rowid.map { "\($0)" }, "seed \(random.seed)")
        }
    }

    @Test func rollbackAndRollbackToASavepointLeaveTheIndexAsTheTable() throws {
        try VectorTopKFixture.withRows(
            300, metric: .cosine, dimensions: Self.dimensions, indexFirst: true
        ) { db, fixture, random in
            try fixture.expectAgreement(db, &random, "before")
            let q = BruteForce.randomVector(Self.dimensions, using: &random)
            try db.execute(sql: "begin")
            try db.execute(sql: "delete from docs where thread = 't2'")
            try db.execute(sql: "update docs set embedding = ? where thread = 't4'", arguments: [BruteForce.blob(q)])
            try db.execute(sql: "insert into docs values ('new', 't0', 'approved', ?)", arguments: [BruteForce.blob(q)])
            #expect(try VectorTopKFixture.topK(db, q, k: 2).map(\.distance).allSatisfy { abs($0) < 1e-6 })
            try db.execute(sql: "rollback")
            try fixture.expectAgreement(db, &random, "after ROLLBACK")

            try db.execute(sql: "begin")
            try db.execute(sql: "delete from docs where thread = 't5'")
            for key in fixture.rows.keys where fixture.rows[key]?.thread == "t5" { fixture.rows[key] = nil }
            try db.execute(sql: "savepoint s")
            try db.execute(sql: "delete from docs where thread = 't6'")
            try db.execute(sql: "update docs set embedding = ? where thread = 't7'", arguments: [BruteForce.blob(q)])
            try db.execute(
                sql: "insert or replace into docs values ('new', 't0', 'approved', ?)", arguments: [BruteForce.blob(q)])
            try db.execute(sql: "rollback to s")
            try db.execute(sql: "release s")
            try fixture.expectAgreement(db, &random, "after ROLLBACK TO a savepoint")
            try db.execute(sql: "commit")
            try fixture.expectAgreement(db, &random, "after ROLLBACK TO a savepoint and COMMIT")
        }
    }

    @Test func writesFromASecondConnectionAreSeen() throws {
        var random = ExtensionRandom.fromEnvironment()
        try withTemporaryFile("knn", named: "docs.sqlite") { path in
            var fixture = VectorTopKFixture(metric: .l2, dimensions: Self.dimensions)
            let reader = try BruteForce.openQueue(path: path)
            let writer = try BruteForce.openQueue(path: path)
            try writer.write { db in try fixture.populate(db, count: 300, indexFirst: true, using: &random) }
            // The reader searches first (a read-write connection: see the read-only test below).
            try reader.inDatabase { db in try fixture.expectAgreement(db, &random, "reader, first search") }
            let q = BruteForce.randomVector(Self.dimensions, using: &random)
            try writer.write { db in
                try db.execute(sql: "delete from docs where thread in ('t1', 't2')")
                try fixture.put(db, "from-writer", .init(vector: q, thread: "t0", status: "approved"))
                try fixture.put(
                    db, String(format: "m%05d", 7919), .init(vector: q, thread: "t0", status: "approved"),
                    orReplace: true)
                try db.execute(sql: "update docs set embedding = NULL where thread = 't3'")
            }
            for key in fixture.rows.keys {
                switch fixture.rows[key]?.thread {
                case "t1", "t2": fixture.rows[key] = nil
                case "t3": fixture.rows[key]?.vector = nil
                default: break
                }
            }
            try reader.inDatabase { db in
                try fixture.expectAgreement(db, &random, "reader after the writer's commit")
                let top = try VectorTopKFixture.topK(db, q, k: 2)
                #expect(top.map(\.distance) == [0, 0], "seed \(random.seed)")
            }
            // The writer again, after the reader's searches.
            try writer.read { db in try fixture.expectAgreement(db, &random, "writer after the reader") }
            try writer.close()
            try reader.close()
        }
    }

    @Test func rebuildAndReindexChangeNothingAndDropIndexRemovesIt() throws {
        try VectorTopKFixture.withRows(
            300, metric: .cosine, dimensions: Self.dimensions, indexFirst: false
        ) { db, fixture, random in
            let q = fixture.query(using: &random)
            let before = try VectorTopKFixture.topK(db, q, k: 25)
            _ = try DatabaseValue.fetchOne(db, sql: "select vecsync_rebuild('docs_idx')")
            #expect(try VectorTopKFixture.topK(db, q, k: 25) == before, "after vecsync_rebuild, seed \(random.seed)")
            try fixture.expectAgreement(db, &random, "after vecsync_rebuild")
            try db.execute(sql: "reindex docs_idx")
            #expect(try VectorTopKFixture.topK(db, q, k: 25) == before, "after REINDEX, seed \(random.seed)")
            try fixture.expectAgreement(db, &random, "after REINDEX")
            try db.execute(sql: "drop index docs_idx")
            do {
                _ = try VectorTopKFixture.topK(db, q, k: 5)
                Issue.record("vector_top_k on a dropped index returned rows")
            } catch let error as DatabaseError {
                #expect(error.message?.contains("no such index: docs_idx") == true, "\(error)")
            }
            // The table still takes writes after its index is gone.
            try fixture.put(db, "after-drop", .init(vector: q, thread: "t0", status: "approved"))
            // Recreating the index backfills the current rows.
            try db.execute(sql: fixture.indexSQL)
            try fixture.expectAgreement(db, &random, "after DROP INDEX and CREATE INDEX")
        }
    }

    @Test func aReadOnlyConnectionCanSearchAnIndexNobodyHasSearchedYet() throws {
        var random = ExtensionRandom.fromEnvironment()
        try withTemporaryFile("knn", named: "docs.sqlite") { path in
            var fixture = VectorTopKFixture(metric: .cosine, dimensions: 8)
            let writer = try BruteForce.openQueue(path: path)
            try writer.write { db in try fixture.populate(db, count: 100, indexFirst: true, using: &random) }
            try writer.close()
            // A read-only search of an index created and filled elsewhere: libSQL answers it.
            let reader = try BruteForce.openQueue(path: path)
            do {
                try reader.read { db in try fixture.expectAgreement(db, &random, "read-only first search") }
            } catch {
                Issue.record(
                    "vector_top_k on a read-only connection, before any search built the index store: \(error)")
            }
            try reader.close()
        }
    }

    @Test func aRowOfTheWrongDimensionDoesNotLeaveAnEmptyIndexBehind() throws {
        try BruteForce.openQueue().inDatabase { db in
            try db.execute(
                sql: """
                    create table docs(id text primary key, embedding F32_BLOB(4));
                    create index docs_idx on docs(libsql_vector_idx(embedding));
                    insert into docs values ('a', vector32('[1, 0, 0, 0]'));
                    """)
            // libSQL refuses this insert; if it gets in, the first search fails on it...
            try? db.execute(sql: "insert into docs values ('c', vector32('[1, 0]'))")
            _ = try? Int64.fetchAll(db, sql: "select id from vector_top_k('docs_idx', vector32('[1, 0, 0, 0]'), 5)")
            // ...and once it is gone, the index must hold row 'a' again.
            try db.execute(sql: "delete from docs where id = 'c'")
            let ids = try Int64.fetchAll(
                db, sql: "select id from vector_top_k('docs_idx', vector32('[1, 0, 0, 0]'), 5)")
            #expect(
                ids == [1],
                """
                create table docs(id text primary key, embedding F32_BLOB(4));
                create index docs_idx on docs(libsql_vector_idx(embedding));
                insert into docs values ('a', vector32('[1, 0, 0, 0]'));
                insert into docs values ('c', vector32('[1, 0]'));     -- accepted
                select id from vector_top_k('docs_idx', vector32('[1, 0, 0, 0]'), 5);  -- error
                delete from docs where id = 'c';
                select id from vector_top_k('docs_idx', vector32('[1, 0, 0, 0]'), 5);
                expected [1], got \(ids)
                """)
        }
    }
}
