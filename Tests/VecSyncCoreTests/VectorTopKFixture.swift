import Foundation
import GRDB
import Testing

/// An ordinary table with a libSQL vector index, and the same rows in Swift.
///
/// ```sql
/// create table docs(id text primary key, thread text, status text, embedding F32_BLOB(D));
/// create index docs_idx on docs(libsql_vector_idx(embedding, 'metric=l2'));
/// ```
/// Row i has thread 't<i % 10>', status 'approved' for two rows in three, and a NULL
/// embedding for one row in 17.
struct VectorTopKFixture {
    var metric: BruteForce.Metric
    var dimensions: Int
    /// Rows by text key.
    var rows: [String: Doc] = [:]

    /// Runs `body` on a new in-memory connection holding `count` rows (the index created
    /// before them with `indexFirst`, else after), with the fixture and the generator that drew
    /// them (seeded from `$VECSYNC_SEED`, else at random: messages carry `random.seed`).
    static func withRows(
        _ count: Int, metric: BruteForce.Metric, dimensions: Int, indexFirst: Bool,
        _ body: (Database, inout VectorTopKFixture, inout ExtensionRandom) throws -> Void
    ) throws {
        var random = ExtensionRandom.fromEnvironment()
        var fixture = VectorTopKFixture(metric: metric, dimensions: dimensions)
        try BruteForce.openQueue().inDatabase { db in
            try fixture.populate(db, count: count, indexFirst: indexFirst, using: &random)
            try body(db, &fixture, &random)
        }
    }

    struct Doc {
        var vector: [Float]?
        var thread: String
        var status: String
    }

    var indexSQL: String {
        metric == .cosine
            ? "create index docs_idx on docs(libsql_vector_idx(embedding))"
            : "create index docs_idx on docs(libsql_vector_idx(embedding, 'metric=l2', 'max_neighbors=16'))"
    }

    static let tableSQL = "create table docs(id text primary key, thread text, status text, embedding F32_BLOB(%d))"

    /// Creates the table, optionally the index first, and inserts `count` rows.
    mutating func populate(_ db: Database, count: Int, indexFirst: Bool, using random: inout ExtensionRandom) throws {
        try db.execute(sql: String(format: Self.tableSQL, dimensions))
        if indexFirst { try db.execute(sql: indexSQL) }
        var vectors: [[Float]] = []
        for i in 0..<count {
            let doc: Doc
            let thread = "t\(i % 10)"
            let status = i % 3 == 2 ? "draft" : "approved"
            if i % 17 == 5 {
                doc = Doc(vector: nil, thread: thread, status: status)
            } else if i % 23 == 22, let earlier = vectors.randomElement(using: &random) {
                doc = Doc(vector: earlier, thread: thread, status: status)
            } else {
                let v = BruteForce.randomVector(dimensions, using: &random)
                vectors.append(v)
                doc = Doc(vector: v, thread: thread, status: status)
            }
            try put(db, String(format: "m%05d", (i * 7919) % 100_003), doc)
        }
        if !indexFirst { try db.execute(sql: indexSQL) }
    }

    /// Inserts (or, with `orReplace`, replaces) one row, in SQL and in Swift.
    mutating func put(_ db: Database, _ id: String, _ doc: Doc, orReplace: Bool = false) throws {
        try db.execute(
            sql: "insert \(orReplace ? "or replace " : "")into docs(id, thread, status, embedding) values (?, ?, ?, ?)",
            arguments: [id, doc.thread, doc.status, doc.vector.map(BruteForce.blob)])
        rows[id] = doc
    }

    /// The reference, keyed by rowid (as `vector_top_k` returns) or by the text id.
    func reference(_ db: Database, byID: Bool = false) throws -> BruteForce {
        let rowids = try Dictionary(
            uniqueKeysWithValues: GRDB.Row.fetchAll(db, sql: "select id, rowid from docs")
                .map { (($0[0] as String), ($0[1] as Int64)) })
        let stored = rows.compactMap { id, doc -> BruteForce.Row? in
            guard let vector = doc.vector, let rowid = rowids[id] else { return nil }
            return BruteForce.Row(key: byID ? id : "\(rowid)", rowid: rowid, vector: vector)
        }
        return BruteForce(metric: metric, rows: stored)
    }

    /// `vector_top_k` as id and distance.
    static func topK(_ db: Database, _ query: [Float], k: Int) throws -> [BruteForce.Hit] {
        try BruteForce.hits(db, "select id, distance from vector_top_k('docs_idx', ?, ?)", [BruteForce.blob(query), k])
    }

    /// A query: random, or a stored vector.
    func query(using random: inout ExtensionRandom) -> [Float] {
        if Bool.random(using: &random), let v = rows.values.compactMap(\.vector).randomElement(using: &random) {
            return v
        }
        return BruteForce.randomVector(dimensions, using: &random)
    }

    /// Checks a few queries against the reference.
    func expectAgreement(
        _ db: Database, _ random: inout ExtensionRandom, _ context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let reference = try reference(db)
        for _ in 0..<6 {
            let q = query(using: &random)
            let k = Int.random(in: 1...20, using: &random)
            let all = reference.nearest(to: q)
            BruteForce.expectMatches(
                try Self.topK(db, q, k: k), Array(all.prefix(k)), all: all,
                context: "\(context), \(metric), k = \(k), seed \(random.seed)",
                sourceLocation: sourceLocation)
        }
    }
}
