import Foundation
import Testing
import VecSync
import VecSyncHTTP

/// The examples of docs/sync.md and docs/server.md: compiled, not run (they name a shared
/// drive and a server; the sync suites run the same calls).
enum SyncPageExamples {
    static func tour(
        peerCursor: Int64, incoming: ChangeSet, n: Int64, send: (ChangeSet) throws -> Void
    ) async throws {
        // snippet: sync-tour
        let db = try VecSyncDatabase(path: "photos.db")
        let replica = try Replica(db.writer, site: "macbook")         // the site id stays with the file
        try replica.track("photos"); try replica.track("notes"); try replica.track("albums")
        // An FTS5 table over notes, keyed by an UNINDEXED note_id column, refreshed after each merge.
        // (vec0 indexes made with VectorIndex and libSQL vector indexes are found without this.)
        try replica.register(DerivedIndex(fts5: "notes_fts", on: "notes", keyColumn: "note_id", columns: ["body"]))
        // An external-content FTS5 table (content='files', content_rowid='id'): read from its declaration;
        // kept by the app's own triggers on files, or by three the engine installs when it has none.
        try replica.register(try db.read { db in try DerivedIndex.fts5(reading: "files_fts", on: "files", in: db) })
        let report = try replica.sync(through: FolderTransport(path: "/Volumes/Drive/photos-sync"))
        print(report)   // macbook: pushed 12 rows in 1 files; pulled 3 files from 2 sites: …

        // Or carry change sets yourself:
        let outgoing = try replica.changes(since: peerCursor)        // every change since; .serialized()
        let batch = try replica.changes(since: peerCursor, maximumRows: 400)   // next cursor: batch.through
        let merged = try replica.merge(incoming)                     // applied, ignored, conflicts
        try replica.setReadOnly(true)                                // pulls, never pushes, refuses local writes
        try replica.setAuthority("macbook", for: "photos")           // its writes win concurrent ones
        try replica.track("users")                                   // INTEGER PRIMARY KEY: every device inserts, ids its own
        try replica.track("files", authority: "macbook")             // INTEGER PRIMARY KEY: same ids, only macbook inserts
        try replica.compactTombstones()                              // once every known peer acknowledged them
        try replica.compactTombstones(acknowledgedThrough: n)        // or up to a sequence number you know all merged
                                                                     // (refused past a known peer unless force: true)
        for try await batch in replica.changeSets(since: 0) { try send(batch) }   // every change, batch after batch
        let json = outgoing.jsonString(); _ = try ChangeSet(json: json)   // Codable, checksummed; round-trips exactly
        try replica.alter("photos", renamingColumns: ["title": "caption"]) { db in   // drop/rename columns, drop tables
            try db.execute(sql: "ALTER TABLE photos RENAME COLUMN title TO caption")
            try db.execute(sql: "UPDATE photos SET caption = trim(caption)")        // recorded, and syncs
        }
        try replica.restamp("albums", columns: ["name"])      // after a rebuild outside alter changed names
        try replica.alter("users") { db in try db.execute(sql: "ALTER TABLE users RENAME TO people") }  // syncs as people
        try db.write { db in try CounterColumns.declare(db, table: "threads", columns: ["k0"]) }  // before track: steps add up
        // end snippet
        _ = (batch, merged)
    }

    static func server(replica: Replica, token: String) async throws {
        // snippet: server-transport
        let server = HTTPTransport(server: URL(string: "https://sync.example.com")!, space: "family", token: token)
        let report = try replica.sync(through: server)   // blocks: call it off the main thread
        let status = try server.status()                 // devices, counts, last push and pull, version
        // Or every 30 s, the pause doubling after each failure (up to 10 minutes):
        for await event in BackgroundSync(replica: replica, transport: server, interval: .seconds(30)).events() { print(event) }
        // end snippet
        _ = (report, status)
    }
}

/// The examples of docs/apple.md that run on any system.
@Suite("docs/apple.md examples")
struct ApplePageExamples {
    @Test("A database opened the VecSync way has the extension on every connection")
    func openTheVecSyncWay() throws {
        let url = URL(fileURLWithPath: try DocExample.databasePath("apple"))
        // snippet: apple-open
        let db = try VecSyncDatabase(path: url.path)          // a GRDB DatabasePool, every connection ready

        // or your own pool or queue:
        let dbPool = try DatabasePool(path: url.path, configuration: .vecSync())
        // end snippet
        #expect(try db.read { db in try String.fetchOne(db, sql: "SELECT vec_version()") } == "v0.1.9")
        #expect(try dbPool.read { db in try String.fetchOne(db, sql: "SELECT vec_version()") } == "v0.1.9")
    }

    /// Compiled, not run: the budget is the process's, and other suites run beside this one.
    static func memoryBudget() {
        // snippet: apple-memory-budget
        VecSyncExtension.memoryBudget = 32 << 20   // at most 32 MiB of vectors in memory
        // end snippet
    }
}
