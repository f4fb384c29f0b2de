import Foundation
import Testing
import VecSync

/// The examples of docs/swift.md.
@Suite("docs/swift.md examples")
struct SwiftPageExamples {
    @Test("The first ten minutes: messages and photos stored and searched")
    func firstTenMinutes() throws {
        let path = try DocExample.databasePath("first-ten-minutes")
        let floats = DocExample.vector(1536, seed: 2).scalars
        let queryVector = Vector(floats)
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let v = DocExample.vector(768, seed: 3)
        // snippet: first-ten-minutes
        let db = try VecSyncDatabase(path: path)                // GRDB DatabasePool, extension loaded

        // Messages (the Choir schema: users, threads with k0/alpha/m, messages with
        // embedding F32_BLOB(1536) and the libSQL index messages_embedding_idx, parameter_history)
        let messages = try MessageStore(db, dimensions: 1536)
        try messages.createThread(id: "t1", title: "Trip", k0: 1, alpha: 1.5, m: 1)
        try messages.addMessage(id: "m1", threadId: "t1", userId: "u1", content: "Kyoto temples",
                                embedding: Vector(floats), phase: .experience)
        try messages.setApprovalStatus(.approved, ofMessage: "m1")  // k0 +0.05, α +0.02, m −0.01, recorded
        let similar = try messages.similar(to: queryVector, inThread: "t1", approvedOnly: true, limit: 5)
        for (message, distance) in similar { print(distance, message.content) }
        // nearest first, exactly `limit` rows whenever that many messages match
        let priors = try messages.experiences(inThread: "t1")    // each with the parameters of its time

        // Photos (PhotoBrain: metadata, 768-d embeddings, notes, albums; vec0 + FTS5 indexes)
        let photos = try PhotoStore(db, dimensions: 768)
        try photos.upsert(Photo(sourceId: "PH-1", captureDate: date, description: "Sunset on the beach",
                                tags: ["beach"]), embedding: v)
        let album = try photos.createAlbum(name: "Japan")
        try photos.addPhotos(["PH-1"], toAlbum: album.id)
        try photos.addNote(toPhoto: "PH-1", content: "Best evening of the trip")
        let inJapan = try photos.search(similarTo: v, limit: 20, filter: .album("Japan") && .takenAfter(date))
        let alike = try photos.similar(toPhoto: "PH-1", limit: 10)
        let byText = try photos.search(text: "sunset beach", limit: 20)                 // FTS5, BM25
        let hybrid = try photos.search(text: "sunset beach", similarTo: v, limit: 20)   // reciprocal rank fusion
        // end snippet
        #expect(similar.count == 1)
        #expect(priors.count == 1)
        #expect(inJapan.isEmpty)   // taken at `date`, not after it
        #expect(alike.isEmpty)     // no other photo
        #expect(byText.map(\.photo.sourceId) == ["PH-1"])
        #expect(hybrid.map(\.photo.sourceId) == ["PH-1"])
    }

    @Test("A GRDB pool of your own gets the extension from its configuration")
    func ownDatabase() throws {
        let path = try DocExample.databasePath("own-pool")
        // snippet: own-pool
        let dbPool = try DatabasePool(path: path, configuration: .vecSync())  // or var config; config.enableVecSync()
        let db = try VecSyncDatabase(dbPool)   // checks the extension is there
        // end snippet
        #expect(try db.read { db in try String.fetchOne(db, sql: "SELECT vec_version()") } == "v0.1.9")
    }

    /// Typed queries over the stores' own indexes (compiled; `ownPoolQueries` runs them).
    static func typedQueries(_ dbPool: DatabasePool, query: Vector) throws
        -> ([VectorMatch<Int64>], [VectorMatch<String>])
    {
        // snippet: typed-queries
        let rowids = try dbPool.read { db in     // [VectorMatch<Int64>]: rowid and distance, nearest first
            try db.vectorTopK(index: "messages_embedding_idx", near: query, k: 10)
        }
        let keys = try dbPool.read { db in       // [VectorMatch<String>]; the filters run inside the scan
            try db.vec0Search(table: "photos_vec", keyColumn: "photo_id", near: query, k: 10,
                              where: [.equal("album", "Japan"), .greater("taken_at", 1_700_000_000)],
                              as: String.self)
        }
        // end snippet
        return (rowids, keys)
    }

