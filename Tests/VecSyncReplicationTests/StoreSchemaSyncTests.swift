import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncStores
import VecSyncTestSupport

@testable import VecSyncReplication

/// Every table of the package's own schemas can be tracked — integer keys (the message
/// store's `parameter_history`, `AUTOINCREMENT`, and a DriveIndex-style `files` catalogue)
/// with the site that inserts them as authority — and syncs between two replicas.
@Suite("Package schemas sync")
struct StoreSchemaSyncTests {
    /// A fresh in-memory database with the extension on every connection.
    static func database() throws -> DatabaseQueue {
        return try DatabaseQueue(configuration: Configuration.vecSync())
    }

    /// The tables of a photo store.
    static let photoStoreTables = ["photos", "notes", "albums", "album_photos"]

    /// Two photo stores, "mac" and "phone", each with a replica tracking every photo-store table.
    static func photoStores() throws -> (stores: [PhotoStore], replicas: [Replica]) {
        let queues = try [database(), database()]
        let stores = try queues.map { try PhotoStore(writer: $0, dimensions: 4) }
        let replicas = try zip(["mac", "phone"], queues).map { try Replica($0.1, site: SiteID($0.0)) }
        for replica in replicas {
            for table in photoStoreTables { try replica.track(table) }
        }
        return (stores, replicas)
    }

