import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

/// `int8[N]` and `bit[N]` vec0 columns as sqlite-vec 0.1.9 has them: only vectors made by
/// `vec_int8()` / `vec_bit()` go in, `select e` gives the stored bytes back with their
/// subtype, and KNN distances are sqlite-vec's figures (int8: l2, cosine, l1; bit: Hamming),
/// checked against a reference computed here from the bytes.
@Suite("vec0 int8[N] and bit[N] columns")
struct Vec0TypedColumnTests {
    /// A typed column and its distance, with the reference figure computed in Swift.
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case int8L2 = "int8 l2"
        case int8Cosine = "int8 cosine"
        case int8L1 = "int8 l1"
        case bit = "bit"

        var testDescription: String { rawValue }

        /// Elements: 23 int8 (a tail past the 16-wide kernel, bytes padded to a word) or 72
        /// bits (9 bytes: a tail past 8-byte words).
        var dimensions: Int { self == .bit ? 72 : 23 }
        var byteCount: Int { self == .bit ? dimensions / 8 : dimensions }

        var declaration: String {
            switch self {
            case .int8L2: "e int8[\(dimensions)] distance_metric=l2"
            case .int8Cosine: "e int8[\(dimensions)] distance_metric=cosine"
            case .int8L1: "e i8[\(dimensions)] distance_metric=l1"
            case .bit: "e bit[\(dimensions)]"
            }
        }

        /// The function that gives a blob its subtype.
        var wrap: String { self == .bit ? "vec_bit" : "vec_int8" }

        /// The distance sqlite-vec reports between stored bytes `a` and query bytes `b`:
        /// int8 sums are exact integers here, then rounded to float32 as sqlite-vec does.
        func distance(_ a: [UInt8], _ b: [UInt8]) -> Double {
            if self == .bit {
                return Double(zip(a, b).reduce(0) { $0 + ($1.0 ^ $1.1).nonzeroBitCount })
            }
            var l2 = 0
            var l1 = 0
            var dot = 0
            var aa = 0
            var bb = 0
            for (x, y) in zip(a.map { Int(Int8(bitPattern: $0)) }, b.map { Int(Int8(bitPattern: $0)) }) {
                l2 += (x - y) * (x - y)
                l1 += abs(x - y)
                dot += x * y
                aa += x * x
                bb += y * y
            }
            switch self {
            case .int8L2: return Double(Float(Double(l2).squareRoot()))
            case .int8L1: return Double(l1)
            default: return Double(Float(1 - Double(dot) / (Double(aa).squareRoot() * Double(bb).squareRoot())))
            }
        }

