import Foundation
import GRDB
import Testing
import VecSyncTestSupport

/// Behaviours sqlite-vec 0.1.9's own tests check, where this extension once answered
/// differently: the kind of error a vec0 write fails with, how `k` is read, and the distance
/// a KNN query reports (sqlite-vec's float32 figure, in the exact order).
@Suite("vec0 as sqlite-vec's own tests see it")
struct SQLiteVecConformanceTests {
    /// The result code of `sql` on `db`, or nil when it succeeds.
    static func resultCode(_ db: Database, _ sql: String) -> ResultCode? {
        do {
            try db.execute(sql: sql)
            return nil
        } catch let error as DatabaseError {
            return error.resultCode
        } catch {
            return .SQLITE_INTERNAL
        }
    }

    @Test("a duplicate key and a rowid that is no integer fail as sqlite-vec's operational errors")
    func writeErrorsHaveSqliteVecsKind() throws {
        try BruteForce.openQueue().inDatabase { db in
            try db.execute(
                sql: """
                    create virtual table t using vec0(e float[2]);
                    create virtual table p using vec0(id text primary key, e float[2]);
                    insert into t(rowid, e) values (1, '[1, 1]');
                    insert into p(id, e) values ('a', '[1, 1]');
                    """)
            #expect(Self.resultCode(db, "insert into t(rowid, e) values (1, '[2, 2]')") == .SQLITE_ERROR)
            #expect(Self.resultCode(db, "insert into p(id, e) values ('a', '[2, 2]')") == .SQLITE_ERROR)
            #expect(Self.resultCode(db, "insert into t(rowid, e) values (1.5, '[2, 2]')") == .SQLITE_ERROR)
            #expect(Self.resultCode(db, "insert into t(rowid, e) values ('abc', '[2, 2]')") == .SQLITE_ERROR)
            #expect(Self.resultCode(db, "update t set rowid = 'x' where rowid = 1") == .SQLITE_ERROR)
            // OR FAIL and OR ROLLBACK need SQLITE_CONSTRAINT to do what they say.
            #expect(Self.resultCode(db, "insert or fail into t(rowid, e) values (1, '[2, 2]')") == .SQLITE_CONSTRAINT)
            // OR IGNORE and OR REPLACE are applied (sqlite-vec refuses both).
            #expect(Self.resultCode(db, "insert or ignore into t(rowid, e) values (1, '[2, 2]')") == nil)
            #expect(Self.resultCode(db, "insert or replace into t(rowid, e) values (1, '[3, 3]')") == nil)
            #expect(
                try String.fetchOne(db, sql: "select vec_to_json(e) from t where rowid = 1") == "[3.000000,3.000000]")
        }
        try BruteForce.openQueue().inDatabase { db in
            try db.execute(
                sql: """
                    create table log(x);
                    create virtual table t using vec0(e float[2]);
                    insert into t(rowid, e) values (1, '[1, 1]');
                    begin;
                    insert into log values (1);
                    """)
            #expect(
                Self.resultCode(db, "insert or rollback into t(rowid, e) values (1, '[2, 2]')") == .SQLITE_CONSTRAINT)
            #expect(!db.isInsideTransaction, "OR ROLLBACK rolled the transaction back")
            #expect(try Int.fetchOne(db, sql: "select count(*) from log") == 0)
        }
    }

    @Test("every reported distance is vec_distance_l2 / _cosine of the row, the rows in exact order, ties by rowid")
    func reportedDistancesAreSqliteVecsFiguresInExactOrder() throws {
        var random = SeededRandom(defaultSeed: 0x5EED_C0F0)
        let seed = random.seed
        let dimensions = 37
        for metric in [BruteForce.Metric.l2, .cosine] {
            try BruteForce.openQueue().inDatabase { db in
                try db.execute(
                    sql: "create virtual table t using vec0(e float[\(dimensions)] distance_metric=\(metric.rawValue))")
                var rows: [[Float]] = (0..<200).map { _ in BruteForce.randomVector(dimensions, using: &random) }
                rows += Array(repeating: rows[7], count: 3)  // exact duplicates: ties
                for (i, row) in rows.enumerated() {
                    try db.execute(
                        sql: "insert into t(rowid, e) values (?, ?)", arguments: [i + 1, BruteForce.blob(row)])
                }
                let function = metric == .l2 ? "vec_distance_l2" : "vec_distance_cosine"
                for q in 0..<20 {
                    let query = q == 0 ? rows[7] : BruteForce.randomVector(dimensions, using: &random)
                    let hits = try GRDB.Row.fetchAll(
                        db,
                        sql: """
                            select t.rowid as id, t.distance as d, \(function)(t.e, ?1) as f
                            from t where t.e match ?1 and k = 25
                            """,
                        arguments: [BruteForce.blob(query)])
                    #expect(hits.count == 25, "seed \(seed) \(metric) query \(q)")
                    for hit in hits {
                        #expect(
                            (hit["d"] as Double) == (hit["f"] as Double),
                            "seed \(seed) \(metric) query \(q): row \(hit["id"] as Int64) reports \(hit["d"] as Double), \(function) gives \(hit["f"] as Double)"
                        )
                    }
                    // The order is the exact (double) distance, then the rowid.
                    let exact = hits.map { hit -> (Double, Int64) in
                        let id = hit["id"] as Int64
                        return (metric.distance(query, rows[Int(id) - 1]), id)
                    }
                    let ordered = exact.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
                    #expect(
                        exact.map(\.1) == ordered.map(\.1),
                        "seed \(seed) \(metric) query \(q): \(exact.map(\.1))")
                    if q == 0 {
                        #expect(
                            hits.prefix(4).map { $0["id"] as Int64 } == [8, 201, 202, 203], "seed \(seed) \(metric)")
                    }
                }
            }
        }
    }

}