    @Test("vectorTopK and vec0Search answer on a pool of your own")
    func ownPoolQueries() throws {
        let dbPool = try DatabasePool(path: try DocExample.databasePath("typed"), configuration: .vecSync())
        try dbPool.write { db in
            try db.execute(sql: """
                CREATE TABLE messages (id TEXT PRIMARY KEY, embedding F32_BLOB(3));
                CREATE INDEX messages_embedding_idx ON messages(libsql_vector_idx(embedding));
                INSERT INTO messages VALUES ('m1', vector32('[1, 0, 0]')), ('m2', vector32('[0, 1, 0]'));
                CREATE VIRTUAL TABLE photos_vec USING vec0(
                  photo_id text primary key, embedding float[3], album text, taken_at integer);
                INSERT INTO photos_vec VALUES ('PH-1', '[1, 0, 0]', 'Japan', 1700000100),
                                              ('PH-2', '[1, 0, 0]', 'Home', 1700000100);
                """)
        }
        let (rowids, keys) = try Self.typedQueries(dbPool, query: Vector([1, 0, 0]))
        #expect(rowids.count == 2)
        #expect(keys.map(\.key) == ["PH-1"])
    }

    @Test("A vector index over your own table is created, searched and verified")
    func vectorIndex() throws {
        let dbPool = try DatabasePool(path: try DocExample.databasePath("index"), configuration: .vecSync())
        let query = DocExample.vector(384, seed: 4)
        try dbPool.write { db in
            try db.execute(sql: "CREATE TABLE docs (id INTEGER PRIMARY KEY, lang TEXT, embedding F32_BLOB(384))")
            try db.execute(sql: "INSERT INTO docs VALUES (1, 'en', ?), (2, 'fr', ?)", arguments: [query, query])
        }
        // snippet: vector-index
        let index = VectorIndex(table: "docs", primaryKey: "id", embeddingColumn: "embedding",
                                dimensions: 384, metric: .cosine, name: "docs_vec",
                                metadata: [.init("lang", .text)])
        try dbPool.write { db in try index.create(db) }   // vec0 table + backfill + triggers + registry
        let nearest = try dbPool.read { db in
            try index.search(db, near: query, limit: 10, where: [.equal("lang", "en")], as: Int64.self)
        }
        let report = try dbPool.read { db in try index.verify(db) }   // missing, stale, extra, invalid rows
        if !report.isConsistent { try dbPool.write { db in try index.rebuild(db) } }
        // end snippet
        #expect(nearest.map(\.key) == [1])
        #expect(report.isConsistent)
    }

    @Test("An ivf index is declared, trained, measured and searched from Swift")
    func ivfIndex() throws {
        let dbPool = try DatabasePool(path: try DocExample.databasePath("ivf"), configuration: .vecSync())
        let query = DocExample.vector(384, seed: 5)
        try dbPool.write { db in
            try db.execute(sql: "CREATE TABLE docs (id INTEGER PRIMARY KEY, lang TEXT, embedding F32_BLOB(384))")
            for id in 1...600 {
                try db.execute(
                    sql: "INSERT INTO docs VALUES (?, 'en', ?)", arguments: [id, DocExample.vector(384, seed: UInt64(id))])
            }
        }
        // snippet: ivf-index
        let index = VectorIndex(table: "docs", dimensions: 384, name: "docs_vec",
                                ivf: .init(lists: 24, probes: 4))
        try dbPool.write { db in
            try index.create(db)
            try index.retrainIVF(db)   // trains itself at 4,096 rows; retrain after large changes
        }
        let (status, recall, nearest) = try dbPool.read { db in
            (try index.ivfStatus(db),                                    // lists, sizes, drift
             try index.ivfRecall(db, queries: 50, k: 10, probes: 8),     // share of the exact top 10 found
             try index.search(db, near: query, limit: 10, probes: 8, as: Int64.self))
        }
        if status.retrainSuggested { try dbPool.write { db in try index.retrainIVF(db) } }
        // end snippet
        #expect(status.trained && status.lists == 24 && status.listedRows == 600 && status.codesStored)
        #expect(recall.map { $0 > 0 && $0 <= 1 } == true)
        #expect(nearest.count == 10 && nearest[0].key == 5)
    }
}