    /// Every row of `tables`, rendered with exact types and bytes.
    static func snapshot(_ replica: Replica, _ tables: [String]) throws -> [String: [String]] {
        try replica.writer.read { db in
            var rows: [String: [String]] = [:]
            for table in tables {
                rows[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedSQLIdentifier) ORDER BY 1").map {
                    $0.databaseValues.map { Fixture.render($0) }.joined(separator: "|")
                }
            }
            return rows
        }
    }

    /// Merges what each has into the other, both ways, twice.
    static func exchange(_ a: Replica, _ b: Replica) throws {
        for _ in 0..<2 {
            let fromA = try b.merge(a.changes(since: 0, maximumRows: 10_000))
            let fromB = try a.merge(b.changes(since: 0, maximumRows: 10_000))
            #expect(fromA.quarantined.isEmpty && fromB.quarantined.isEmpty, "\(fromA) / \(fromB)")
        }
    }

    static let messageTables = ["users", "threads", "messages", "parameter_history"]

    @Test("every message-store table syncs; parameter_history (AUTOINCREMENT) with its authority")
    func messageStoreSyncs() throws {
        let clock = SteppingClock()
        let queues = try [Self.database(), Self.database()]
        let stores = try queues.map { try MessageStore(writer: $0, dimensions: 4, clock: { clock.now() }) }
        let replicas = try zip(["mac", "phone"], queues).map { try Replica($0.1, site: SiteID($0.0)) }
        for replica in replicas {
            for table in Self.messageTables {
                try replica.track(table, authority: table == "parameter_history" ? "mac" : nil)
            }
        }
        try stores[0].createThread(id: "t1", title: "choir", k0: 1.5, alpha: 0.5, m: 1.0)
        try stores[0].addMessage(
            id: "m1", threadId: "t1", userId: "u1", content: "hello", embedding: Vector([1, 0, 0, 0]), phase: .action)
        try Self.exchange(replicas[0], replicas[1])
        #expect(try stores[1].parameterHistory(ofThread: "t1").count == 1)
        // The phone edits what it may: messages, users and threads (TEXT keys).
        try stores[1].addMessage(
            id: "m2", threadId: "t1", userId: "u2", content: "reply", embedding: Vector([0, 1, 0, 0]),
            phase: .experience)
        // The mac, the authority, records more parameter changes (new AUTOINCREMENT ids).
        _ = try stores[0].setApprovalStatus(.approved, ofMessage: "m1")
        #expect(try stores[0].parameterHistory(ofThread: "t1").count == 2)
        try Self.exchange(replicas[0], replicas[1])
        let expected = try Self.snapshot(replicas[0], Self.messageTables)
        #expect(try Self.snapshot(replicas[1], Self.messageTables) == expected)
        #expect(expected["messages"]?.count == 2)
        // The phone cannot insert parameter history: the mac assigns those ids.
        #expect(throws: (any Error).self) {
            try stores[1].createThread(id: "t2", title: "phone's", k0: 1, alpha: 1, m: 1)
        }
        // Both replicas find the merged embeddings through the libSQL index.
        for store in stores {
            #expect(try store.similar(to: Vector([0, 1, 0, 0]), limit: 1).first?.message.id == "m2")
        }
    }

    @Test("every photo-store table syncs")
    func photoStoreSyncs() throws {
        let (stores, replicas) = try Self.photoStores()
        let tables = Self.photoStoreTables
        try stores[0].upsert(
            Photo(sourceId: "s1", description: "beach", tags: ["sea"]), embedding: Vector([1, 0, 0, 0]))
        try stores[1].upsert(Photo(sourceId: "s2", description: "forest"), embedding: Vector([0, 1, 0, 0]))
        let album = try stores[0].createAlbum(name: "trip", id: "album-1")
        try stores[0].addPhotos(["s1"], toAlbum: album.id)
        try stores[1].addNote(toPhoto: "s2", content: "green", id: "note-1")
        try Self.exchange(replicas[0], replicas[1])
        let expected = try Self.snapshot(replicas[0], tables)
        #expect(try Self.snapshot(replicas[1], tables) == expected)
        #expect(expected["photos"]?.count == 2 && expected["album_photos"]?.count == 1 && expected["notes"]?.count == 1)
        for store in stores {
            #expect(try store.photos(inAlbum: "album-1").map(\.sourceId) == ["s1"])
        }
    }

    @Test("sql/choir.sql's tables and a DriveIndex-style AUTOINCREMENT catalogue track and sync")
    func scriptSchemasSync() throws {
        // The script's CREATE statements (it goes on with demo rows and shell commands).
        let text = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("sql/choir.sql"), encoding: .utf8)
        let script = text.split(separator: "\n").filter { !$0.hasPrefix(".") && !$0.hasPrefix("--") }
            .joined(separator: "\n").components(separatedBy: ";\n")
            .filter { $0.trimmingCharacters(in: .whitespacesAndNewlines).uppercased().hasPrefix("CREATE") }
            .map { $0 + ";\n" }.joined()
        #expect(script.contains("parameter_history") && script.contains("AUTOINCREMENT"))
        let files = """
            CREATE TABLE files (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              path TEXT NOT NULL UNIQUE,
              size INTEGER NOT NULL DEFAULT 0,
              modified REAL,
              digest BLOB);
            """
        let queues = try [Self.database(), Self.database()]
        for queue in queues { try queue.write { db in try db.execute(sql: script + files) } }
        let replicas = try zip(["desktop", "phone"], queues).map { try Replica($0.1, site: SiteID($0.0)) }
        let tables = Self.messageTables + ["files"]
        for replica in replicas {
            for table in tables {
                let integerKey = table == "parameter_history" || table == "files"
                try replica.track(table, authority: integerKey ? "desktop" : nil)
            }
        }
        try replicas[0].writer.write { db in
            try db.execute(sql: "INSERT INTO threads (id, title) VALUES ('t1', 'x')")
            try db.execute(sql: "INSERT INTO parameter_history (thread_id, k0) VALUES ('t1', 1.0), ('t1', 2.0)")
            try db.execute(
                sql:
                    "INSERT INTO files (path, size, modified, digest) VALUES ('/a', 10, 1.0, x'00ff'), ('/b', 20, NULL, NULL)"
            )
            try db.execute(sql: "DELETE FROM files WHERE path = '/a'")
            try db.execute(sql: "INSERT INTO files (path) VALUES ('/c')")  // id 3: AUTOINCREMENT never re-uses 1
        }
        try Self.exchange(replicas[0], replicas[1])
        try replicas[1].writer.write { db in try db.execute(sql: "UPDATE files SET size = 99 WHERE path = '/c'") }
        try Self.exchange(replicas[0], replicas[1])
        let expected = try Self.snapshot(replicas[0], tables)
        #expect(try Self.snapshot(replicas[1], tables) == expected)
        #expect(expected["files"] == ["i2|t2f62|i20|null|null", "i3|t2f63|i99|null|null"])
    }
}
