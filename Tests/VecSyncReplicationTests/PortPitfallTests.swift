import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncStores
import VecSyncTestSupport

@testable import VecSyncReplication

/// What people porting from CRDT-SQLite write must not lose rows silently: the
/// `getChangesSince(last); last = getClock()` loop, a JSON change set edited by hand,
/// compaction past a peer, and children of a row deleted concurrently.
@Suite("Port pitfalls")
struct PortPitfallTests: ReplicationSuite {
    static func count(_ replica: Replica, _ table: String) throws -> Int {
        try replica.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0 }
    }

    static func insertPhotos(_ replica: Replica, _ range: Range<Int>) throws {
        try replica.writer.write { db in
            for index in range {
                try db.execute(
                    sql: "INSERT INTO photos (id, title) VALUES (?, ?)",
                    arguments: [String(format: "p%05d", index), "photo \(index)"])
            }
        }
    }

    @Test("changes(since:) then currentSequence() as the next cursor delivers every row")
    func changesThenCurrentSequenceLosesNothing() throws {
        let alice = try Fixture.replica("alice")
        let bob = try Fixture.replica("bob")
        var last: Int64 = 0
        try Self.insertPhotos(alice, 0..<1_000)
        for round in 0..<3 {
            let changes = try alice.changes(since: last)
            try bob.merge(changes)
            last = try alice.currentSequence()
            try Self.insertPhotos(alice, (1_000 + round * 10)..<(1_010 + round * 10))
        }
        try bob.merge(alice.changes(since: last))
        #expect(try Self.count(bob, "photos") == 1_030)
        // Bounded batches say where the next one starts: their through, not the clock.
        let batch = try alice.changes(since: 0, maximumRows: 400)
        #expect(batch.records.count == 400)
        #expect(batch.through < (try alice.currentSequence()))
    }

    @Test("a JSON change set whose range or rows were edited is refused")
    func editedJSONIsRefused() throws {
        let mac = try Fixture.replica("mac")
        let phone = try Fixture.replica("phone")
        try Self.insertPhotos(mac, 0..<5)
        let first = try mac.changes(since: 0, maximumRows: 2)
        let json = first.jsonString()
        #expect(try ChangeSet(json: json) == first)
        // A through moved past changes the receiver never gets.
        let moved = json.replacingOccurrences(of: "\"through\" : \(first.through)", with: "\"through\" : 999")
        #expect(moved != json)
        #expect {
            try ChangeSet(json: moved)
        } throws: { error in
            guard case VecSyncError.corruptChangeSet(let reason, _) = error else { return false }
            return reason.contains("checksum")
        }
        // A row's value edited, and a JSON form without its checksum.
        let edited = json.replacingOccurrences(of: "photo 1", with: "photo one")
        #expect(edited != json)
        #expect(throws: VecSyncError.self) { try ChangeSet(json: edited) }
        let unchecked = json.replacingOccurrences(
            of: #"\"checksum\" : \"[0-9a-f]{8}\","#, with: "", options: .regularExpression)
        #expect(unchecked != json)
        #expect(throws: VecSyncError.self) { try ChangeSet(json: unchecked) }
        // The honest one merges, and the rest follows from its through.
        try phone.merge(try ChangeSet(json: json))
        try phone.merge(mac.changes(since: first.through))
        #expect(try Self.count(phone, "photos") == 5)
    }

    @Test("a table renamed with alter keeps syncing under its new name, on every replica")
    func renamedTableKeepsSyncing() throws {
        let replicas = try ["alice", "bob"].map { site -> Replica in
            let queue = try StoreSchemaSyncTests.database()
            try queue.write { db in try db.execute(sql: "CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT)") }
            let replica = try Replica(queue, site: SiteID(site))
            try replica.track("users")
            return replica
        }
        let (alice, bob) = (replicas[0], replicas[1])
        func exchange() throws {
            try bob.merge(alice.changes(since: 0))
            try alice.merge(bob.changes(since: 0))
        }
        func names(_ replica: Replica, _ table: String) throws -> [String] {
            try replica.writer.read { db in
                try String.fetchAll(db, sql: "SELECT id || ':' || name FROM \(table) ORDER BY id")
            }
        }
        try Self.write(alice, "INSERT INTO users VALUES ('u1', 'Alice')")
        try Self.write(bob, "INSERT INTO users VALUES ('u2', 'Bob')")
        try exchange()

        let report = try alice.alter("users") { db in try db.execute(sql: "ALTER TABLE users RENAME TO people") }
        #expect(report.renamedTables == ["users": "people"], "\(report)")
        #expect(try alice.trackedTables().map(\.name) == ["people"])
        // Alice writes under the new name, Bob (not migrated yet) under the old one.
        try Self.write(
            alice, "INSERT INTO people VALUES ('u3', 'Carol'); UPDATE people SET name = 'Alice B' WHERE id = 'u1'")
        try Self.write(bob, "INSERT INTO users VALUES ('u4', 'Dan')")
        try exchange()
        #expect(try names(alice, "people") == ["u1:Alice B", "u2:Bob", "u3:Carol", "u4:Dan"])
        // Bob keeps Alice's rows of `people` until he renames too.
        #expect(try bob.quarantinedRecords().contains { $0.table == "people" && $0.key == .text("u3") })
        #expect(try names(bob, "users") == ["u1:Alice", "u2:Bob", "u4:Dan"])
        try bob.alter("users") { db in try db.execute(sql: "ALTER TABLE users RENAME TO people") }
        try exchange()
        try Self.write(bob, "UPDATE people SET name = 'Dan E' WHERE id = 'u4'")
        try exchange()
        for replica in [alice, bob] {
            #expect(try names(replica, "people") == ["u1:Alice B", "u2:Bob", "u3:Carol", "u4:Dan E"])
            #expect(try replica.quarantinedRecords().isEmpty)
        }
    }

    @Test("compacting tombstones past what a known peer merged is refused unless forced")
    func compactionPastAPeerIsRefused() throws {
        let a = try Fixture.replica("a")
        let b = try Fixture.replica("b")
        try Self.insertPhotos(a, 0..<3)
        try b.merge(a.changes(since: 0))
        try a.merge(b.changes(since: 0))  // b acknowledges what it merged of a's
        let acknowledged = try #require(try a.peers().first { $0.site == "b" }?.acknowledged)
        try Self.write(a, "DELETE FROM photos WHERE id = 'p00001'")
        let current = try a.currentSequence()
        #expect(current > acknowledged)
        #expect {
            try a.compactTombstones(acknowledgedThrough: current)
        } throws: { error in
            guard case VecSyncError.invalidArgument(let name, _, let reason) = error else { return false }
            return name == "acknowledgedThrough" && reason.contains("b (through \(acknowledged))")
        }
        #expect(try a.tombstoneCount() == 1)
        // Up to what every known peer acknowledged is allowed; past it, only when forced.
        #expect(try a.compactTombstones(acknowledgedThrough: acknowledged) == 0)
        #expect(try a.syncStatus().peersMayKeepDeletedRows.isEmpty)
        #expect(try a.compactTombstones(acknowledgedThrough: current, force: true) == 1)
        // Forced: the divergence it may leave is reported, and stays reported.
        let forced = try a.syncStatus().peersMayKeepDeletedRows
        #expect(forced.map(\.peer) == ["b"])
        #expect(forced.first?.acknowledged == acknowledged)
        #expect(forced.first?.horizon == current)
        try b.merge(a.changes(since: acknowledged))
        #expect(try Self.count(b, "photos") == 3, "b keeps the row: the delete went with its tombstone")
        #expect(try a.syncStatus().description.contains("peer b may keep rows deleted here"))
    }

    @Test("a photo-store note added to a photo deleted on another device is deleted on both")
    func photoStoreNoteOfADeletedPhotoGoes() throws {
        let (stores, replicas) = try StoreSchemaSyncTests.photoStores()
        try stores[0].upsert(Photo(sourceId: "s1", description: "beach"), embedding: Vector([1, 0, 0, 0]))
        let album = try stores[0].createAlbum(name: "trip", id: "album-1")
        try stores[0].addPhotos(["s1"], toAlbum: album.id)
        try StoreSchemaSyncTests.exchange(replicas[0], replicas[1])
        // The mac deletes the photo; meanwhile the phone adds a note to it.
        #expect(try stores[0].delete(sourceId: "s1"))
        try stores[1].addNote(toPhoto: "s1", content: "sunset", id: "note-1")
        try StoreSchemaSyncTests.exchange(replicas[0], replicas[1])
        for (store, replica) in zip(stores, replicas) {
            #expect(try store.notes(forPhoto: "s1").isEmpty)
            #expect(try Self.count(replica, "notes") == 0)
            #expect(try Self.count(replica, "album_photos") == 0)
            #expect(try Self.count(replica, "photos") == 0)
        }
    }
}