        /// Random bytes; int8 values include -128 and 127 on purpose; never all zeros.
        func randomVector(using random: inout SeededRandom) -> [UInt8] {
            while true {
                let v: [UInt8] = (0..<byteCount).map { _ in
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0: 0x80
                    case 1: 0x7f
                    case 2: 0
                    default: UInt8.random(in: 0...255, using: &random)
                    }
                }
                if v.contains(where: { $0 != 0 }) { return v }
            }
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }

    @Test("KNN equals brute force through inserts, updates, deletes, filters and ranges", arguments: Kind.allCases)
    func knnEqualsBruteForce(kind: Kind) throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0160)
        let context = "\(kind), seed \(random.seed) (VECSYNC_SEED=\(random.seed) to replay)"
        var rows: [Int64: (vector: [UInt8], cat: Int)] = [:]
        try BruteForce.openQueue().inDatabase { db in
            try db.execute(sql: "create virtual table t using vec0(\(kind.declaration), cat integer, chunk_size=16)")
            let insert = try db.makeStatement(sql: "insert into t(rowid, e, cat) values (?, \(kind.wrap)(?), ?)")
            var earlier: [[UInt8]] = []
            for rowid in Int64(1)...300 {
                // One row in 10 repeats an earlier vector: ties, broken by rowid.
                let v =
                    rowid % 10 == 0 && !earlier.isEmpty
                    ? earlier[Int.random(in: earlier.indices, using: &random)] : kind.randomVector(using: &random)
                earlier.append(v)
                let cat = Int(rowid % 3)
                try insert.execute(arguments: [rowid, Data(v), cat])
                rows[rowid] = (v, cat)
            }
            for round in 0..<20 {
                // Writes between queries: a delete, an update, an insert.
                let gone = Int64(round * 13 + 1)
                try db.execute(sql: "delete from t where rowid = ?", arguments: [gone])
                rows[gone] = nil
                let changed = Int64(round * 7 + 2)
                if rows[changed] != nil {
                    let v = kind.randomVector(using: &random)
                    try db.execute(
                        sql: "update t set e = \(kind.wrap)(?) where rowid = ?", arguments: [Data(v), changed])
                    rows[changed]?.vector = v
                }
                let added = Int64(1000 + round)
                let v = kind.randomVector(using: &random)
                try insert.execute(arguments: [added, Data(v), 1])
                rows[added] = (v, 1)

                let q = Bool.random(using: &random) ? earlier[round * 11] : kind.randomVector(using: &random)
                let k = Int.random(in: 1...40, using: &random)
                let current = rows
                func expected(_ include: (Int64) -> Bool) -> [BruteForce.Hit] {
                    var scored: [(rowid: Int64, d: Double)] = []
                    for (rowid, row) in current where include(rowid) {
                        scored.append((rowid, kind.distance(row.vector, q)))
                    }
                    scored.sort { a, b in a.d != b.d ? a.d < b.d : a.rowid < b.rowid }
                    return scored.map { BruteForce.Hit(key: "\($0.rowid)", distance: $0.d) }
                }
                let all = expected { _ in true }
                let sql = "select rowid, distance from t where e match \(kind.wrap)(?) and k = ?"
                BruteForce.expectMatches(
                    try BruteForce.hits(db, sql, [Data(q), k]), Array(all.prefix(k)), all: all,
                    context: "\(context), round \(round), k = \(k)")
                let inCat = expected { current[$0]?.cat == 1 }
                BruteForce.expectMatches(
                    try BruteForce.hits(db, sql + " and cat = 1", [Data(q), k]), Array(inCat.prefix(k)),
                    all: inCat, context: "\(context), round \(round), cat = 1, k = \(k)")
                let edge = all[all.count / 2].distance
                let beyond = all.filter { $0.distance > edge }
                BruteForce.expectMatches(
                    try BruteForce.hits(db, sql + " and distance > ?", [Data(q), k, edge]),
                    Array(beyond.prefix(k)), all: beyond, context: "\(context), round \(round), distance > \(edge)")
            }
            // Each row's vector comes back as its bytes, typed by its subtype.
            for (rowid, row) in rows.prefix(20) {
                let got = try Row.fetchOne(
                    db, sql: "select hex(e), vec_type(e) from t where rowid = ?", arguments: [rowid])
                #expect(got?[0] == Self.hex(row.vector), "\(context): row \(rowid)")
                #expect(got?[1] == (kind == .bit ? "bit" : "int8"), "\(context): row \(rowid)")
            }
        }
    }

    @Test("In the sqlite3 shell, KNN equals brute force", arguments: Kind.allCases)
    func shellKnnEqualsBruteForce(kind: Kind) throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0162)
        let context = "\(kind) in the shell, seed \(random.seed) (VECSYNC_SEED=\(random.seed) to replay)"
        var rows: [Int64: [UInt8]] = [:]
        var script = "create virtual table t using vec0(\(kind.declaration), chunk_size=16);\nbegin;\n"
        for rowid in Int64(1)...150 {
            let v = rowid % 7 == 0 ? rows[rowid - 1]! : kind.randomVector(using: &random)
            rows[rowid] = v
            script += "insert into t(rowid, e) values (\(rowid), \(kind.wrap)(x'\(Self.hex(v))'));\n"
        }
        script += "commit;\ndelete from t where rowid % 11 = 0;\n"
        for rowid in rows.keys where rowid % 11 == 0 { rows[rowid] = nil }
        let queries = (0..<6).map { _ in kind.randomVector(using: &random) }
        for q in queries {
            script += "select rowid, distance from t where e match \(kind.wrap)(x'\(Self.hex(q))') and k = 12;\n"
        }
        let output = try Shell.run(script)
        #expect(output.stderr.isEmpty, "\(context): stderr \(output.stderr)")
        let got = BruteForce.hits(fromShellRows: output.stdout.split(separator: "\n").map(String.init))
        #expect(got.count == queries.count * 12, "\(context): output \(output.stdout)")
        for (j, q) in queries.enumerated() where got.count >= (j + 1) * 12 {
            var scored: [(rowid: Int64, d: Double)] = rows.map { ($0.key, kind.distance($0.value, q)) }
            scored.sort { a, b in a.d != b.d ? a.d < b.d : a.rowid < b.rowid }
            let all = scored.map { BruteForce.Hit(key: "\($0.rowid)", distance: $0.d) }
            BruteForce.expectMatches(
                Array(got[(j * 12)..<((j + 1) * 12)]), Array(all.prefix(12)), all: all,
                context: "\(context), query \(j)")
        }
    }

    @Test("Over the memory budget, int8 and bit searches read the file and answer the same", arguments: Kind.allCases)
    func streamedSearchesMatchInMemory(kind: Kind) throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0161)
        var script = "create virtual table t using vec0(\(kind.declaration), cat integer, chunk_size=16);\nbegin;\n"
        for rowid in 1...200 {
            script +=
                "insert into t(rowid, e, cat) values (\(rowid), \(kind.wrap)(x'\(Self.hex(kind.randomVector(using: &random)))'), \(rowid % 3));\n"
        }
        script += "commit;\ndelete from t where rowid % 17 = 0;\n"
        let vectors = (0..<8).map { _ in "\(kind.wrap)(x'\(Self.hex(kind.randomVector(using: &random)))')" }
        let queries = Shell.knnLines(
            column: "e", queries: vectors, k: 9, filters: ["", " and cat = 1", " and distance > 3"])
        try Shell.expectStreamedAnswersMatch(
            setUp: script, queries: queries, budget: 64, requireRows: true, context: "\(kind) (seed \(random.seed)):")
    }

    static let int8Table = """
        create virtual table ti using vec0(e int8[4], chunk_size=8);
        insert into ti(rowid, e) values (1, vec_int8('[1, 2, 3, 4]')), (8, vec_int8('[-128, 127, 0, -1]'));

        """

    @Test(
        "An element_bits that contradicts the declaration is damage, seen by the next connection",
        arguments: SQLPath.allCases,
        [
            "update ti_info set value = 32 where key = 'element_bits';",
            "delete from ti_info where key = 'element_bits';",
        ])
    func elementBitsContradictingTheDeclaration(path: SQLPath, damage: String) throws {
        try path.verify(
            onFileAfter: Self.int8Table + damage,
            [
                SQLCase(
                    "element_bits damaged: \(damage)",
                    "select rowid from ti where e match vec_int8('[0, 0, 0, 1]') and k = 1;",
                    error: ["storage is damaged", "'element_bits'"])
            ])
    }
}
