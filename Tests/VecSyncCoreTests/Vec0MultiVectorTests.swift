import Foundation
import GRDB
import Testing
import VecSyncTestSupport

/// vec0 tables with several vector columns, as sqlite-vec 0.1.9 has them: each column has
/// its own type, size and metric, every one is written and read back, and a KNN query
/// searches any one of them (one MATCH a query). The first vector column keeps the
/// in-memory copy; the others are scanned exactly from storage, checked here against a
/// brute force computed in the test.
@Suite("vec0 tables with several vector columns")
struct Vec0MultiVectorTests {
    /// The float metrics the second column is declared with.
    static let metrics: [BruteForce.Metric] = [.l2, .cosine, .dot, .l1]

    /// One row as the test keeps it.
    struct Row {
        var a: [Float]
        var b: [Float]
        var c: [UInt8]
        var d: [UInt8]
        var cat: Int
    }

    static let int8L1 = Vec0TypedColumnTests.Kind.int8L1
    static let bit = Vec0TypedColumnTests.Kind.bit

    static func randomRow(using random: inout SeededRandom) -> Row {
        Row(
            a: BruteForce.randomVector(8, using: &random), b: BruteForce.randomVector(12, using: &random),
            c: int8L1.randomVector(using: &random), d: bit.randomVector(using: &random),
            cat: Int.random(in: 0..<3, using: &random))
    }

    /// Every row, nearest first by `distance`, ties by rowid.
    static func ranked(_ rows: [Int64: Row], where include: (Row) -> Bool, _ distance: (Row) -> Double)
        -> [BruteForce.Hit]
    {
        var scored: [(rowid: Int64, d: Double)] = []
        for (rowid, row) in rows where include(row) { scored.append((rowid, distance(row))) }
        scored.sort { x, y in x.d != y.d ? x.d < y.d : x.rowid < y.rowid }
        return scored.map { BruteForce.Hit(key: "\($0.rowid)", distance: $0.d) }
    }

