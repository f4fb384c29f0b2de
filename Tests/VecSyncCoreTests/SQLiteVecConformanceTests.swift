import Foundation
import GRDB
import Testing
import VecSyncTestSupport

/// Behaviours sqlite-vec 0.1.9's own tests check, where this extension once answered
/// differently: the kind of error a vec0 write fails with, how `k` is read, and the distance
/// a KNN query reports (sqlite-vec's float32 figure, in the exact order).
@Suite("vec0 as sqlite-vec's own tests see it")
struct SQLiteVecConformanceTests {
    static let table = """
        create virtual table t using vec0(e float[2]);
        insert into t(rowid, e) values (1, '[1, 1]'), (2, '[2, 2]'), (3, '[3, 3]');

        """

    static let cases: [SQLCase] = [
        SQLCase(
            "k is read as sqlite-vec reads it: 2.5 is 2, text that is a number is that number",
            table + """
                select 'a', rowid from t where e match '[1, 1]' and k = 2.5;
                select 'b', rowid from t where e match '[1, 1]' and k = '1';
                """,
            rows: ["a|1", "a|2", "b|1"]),
        SQLCase(
            "k = NULL, and a k that is no number, return no row, as in sqlite-vec",
            table + """
                select 'null', rowid from t where e match '[1, 1]' and k = NULL;
                select 'text', rowid from t where e match '[1, 1]' and k = 'x';
                select 'blob', rowid from t where e match '[1, 1]' and k = x'02';
                select 'done';
                """,
            rows: ["done"]),
        SQLCase(
            "a negative k is still refused, as in sqlite-vec",
            table + "select rowid from t where e match '[1, 1]' and k = -1;",
            error: ["k must be a non-negative integer, got -1"]),
        SQLCase(
            "a KNN query reports sqlite-vec's float32 distance: sqrt(2) as float32",
            table + "select rowid, distance from t where e match '[1, 1]' and k = 2;",
            rows: ["1|0.0", "2|1.41421353816986"]),
        SQLCase(
            "a distance range bounds the reported distance, so paging by the last one seen repeats no row",
            table + """
                select rowid, distance from t where e match '[1, 1]' and k = 1 and distance > 0;
                select rowid from t where e match '[1, 1]' and k = 5
                  and distance > (select distance from t where e match '[1, 1]' and k = 1 and distance > 0);
                """,
            rows: ["2|1.41421353816986", "3"]),
    ]

