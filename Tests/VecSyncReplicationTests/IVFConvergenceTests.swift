import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// A vec0 index declared `indexed by ivf(...)` is derived data like any vec0 table: it never
/// travels in a change set, every replica's index holds exactly its rows after merges in any
/// order, and replicas holding the same rows that retrain their lists train the same lists
/// and answer approximate queries with the same rows.
@Suite("IVF convergence")
struct IVFConvergenceTests: ReplicationSuite {
    static let dimensions = 16
    static let lists = 16
    static let probes = 2

    static let index = VectorIndex(
        table: "docs", primaryKey: "id", embeddingColumn: "embedding", dimensions: dimensions,
        metric: .cosine, name: "docs_vec", ivf: .init(lists: lists, probes: probes))

    /// A replica of a fresh database with `docs` (text keys, as the photo store's) tracked
    /// and its ivf-indexed vec0 table.
    static func replica(_ site: String) throws -> Replica {
        let queue = try DatabaseQueue(configuration: Configuration.vecSync())
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE docs (id TEXT PRIMARY KEY NOT NULL, title TEXT, embedding F32_BLOB(16))")
            try index.create(db)
        }
        let replica = try Replica(queue, site: SiteID(site))
        try replica.track("docs")
        return replica
    }

    /// Embeddings around 12 seeded centres, so the lists have clusters to find.
    struct Embeddings {
        var random: SeededRandom
        let centres: [Vector]

        init(seed: UInt64) {
            random = SeededRandom(seed: seed)
            var centres: [Vector] = []
            for _ in 0..<12 { centres.append(Vector.random(dimensions: IVFConvergenceTests.dimensions, using: &random)) }
            self.centres = centres
        }

        mutating func next() -> Vector {
            let centre = centres[Int.random(in: 0..<centres.count, using: &random)]
            return Vector(centre.scalars.map { $0 + Float.random(in: -0.3...0.3, using: &random) })
        }
    }

    /// Everything `from` holds merged into `to`; the tables every change set named are
    /// added to `tablesSeen`.
    static func deliver(_ from: Replica, to: Replica, tablesSeen: inout Set<String>) throws {
        let changeSet = try from.changes(since: 0, maximumRows: 10_000)
        tablesSeen.formUnion(changeSet.tables.map(\.name))
        try to.merge(changeSet)
    }

    /// The rows of `docs`, each with its embedding's bytes.
    static func rows(_ replica: Replica) throws -> [String] {
        try replica.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT id, title, hex(embedding) FROM docs ORDER BY id").map { "\($0)" }
        }
    }

    /// What the index holds: its rows' keys, and what `vecsync_index_info` says of its lists.
    static func indexState(_ replica: Replica) throws -> (keys: [String], info: [String: Any]) {
        try replica.writer.read { db in
            let keys = try String.fetchAll(db, sql: "SELECT id FROM docs_vec ORDER BY id")
            let text = try String.fetchOne(db, sql: "SELECT vecsync_index_info('docs_vec')") ?? "{}"
            let info = (try JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
            return (keys, info)
        }
    }

    /// The trained lists: each centroid's bytes, and each row's list by key.
    static func lists(_ replica: Replica) throws -> (centroids: [String], assignment: [String]) {
        try replica.writer.read { db in
            let centroids = try String.fetchAll(
                db, sql: "SELECT list || ':' || hex(centroid) FROM docs_vec_ivf_centroids ORDER BY list")
            let assignment = try String.fetchAll(
                db,
                sql: """
                    SELECT r.id || ':' || a.list FROM docs_vec_rows AS r
                    JOIN docs_vec_ivf_assign AS a ON a.slot = r.slot ORDER BY r.id
                    """)
            return (centroids, assignment)
        }
    }

    /// The keys of the 10 nearest rows to each query, through the ivf index at nprobe 2.
    static func answers(_ replica: Replica, _ queries: [Vector]) throws -> [[String]] {
        try replica.writer.read { db in
            try queries.map { query in
                try String.fetchAll(
                    db,
                    sql: "SELECT id FROM docs_vec WHERE embedding MATCH ? AND k = 10 AND nprobe = ? ORDER BY distance",
                    arguments: [query.blob, probes])
            }
        }
    }

    /// `vecsync_ivf_retrain`: the lists trained again on the replica's rows; answers nlist.
    static func retrain(_ replica: Replica) throws -> Int? {
        try replica.writer.write { db in try Int.fetchOne(db, sql: "SELECT vecsync_ivf_retrain('docs_vec')") }
    }

    /// Checks (b): the index holds exactly the base rows, every one of them in a list.
    static func expectIndexHoldsBaseRows(_ replica: Replica, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let base = try replica.writer.read { db in try String.fetchAll(db, sql: "SELECT id FROM docs ORDER BY id") }
        let state = try indexState(replica)
        #expect(state.keys == base, "\(replica.site)", sourceLocation: sourceLocation)
        #expect(state.info["trained"] as? Bool == true, "\(replica.site): \(state.info)", sourceLocation: sourceLocation)
        #expect(state.info["lists"] as? Int == lists, "\(replica.site): \(state.info)", sourceLocation: sourceLocation)
        #expect(
            state.info["listed_rows"] as? Int == base.count, "\(replica.site): \(state.info)",
            sourceLocation: sourceLocation)
        let report = try replica.writer.read { db in try index.verify(db) }
        #expect(report.isConsistent, "\(report)", sourceLocation: sourceLocation)
        #expect(try replica.verifyDerivedIndexes() == ["docs_vec": 0], sourceLocation: sourceLocation)
    }

    @Test("replicas writing, updating and deleting on three sites converge; their retrained ivf lists are equal")
    func ivfIndexConvergesAndRetrainsEqually() throws {
        let a = try Self.replica("a"), b = try Self.replica("b"), c = try Self.replica("c")
        let replicas = [a, b, c]
        var embeddings = Embeddings(seed: 0x1CF_0032)
        var random = SeededRandom(seed: 0x1CF_0033)
        var tablesSeen = Set<String>()

        // Each site writes its own rows and trains its lists on them: three different indexes.
        for replica in replicas {
            for n in 0..<300 {
                try Self.write(
                    replica, "INSERT INTO docs (id, title, embedding) VALUES (?, ?, ?)",
                    ["\(replica.site)-\(n)", "doc \(n)", embeddings.next().blob])
            }
            #expect(try Self.retrain(replica) == Self.lists)
        }
        // Round one, in a ring: a → b → c → a.
        try Self.deliver(a, to: b, tablesSeen: &tablesSeen)
        try Self.deliver(b, to: c, tablesSeen: &tablesSeen)
        try Self.deliver(c, to: a, tablesSeen: &tablesSeen)

        // Each site updates, deletes and inserts, rows of its own and of the others.
        for replica in replicas {
            let ids = try replica.writer.read { db in try String.fetchAll(db, sql: "SELECT id FROM docs ORDER BY id") }
            for id in (0..<40).compactMap({ _ in ids.randomElement(using: &random) }) {
                try Self.write(replica, "UPDATE docs SET embedding = ? WHERE id = ?", [embeddings.next().blob, id])
            }
            for id in (0..<20).compactMap({ _ in ids.randomElement(using: &random) }) {
                try Self.write(replica, "DELETE FROM docs WHERE id = ?", [id])
            }
            for id in (0..<10).compactMap({ _ in ids.randomElement(using: &random) }) {
                try Self.write(replica, "UPDATE docs SET title = 'edited on \(replica.site)' WHERE id = ?", [id])
            }
            for n in 300..<360 {
                try Self.write(
                    replica, "INSERT INTO docs (id, title, embedding) VALUES (?, ?, ?)",
                    ["\(replica.site)-\(n)", "doc \(n)", embeddings.next().blob])
            }
        }
        // Round two, each replica hearing the others in another order, then everyone everything.
        try Self.deliver(c, to: b, tablesSeen: &tablesSeen)
        try Self.deliver(a, to: b, tablesSeen: &tablesSeen)
        try Self.deliver(b, to: a, tablesSeen: &tablesSeen)
        try Self.deliver(a, to: c, tablesSeen: &tablesSeen)
        for (from, to) in [(a, b), (b, c), (c, a), (a, b), (b, c)] {
            try Self.deliver(from, to: to, tablesSeen: &tablesSeen)
        }

        // (a) Only the base table travels: no shadow table of the index is tracked or sent.
        #expect(tablesSeen == ["docs"])
        for replica in replicas {
            #expect(try replica.trackedTables().map(\.name) == ["docs"])
        }
        let expected = try Self.rows(a)
        #expect(expected.count > 800)
        for replica in replicas {
            #expect(try Self.rows(replica) == expected, "\(replica.site) holds other rows")
            // (b) The index holds exactly the base rows, still trained, each row in a list.
            try Self.expectIndexHoldsBaseRows(replica)
        }

        // (c) Retrained on the same rows, every replica trains the same centroids and puts
        // every row in the same list, so approximate queries answer the same rows.
        var queryRandom = SeededRandom(seed: 0x1CF_0034)
        let queries = (0..<8).map { _ in Vector.random(dimensions: Self.dimensions, using: &queryRandom) }
        for replica in replicas { #expect(try Self.retrain(replica) == Self.lists) }
        let trained = try Self.lists(a)
        #expect(trained.centroids.count == Self.lists)
        #expect(trained.assignment.count == expected.count)
        let answers = try Self.answers(a, queries)
        #expect(answers.allSatisfy { $0.count == 10 })
        for replica in [b, c] {
            let other = try Self.lists(replica)
            #expect(other.centroids == trained.centroids, "\(replica.site) trained other centroids")
            #expect(other.assignment == trained.assignment, "\(replica.site) listed rows elsewhere")
            #expect(try Self.answers(replica, queries) == answers, "\(replica.site) answers otherwise")
            try Self.expectIndexHoldsBaseRows(replica)
        }

        // A replica that joins later gets every row in one merge (as a bootstrap snapshot
        // is merged), rebuilds its derived indexes whole, and still has the ivf index.
        let d = try Self.replica("d")
        try Self.deliver(a, to: d, tablesSeen: &tablesSeen)
        #expect(try Self.rows(d) == expected)
        try d.rebuildDerivedIndexes()
        let declaration = try d.writer.read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'docs_vec'") ?? ""
        }
        #expect(declaration.contains("indexed by ivf(nlist=16, nprobe=2)"), "\(declaration)")
        #expect(try Self.retrain(d) == Self.lists)
        try Self.expectIndexHoldsBaseRows(d)
        #expect(try Self.lists(d).centroids == trained.centroids)
        #expect(try Self.answers(d, queries) == answers)
        #expect(tablesSeen == ["docs"])
    }

    @Test("a merge keeps a trained ivf index current for the rows it changes, without retraining")
    func mergeRefreshesTrainedIndexInPlace() throws {
        let a = try Self.replica("a"), b = try Self.replica("b")
        var embeddings = Embeddings(seed: 0x1CF_0035)
        for n in 0..<400 {
            try Self.write(
                a, "INSERT INTO docs (id, title, embedding) VALUES (?, ?, ?)",
                ["a-\(n)", "doc \(n)", embeddings.next().blob])
        }
        var tablesSeen = Set<String>()
        try Self.deliver(a, to: b, tablesSeen: &tablesSeen)
        for replica in [a, b] { #expect(try Self.retrain(replica) == Self.lists) }
        let before = try Self.lists(b).centroids
        #expect(before == (try Self.lists(a).centroids))

        let cursor = try a.currentSequence()
        try Self.write(a, "DELETE FROM docs WHERE id IN ('a-1', 'a-2', 'a-3')")
        try Self.write(a, "UPDATE docs SET embedding = ? WHERE id = 'a-4'", [embeddings.next().blob])
        try Self.write(a, "INSERT INTO docs (id, embedding) VALUES ('a-new', ?)", [embeddings.next().blob])
        let report = try b.merge(a.changes(since: cursor))
        #expect(report.refreshedIndexes["docs_vec"] == 5)
        try Self.expectIndexHoldsBaseRows(b)
        #expect(try Self.lists(b).centroids == before, "a merge adds rows to lists, it does not retrain")
        #expect(try Self.lists(b).assignment == (try Self.lists(a).assignment))
        #expect(tablesSeen == ["docs"])
    }
}