    @Test("KNN on each column equals brute force through writes, rollbacks, filters and ranges", arguments: metrics)
    func knnOnEachColumnEqualsBruteForce(metric: BruteForce.Metric) throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0170)
        let context = "b \(metric), seed \(random.seed) (VECSYNC_SEED=\(random.seed) to replay)"
        print("Vec0MultiVectorTests: \(context)")
        var rows: [Int64: Row] = [:]
        try BruteForce.openQueue().inDatabase { db in
            try db.execute(
                sql: """
                    create virtual table t using vec0(a float[8] distance_metric=cosine,
                      b float[12] distance_metric=\(metric), c int8[23] distance_metric=l1, d bit[72],
                      cat integer, chunk_size=16)
                    """)
            let insert = try db.makeStatement(
                sql: "insert into t(rowid, a, b, c, d, cat) values (?, ?, ?, vec_int8(?), vec_bit(?), ?)")
            func add(_ rowid: Int64, _ row: Row) throws {
                try insert.execute(arguments: [
                    rowid, BruteForce.blob(row.a), BruteForce.json(row.b), Data(row.c), Data(row.d), row.cat,
                ])
            }
            for rowid in Int64(1)...200 {
                var row = Self.randomRow(using: &random)
                if rowid % 9 == 0, let earlier = rows[rowid - 1] { row.b = earlier.b }  // ties, by rowid
                try add(rowid, row)
                rows[rowid] = row
            }
            for round in 0..<12 {
                let gone = Int64(round * 13 + 1)
                try db.execute(sql: "delete from t where rowid = ?", arguments: [gone])
                rows[gone] = nil
                let changed = Int64(round * 7 + 2)
                if rows[changed] != nil {
                    // One vector column at a time: the others keep their values.
                    let next = Self.randomRow(using: &random)
                    switch round % 3 {
                    case 0:
                        try db.execute(
                            sql: "update t set b = ? where rowid = ?", arguments: [BruteForce.json(next.b), changed])
                        rows[changed]?.b = next.b
                    case 1:
                        try db.execute(
                            sql: "update t set c = vec_int8(?), cat = ? where rowid = ?",
                            arguments: [Data(next.c), next.cat, changed])
                        rows[changed]?.c = next.c
                        rows[changed]?.cat = next.cat
                    default:
                        try db.execute(
                            sql: "update t set a = ? where rowid = ?", arguments: [BruteForce.json(next.a), changed])
                        rows[changed]?.a = next.a
                    }
                }
                let added = Int64(1000 + round)
                let row = Self.randomRow(using: &random)
                try add(added, row)
                rows[added] = row
                // Writes rolled back leave every column as it was.
                try db.execute(sql: "savepoint s")
                try add(Int64(5000 + round), Self.randomRow(using: &random))
                try db.execute(
                    sql: "update t set b = ?, d = vec_bit(?) where rowid = ?",
                    arguments: [
                        BruteForce.json(Self.randomRow(using: &random).b), Data(Self.bit.randomVector(using: &random)),
                        added,
                    ])
                try db.execute(sql: "delete from t where rowid = ?", arguments: [changed + 1])
                try db.execute(sql: "rollback to s")
                try db.execute(sql: "release s")

                let current = rows
                let k = Int.random(in: 1...30, using: &random)
                let probe = Self.randomRow(using: &random)
                // Each column, with k, a filter and a distance range.
                let queries: [(column: String, value: DatabaseValueConvertible, wrap: String, (Row) -> Double)] = [
                    ("a", BruteForce.json(probe.a), "?", { BruteForce.Metric.cosine.distance($0.a, probe.a) }),
                    ("b", BruteForce.json(probe.b), "?", { metric.distance($0.b, probe.b) }),
                    ("c", Data(probe.c), "vec_int8(?)", { Self.int8L1.distance($0.c, probe.c) }),
                    ("d", Data(probe.d), "vec_bit(?)", { Self.bit.distance($0.d, probe.d) }),
                ]
                for (column, value, wrap, distance) in queries {
                    let sql = "select rowid, distance from t where \(column) match \(wrap) and k = ?"
                    let label = "\(context), round \(round), \(column), k = \(k)"
                    let all = Self.ranked(current, where: { _ in true }, distance)
                    BruteForce.expectMatches(
                        try BruteForce.hits(db, sql, [value, k]), Array(all.prefix(k)), all: all, context: label)
                    let inCat = Self.ranked(current, where: { $0.cat == 1 }, distance)
                    BruteForce.expectMatches(
                        try BruteForce.hits(db, sql + " and cat = 1", [value, k]), Array(inCat.prefix(k)),
                        all: inCat, context: label + ", cat = 1")
                    let inCats = Self.ranked(current, where: { $0.cat != 1 }, distance)
                    BruteForce.expectMatches(
                        try BruteForce.hits(db, sql + " and cat in (0, 2)", [value, k]), Array(inCats.prefix(k)),
                        all: inCats, context: label + ", cat in (0, 2)")
                    let edge = all[all.count / 2].distance
                    let beyond = all.filter { $0.distance > edge + 1e-5 }
                    let got = try BruteForce.hits(db, sql + " and distance > ?", [value, k, edge + 1e-5])
                    BruteForce.expectMatches(
                        got, Array(beyond.prefix(k)), all: beyond, context: label + ", distance > \(edge)")
                    let near = all.filter { $0.distance <= edge - 1e-5 }
                    BruteForce.expectMatches(
                        try BruteForce.hits(db, sql + " and distance <= ?", [value, k, edge - 1e-5]),
                        Array(near.prefix(k)), all: near, context: label + ", distance <= \(edge)")
                }
            }
            // Every column of every row reads back as stored.
            for (rowid, row) in rows {
                let got = try Row_.fetch(db, rowid)
                #expect(
                    got == [
                        Self.hex(BruteForce.blob(row.a)), Self.hex(BruteForce.blob(row.b)),
                        Vec0TypedColumnTests.hex(row.c), Vec0TypedColumnTests.hex(row.d), "\(row.cat)",
                    ],
                    "\(context): row \(rowid)")
            }
        }
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02X", $0) }.joined() }

    /// A row as `select *` gives it, hex for the vectors.
    enum Row_ {
        static func fetch(_ db: Database, _ rowid: Int64) throws -> [String] {
            let row = try GRDB.Row.fetchOne(
                db, sql: "select hex(a), hex(b), hex(c), hex(d), cat from t where rowid = ?", arguments: [rowid])
            return (0..<5).map { row?[$0].map { "\($0)" } ?? "NULL" }
        }
    }

    @Test("In the sqlite3 shell, KNN on the second and third columns equals brute force")
    func shellKnnEqualsBruteForce() throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0171)
        let context = "shell, seed \(random.seed) (VECSYNC_SEED=\(random.seed) to replay)"
        var rows: [Int64: Row] = [:]
        var script =
            "create virtual table t using vec0(a float[8], b float[12] distance_metric=cosine, "
            + "c int8[23] distance_metric=l1, d bit[72], cat integer, chunk_size=16);\nbegin;\n"
        for rowid in Int64(1)...120 {
            let row = Self.randomRow(using: &random)
            rows[rowid] = row
            script +=
                "insert into t values (\(rowid), '\(BruteForce.json(row.a))', '\(BruteForce.json(row.b))', "
                + "vec_int8(x'\(Vec0TypedColumnTests.hex(row.c))'), vec_bit(x'\(Vec0TypedColumnTests.hex(row.d))'), "
                + "\(row.cat));\n"
        }
        script += "commit;\ndelete from t where rowid % 11 = 0;\n"
        for rowid in rows.keys where rowid % 11 == 0 { rows[rowid] = nil }
        let probes = (0..<4).map { _ in Self.randomRow(using: &random) }
        for p in probes {
            script += "select rowid, distance from t where b match '\(BruteForce.json(p.b))' and k = 7;\n"
            script +=
                "select rowid, distance from t where c match vec_int8(x'\(Vec0TypedColumnTests.hex(p.c))') and k = 7 and cat = 2;\n"
        }
        let output = try Shell.run(script)
        #expect(output.stderr.isEmpty, "\(context): stderr \(output.stderr)")
        let got = BruteForce.hits(fromShellRows: output.stdout.split(separator: "\n").map(String.init))
        var expected: [BruteForce.Hit] = []
        var alls: [[BruteForce.Hit]] = []
        for p in probes {
            let b = Self.ranked(rows, where: { _ in true }, { BruteForce.Metric.cosine.distance($0.b, p.b) })
            let c = Self.ranked(rows, where: { $0.cat == 2 }, { Self.int8L1.distance($0.c, p.c) })
            expected += b.prefix(7) + c.prefix(7)
            alls += [b, c]
        }
        #expect(got.count == expected.count, "\(context): output \(output.stdout)")
        if got.count == expected.count {
            for j in 0..<alls.count {
                BruteForce.expectMatches(
                    Array(got[(j * 7)..<((j + 1) * 7)]), Array(expected[(j * 7)..<((j + 1) * 7)]), all: alls[j],
                    context: "\(context), query \(j)")
            }
        }
    }

    static let table = """
        create virtual table t using vec0(a float[2], b float[3] distance_metric=cosine, c int8[2], d bit[8],
          tag text, +note text);
        insert into t(rowid, a, b, c, d, tag, note) values
          (1, '[1, 2]', '[1, 0, 0]', vec_int8('[1, 2]'), vec_bit(x'0f'), 'x', 'one');
        insert into t values (2, '[3, 4]', '[0, 1, 0]', vec_int8('[3, -4]'), vec_bit(x'f0'), 'y', 'two');

        """

    @Test(
        "A layout in T_info that contradicts the declaration is damage, seen by the next connection",
        arguments: SQLPath.allCases,
        [
            ("update t_info set value = 2 where key = 'vector_columns';", "'vector_columns'"),
            ("delete from t_info where key = 'vector_columns';", "'vector_columns'"),
            ("update t_info set value = 1 where key = 'format';", "'format'"),
        ])
    func layoutContradictingTheDeclaration(path: SQLPath, damage: (sql: String, key: String)) throws {
        try path.verify(
            onFileAfter: Self.table + damage.sql,
            [
                SQLCase(
                    "damaged: \(damage.sql)", "select rowid from t where b match '[1, 1, 0]' and k = 1;",
                    error: ["storage is damaged", damage.key])
            ])
    }

    @Test(
        "A statement that fails part way changes no column of any row",
        arguments: SQLPath.allCases,
        [
            """
            insert into t(rowid, a, b, c, d) values
              (3, '[5, 5]', '[1, 1, 1]', vec_int8('[5, 5]'), vec_bit(x'01')),
              (4, '[6, 6]', '[1, 1]', vec_int8('[6, 6]'), vec_bit(x'02'));
            """,
            "update t set b = case rowid when 1 then '[0, 0, 1]' else '[1]' end, c = vec_int8('[9, 9]');",
            "update t set d = case rowid when 1 then vec_bit(x'ff') else vec_int8('[1]') end;",
            "delete from t where abs(-9223372036854775806 - rowid) > 0;",
        ])
    func failedStatementChangesNothing(path: SQLPath, statement: String) throws {
        try withTemporaryFile("multivec", named: "multivec.db") { file in
            let run = try path.run(Self.table + statement, databasePath: file)
            #expect(run.errors.count == 1, "\(statement): \(run.errors)")
            SQLCase(
                "after: \(statement)",
                """
                select rowid, hex(a), hex(b), hex(c), hex(d), tag from t order by rowid;
                select rowid from t where b match '[1, 1, 1]' and k = 5;
                select rowid from t where c match vec_int8('[9, 9]') and k = 5;
                """,
                rows: [
                    "1|0000803F00000040|0000803F0000000000000000|0102|0F|x",
                    "2|0000404000008040|000000000000803F00000000|03FC|F0|y",
                    "1", "2", "1", "2",
                ]
            ).verify(path, databasePath: file)
        }
    }
}