    /// The checks of sqlite-vec's tests/test-loadable.py, each answered here with the
    /// values sqlite-vec 0.1.9 gives for the same SQL (bytes as hex).
    static let loadableCases: [SQLCase] = [
        SQLCase(
            "vec_bit passes its bytes through",
            "select hex(vec_bit(X'FF')), subtype(vec_bit(X'FF'));",
            rows: ["FF|224"]),
        SQLCase(
            "vec_f32 of JSON gives float32 bytes",
            "select hex(vec_f32('[0]')), hex(vec_f32('[1, -1, 10, -10]')), hex(vec_f32('[-0, 0, .0001, -.0001]'));",
            rows: ["00000000|0000803F000080BF00002041000020C1|000000800000000017B7D13817B7D1B8"]),
        SQLCase(
            "vec_int8 of bytes and of JSON",
            "select hex(vec_int8(X'000f')), hex(vec_int8('[1, 2, 3]')), subtype(vec_int8(X'00'));",
            rows: ["000F|010203|225"]),
        SQLCase(
            "vec_distance_cosine gives sqlite-vec's float32 figure",
            "select vec_distance_cosine('[1.1, 1.0]', '[1.2, 1.2]') = 0.001131898257881403;",
            rows: ["1"]),
        SQLCase(
            "vec_distance_cosine of int8 vectors",
            "select printf('%.6f', vec_distance_cosine(vec_int8('[1,2,3]'), vec_int8('[-9,-8,-7]')));",
            rows: ["1.882659"]),
        SQLCase(
            "vec_distance_hamming counts differing bits",
            "select vec_distance_hamming(vec_bit(X'FF'), vec_bit(X'00')), vec_distance_hamming(vec_bit(X'FF'), vec_bit(X'01')), vec_distance_hamming(vec_bit(X'ab'), vec_bit(X'ab'));",
            rows: ["8.0|7.0|0.0"]),
        SQLCase(
            "vec_distance_l1 of int8 does not overflow",
            "select vec_distance_l1(vec_int8('[127,127,127]'), vec_int8('[-128,-128,-128]')), vec_distance_l1(vec_int8('[-128, 127]'), vec_int8('[127, -128]'));",
            rows: ["765|510"]),
        SQLCase(
            "vec_distance_l2 of float32 and int8",
            "select printf('%.6f', vec_distance_l2('[1.2, 0.1]', '[0.4, -0.4]')), printf('%.6f', vec_distance_l2(vec_int8('[1,2,3]'), vec_int8('[-9,-8,-7]')));",
            rows: ["0.943398|17.320509"]),
        SQLCase(
            "vec_length of each type",
            "select vec_length(X'AABBCCDD01020304'), vec_length(vec_int8(X'AABBCCDD')), vec_length(vec_bit(X'AABBCCDD'));",
            rows: ["2|4|32"]),
        SQLCase(
            "vec_normalize gives sqlite-vec's bytes",
            "select hex(vec_normalize(vec_f32('[1, 2, -1, -2]')));",
            rows: ["9BE8A13E9BE8213F9BE8A1BE9BE821BF"]),
        SQLCase(
            "vec_slice of each type",
            "select hex(vec_slice(vec_f32('[1.1,2.2,3.3]'), 0, 2)), hex(vec_slice(vec_int8('[1,2,3]'), 1, 3)), hex(vec_slice(vec_bit(X'AABBCCDD'), 8, 24));",
            rows: ["CDCC8C3FCDCC0C40|0203|BBCC"]),
        SQLCase(
            "vec_add and vec_sub keep the type",
            "select hex(vec_add('[.1]', '[.2]')), hex(vec_add(vec_int8('[1]'), vec_int8('[2]'))), hex(vec_sub('[.1]', '[.2]')), hex(vec_sub(vec_int8('[11]'), vec_int8('[2]')));",
            rows: ["9A99993E|03|CDCCCCBD|09"]),
        SQLCase(
            "vec_to_json of each type",
            "select vec_to_json('[1, 2, 3]'), vec_to_json(X'00000000000080bf'), vec_to_json(vec_int8(X'04ff')), vec_to_json(vec_bit(X'0f'));",
            rows: ["[1.000000,2.000000,3.000000]|[0.000000,-1.000000]|[4,-1]|[1,1,1,1,0,0,0,0]"]),
        SQLCase(
            "vec_quantize_binary and vec_quantize_int8",
            "select hex(vec_quantize_binary('[-1, -1, -1, -1, 1, 1, 1, 1]')), hex(vec_quantize_int8('[-1, 0.5, 1]', 'unit'));",
            rows: ["F0|803F7E"]),
        SQLCase(
            "vec_each lists float32, int8 and bit elements",
            "select group_concat(rowid || ':' || value, ' ') from vec_each(vec_f32('[1.0, 2.0, 3.0]')) union all select group_concat(rowid || ':' || value, ' ') from vec_each(vec_int8('[1, -2]')) union all select group_concat(value, '') from vec_each(vec_bit(X'0F'));",
            rows: ["0:1.0 1:2.0 2:3.0", "0:1 1:-2", "00001111"]),
        SQLCase(
            "text k reading as a number and a k that reads as 0, in a vec0 KNN",
            "create virtual table t using vec0(e float[2]); insert into t(rowid, e) values (1, '[1,1]'), (2, '[2,2]'); select count(*) from t where e match '[1,1]' and k = '2'; select count(*) from t where e match '[1,1]' and k = -0.5;",
            rows: ["2", "0"]),
    ]

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

    /// Every case of every group above, each in-process and in the sqlite3 shell.
    static let everyCase: [SQLCase] = cases + loadableCases

    @Test("vec0 and the scalar functions answer as sqlite-vec 0.1.9 does", arguments: SQLPath.allCases, everyCase)
    func answersAsSqliteVec(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
