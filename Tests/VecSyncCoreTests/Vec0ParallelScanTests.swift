import Foundation
import GRDB
import Testing
import VecSyncCore

/// A vec0 KNN scan of a large table runs on up to `1 + PRAGMA threads` threads, each over
/// its own run of chunks, and answers exactly as one thread does: the same rows, in the same
/// order, ties by ascending rowid, for every kind of column and quantizer.
///
/// The tables hold 70,000 rows (above four times the 16,384 slots a thread must have) of
/// very few distinct vectors, so that thousands of rows tie with the query exactly, and
/// their rowids are a permutation of their slots (row i is stored with rowid
/// `i·7919 mod 70000 + 1`): the first rows scanned are not the smallest rowids, and a scan
/// that kept ties by arrival, or merged its threads' candidates by slot, would answer
/// otherwise.
@Suite("vec0 scans on several threads")
struct Vec0ParallelScanTests {
    static let rowCount = 70_000

    /// The rowid row `i` is stored with.
    static func rowid(_ i: Int) -> Int { i * 7919 % rowCount + 1 }

    /// Zeros after the first two elements of a 64-element vector, as SQL text (`,0,0,…`).
    static func tail(_ element: String) -> String {
        "replace(hex(zeroblob(62)), '00', '," + element + "')"
    }

    /// One kind of vector column, with its rows and query.
    struct Column: Sendable, CustomTestStringConvertible {
        var name: String
        /// The column's declaration in `create virtual table … using vec0(…)`.
        var declaration: String
        /// The stored vector of row `i` (an SQL expression over `i`).
        var value: String
        /// The query vector (an SQL expression).
        var query: String
        /// Which rows equal the query: the answer is the smallest rowids among them.
        var matches: @Sendable (Int) -> Bool
        /// Whether the answer is those rowids: a 1-bit quantizer ranks its candidates by
        /// an estimate that can put another vector first; only its sameness is checked.
        var exact = true

        var testDescription: String { name }
    }

    /// Float vectors `[i mod 7, i mod 5, 0, …]`: 35 distinct ones; the query is
    /// `[3, 2, 0, …]`, equal to the rows with i ≡ 17 (mod 35).
    static let floatValue = "'[' || (i % 7) || ',' || (i % 5) || \(tail("0")) || ']'"
    static let floatQuery = "'[3,2' || \(tail("0")) || ']'"
    static let isFloatMatch: @Sendable (Int) -> Bool = { $0 % 35 == 17 }

    static let columns: [Column] = [
        Column(
            name: "float32 l2", declaration: "e float[64]", value: floatValue, query: floatQuery,
            matches: isFloatMatch),
        Column(
            name: "float32 l1", declaration: "e float[64] distance_metric=l1", value: floatValue,
            query: floatQuery, matches: isFloatMatch),
        Column(
            name: "int8 column", declaration: "e int8[64]", value: "vec_int8(\(floatValue))",
            query: "vec_int8(\(floatQuery))", matches: isFloatMatch),
        // Signs of [i mod 7 - 3, i mod 5 - 2, -1, …]: four distinct bit vectors.
        Column(
            name: "bit column", declaration: "e bit[64]",
            value: "vec_quantize_binary(vec_f32('[' || ((i % 7) - 3) || ',' || ((i % 5) - 2) || \(tail("-1")) || ']'))",
            query: "vec_quantize_binary(vec_f32('[1,1' || \(tail("-1")) || ']'))",
            matches: { $0 % 7 >= 4 && $0 % 5 >= 3 }),
        Column(
            name: "float32 rescored from int8 codes",
            declaration: "e float[64] indexed by rescore(quantizer=int8)", value: floatValue,
            query: floatQuery, matches: isFloatMatch),
        Column(
            name: "float32 rescored from bit codes",
            declaration: "e float[64] indexed by rescore(quantizer=bit)", value: floatValue,
            query: floatQuery, matches: isFloatMatch, exact: false),
    ]

    /// The k smallest rowids of the rows that match and pass `filter`, ascending.
    static func expectedRowids(_ column: Column, k: Int, filter: (Int) -> Bool = { _ in true }) -> String {
        (0..<rowCount).filter { column.matches($0) && filter($0) }.map(rowid).sorted().prefix(k)
            .map(String.init).joined(separator: " ")
    }

    /// The script: the table, then for 0, 1 and 3 helper threads the same two queries
    /// (all rows; `cat = 1`, a third of them) kept in temporary tables, and the threads the
    /// scan used; then the answers, and whether the 2- and 4-thread ones equal the first.
    static func script(_ column: Column) -> String {
        var sql = """
            create virtual table t using vec0(\(column.declaration), cat integer);
            with recursive n(i) as (select 0 union all select i + 1 from n where i < \(rowCount - 1))
            insert into t(rowid, e, cat) select i * 7919 % \(rowCount) + 1, \(column.value), i % 3 from n;

            """
        for helpers in [0, 1, 3] {
            sql += """
                pragma threads = \(helpers);
                create temp table all\(helpers) as
                  select rowid as id, distance as d from t where e match \(column.query) and k = 30;
                create temp table cat\(helpers) as
                  select rowid as id, distance as d from t where e match \(column.query) and k = 30 and cat = 1;
                select json_extract(vecsync_cache_info('t'), '$.scan_threads');

                """
        }
        let answer = column.exact ? "group_concat(id, ' ')" : "count(*)"
        sql += """
            select \(answer) from all0;
            select \(answer) from cat0;
            select (select group_concat(id || ':' || d, ' ') from all0) = (select group_concat(id || ':' || d, ' ') from all\(1)),
                   (select group_concat(id || ':' || d, ' ') from all0) = (select group_concat(id || ':' || d, ' ') from all\(3)),
                   (select group_concat(id || ':' || d, ' ') from cat0) = (select group_concat(id || ':' || d, ' ') from cat\(1)),
                   (select group_concat(id || ':' || d, ' ') from cat0) = (select group_concat(id || ':' || d, ' ') from cat\(3));
            """
        return sql
    }

    static func cases() -> [SQLCase] {
        columns.map { column in
            let answers =
                column.exact
                ? [expectedRowids(column, k: 30), expectedRowids(column, k: 30) { $0 % 3 == 1 }]
                : ["30", "30"]
            return SQLCase(
                "\(column.name): 1, 2 and 4 threads give the same rows, ties by ascending rowid",
                script(column),
                rows: ["0", "1", "1", "2", "3", "4"] + answers + ["1|1|1|1"])
        }
    }

    @Test(arguments: SQLPath.allCases, cases())
    func severalThreadsAnswerAsOne(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }

    static let smallAndStreamed: [SQLCase] = [
        SQLCase(
            "A table below 32,768 rows is scanned on one thread, whatever PRAGMA threads allows",
            """
            create virtual table t using vec0(e float[64]);
            with recursive n(i) as (select 0 union all select i + 1 from n where i < 32766)
            insert into t(rowid, e) select i + 1, \(floatValue) from n;
            pragma threads = 3;
            select count(*) from (select rowid from t where e match \(floatQuery) and k = 5);
            select json_extract(vecsync_cache_info('t'), '$.scan_threads');
            insert into t(rowid, e) values (32768, \(floatQuery));
            select count(*) from (select rowid from t where e match \(floatQuery) and k = 5);
            select json_extract(vecsync_cache_info('t'), '$.scan_threads');
            """,
            rows: ["3", "5", "1", "5", "2"]),
        SQLCase(
            "Without PRAGMA threads (0 by default) a large table is scanned on one thread",
            """
            create virtual table t using vec0(e int8[64]);
            with recursive n(i) as (select 0 union all select i + 1 from n where i < 69999)
            insert into t(rowid, e) select i + 1, vec_int8(\(floatValue)) from n;
            select count(*) from (select rowid from t where e match vec_int8(\(floatQuery)) and k = 5);
            select json_extract(vecsync_cache_info('t'), '$.scan_threads');
            """,
            rows: ["5", "1"]),
    ]

    @Test(arguments: SQLPath.allCases, smallAndStreamed)
    func threadsOnlyWhereTheyPay(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }

    @Test("Connections opened with Configuration.vecSync() scan a large table on every core")
    func vecSyncConfigurationUsesEveryCore() throws {
        let dbQueue = try DatabaseQueue(configuration: .vecSync())
        // 70,000 rows: at most four threads; this machine's cores, at most.
        let expected = min(1 + VecSyncExtension.helperThreads, 4)
        try dbQueue.write { db in
            #expect(try Int.fetchOne(db, sql: "PRAGMA threads") == VecSyncExtension.helperThreads)
            try db.execute(
                sql: """
                    create virtual table t using vec0(e float[64]);
                    with recursive n(i) as (select 0 union all select i + 1 from n where i < \(Self.rowCount - 1))
                    insert into t(rowid, e) select i * 7919 % \(Self.rowCount) + 1, \(Self.floatValue) from n;
                    """)
            let rowids = try Int.fetchAll(
                db, sql: "select rowid from t where e match \(Self.floatQuery) and k = 30")
            #expect(rowids.map(String.init).joined(separator: " ") == Self.expectedRowids(Self.columns[0], k: 30))
            let used = try Int.fetchOne(
                db, sql: "select json_extract(vecsync_cache_info('t'), '$.scan_threads')")
            #expect(used == expected, "cores: \(ProcessInfo.processInfo.activeProcessorCount)")
        }
    }

    /// The budget is process-wide: this runs in the sqlite3 shell, a process of its own.
    @Test("Over the memory budget (a scan that reads the file) the scan stays on one thread")
    func streamedScanStaysOnOneThread() throws {
        let column = Self.columns[2]  // int8: its streamed scan reads blobs between chunks
        let sqlCase = SQLCase(
            "streamed int8 scan",
            """
            select vecsync_memory_budget(1) >= 0;
            create virtual table t using vec0(\(column.declaration), cat integer);
            with recursive n(i) as (select 0 union all select i + 1 from n where i < \(Self.rowCount - 1))
            insert into t(rowid, e, cat) select i * 7919 % \(Self.rowCount) + 1, \(column.value), i % 3 from n;
            pragma threads = 3;
            select group_concat(rowid, ' ') from (select rowid from t where e match \(column.query) and k = 30);
            select json_extract(vecsync_cache_info('t'), '$.streamed'), json_extract(vecsync_cache_info('t'), '$.scan_threads');
            """,
            rows: ["1", "3", Self.expectedRowids(column, k: 30), "1|1"])
        sqlCase.verify(.shell)
    }
}
