import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncStores
import VecSyncTestSupport

@testable import VecSyncReplication

/// Integer keys written on every device: each replica keeps its own ids, change sets name
/// rows by identity (creating site, id there), and merges translate keys and the foreign
/// keys that refer to them.
@Suite("Local integer keys")
struct LocalKeyTests: ReplicationSuite {
    /// The replicas of each test, new for every test.
    let a: Replica, b: Replica, c: Replica
    init() throws { (a, b, c) = (try Self.node("a"), try Self.node("b"), try Self.node("c")) }

    static func replica(_ site: SiteID, schema: String) throws -> Replica {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: schema) }
        return try Replica(queue, site: site)
    }

    static func strings(_ replica: Replica, _ sql: String) throws -> [String] {
        try replica.writer.read { db in try String.fetchAll(db, sql: sql) }
    }

    /// Merges everything each has into the other, both ways, twice; nothing is quarantined.
    static func exchange(_ a: Replica, _ b: Replica) throws {
        for _ in 0..<2 {
            let fromA = try b.merge(ChangeSet(serialized: a.changes(since: 0).serialized()))
            let fromB = try a.merge(ChangeSet(serialized: b.changes(since: 0).serialized()))
            #expect(fromA.quarantined.isEmpty && fromB.quarantined.isEmpty, "\(fromA) / \(fromB)")
        }
    }

    static let usersAndPosts = """
        CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE posts (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER REFERENCES users(id), title TEXT);
        CREATE TABLE notes (id TEXT PRIMARY KEY, author INTEGER REFERENCES users(id), body TEXT);
        """

    static func node(_ site: SiteID) throws -> Replica {
        let node = try replica(site, schema: usersAndPosts)
        for table in ["users", "posts", "notes"] { try node.track(table) }
        return node
    }

    @Test("CRDT-SQLite's two-node example: Alice and Bob both get id 1 offline, and both nodes end with both")
    func aliceAndBob() throws {
        let schema = "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)"
        let node1 = try Self.replica("node-1", schema: schema)
        let node2 = try Self.replica("node-2", schema: schema)
        for node in [node1, node2] {
            let table = try node.track("users")
            #expect(table.hasLocalKeys && table.authority == nil)
        }
        let ids = try [(node1, "Alice"), (node2, "Bob")].map { node, name in
            try node.writer.write { db -> Int64 in
                try db.execute(sql: "INSERT INTO users (name) VALUES (?)", arguments: [name])
                return db.lastInsertedRowID
            }
        }
        #expect(ids == [1, 1], "both devices assign id 1")
        try Self.exchange(node1, node2)
        // Each node keeps its own row's id; the other's row gets the next id here.
        #expect(try Self.strings(node1, "SELECT id || ':' || name FROM users ORDER BY id") == ["1:Alice", "2:Bob"])
        #expect(try Self.strings(node2, "SELECT id || ':' || name FROM users ORDER BY id") == ["1:Bob", "2:Alice"])
        // last_insert_rowid() names the row the app inserted, on both nodes, after merges.
        for (node, name) in [(node1, "Carol"), (node2, "Dan")] {
            let id = try node.writer.write { db -> Int64 in
                try db.execute(sql: "INSERT INTO users (name) VALUES (?)", arguments: [name])
                return db.lastInsertedRowID
            }
            #expect(id == 3)
            #expect(try Self.strings(node, "SELECT name FROM users WHERE id = \(id)") == [name])
        }
        try Self.exchange(node1, node2)
        for node in [node1, node2] {
            #expect(try Self.strings(node, "SELECT name FROM users ORDER BY name") == ["Alice", "Bob", "Carol", "Dan"])
        }
        // Change sets name rows by identity: the creating site and its id there.
        let keys = try node2.changes(since: 0).records.map(\.key)
        #expect(
            Set(keys) == [
                .identity(site: "node-2", id: 1), .identity(site: "node-1", id: 1),
                .identity(site: "node-2", id: 3), .identity(site: "node-1", id: 3),
            ])
    }

    @Test("a foreign key to a row made on another device points at that row on every replica")
    func foreignKeysAreTranslated() throws {
        // b has rows of its own first, so ids differ between the replicas.
        try Self.write(b, "INSERT INTO users (name) VALUES ('b1'), ('b2')")
        try Self.write(a, "INSERT INTO users (name) VALUES ('Ada')")
        try Self.write(a, "INSERT INTO posts (user_id, title) VALUES (1, 'by Ada on a')")
        try Self.write(a, "INSERT INTO notes (id, author, body) VALUES ('n1', 1, 'text key, integer reference')")
        try Self.exchange(a, b)
        // On b, Ada is id 3; her post and note refer to 3.
        #expect(try Self.strings(b, "SELECT id FROM users WHERE name = 'Ada'") == ["3"])
        let query = """
            SELECT u.name || ':' || p.title FROM posts AS p JOIN users AS u ON u.id = p.user_id
            UNION ALL SELECT u.name || ':' || n.id FROM notes AS n JOIN users AS u ON u.id = n.author ORDER BY 1
            """
        #expect(try Self.strings(b, query) == ["Ada:by Ada on a", "Ada:n1"])
        // b writes a post for Ada (its id 3) and one for b1 (its id 1): a sees them under its ids.
        try Self.write(b, "INSERT INTO posts (user_id, title) VALUES (3, 'for Ada from b'), (1, 'for b1 from b')")
        try Self.exchange(a, b)
        let expected = ["Ada:by Ada on a", "Ada:for Ada from b", "Ada:n1", "b1:for b1 from b"]
        #expect(try Self.strings(a, query) == expected)
        #expect(try Self.strings(b, query) == expected)
        #expect(try Self.strings(a, "SELECT id || ':' || name FROM users ORDER BY id") == ["1:Ada", "2:b1", "3:b2"])
    }

    @Test("a child that arrives before its parent waits, and points at that parent once it arrives")
    func childBeforeParent() throws {
        try Self.write(c, "INSERT INTO users (name) VALUES ('c1')")
        try Self.write(a, "INSERT INTO users (name) VALUES ('x'), ('Ada')")  // Ada is a's 2
        let parents = try a.changes(since: 0)
        try Self.write(a, "INSERT INTO posts (user_id, title) VALUES (2, 'child')")
        let children = try a.changes(since: parents.through)
        #expect(children.records.count == 1, "the parent was sent before")
        #expect(children.records[0].columns[0]?.value == .identity(site: "a", id: 2))
        let early = try c.merge(ChangeSet(json: children.jsonString()))
        #expect(early.quarantined.count == 1, "\(early)")
        #expect(try Self.strings(c, "SELECT count(*) FROM posts") == ["0"])
        let late = try c.merge(parents)
        #expect(late.quarantined.isEmpty)
        #expect(try c.quarantinedRecords().isEmpty)
        // The merge of the child reserved id 2 for Ada; x, which came later, took 3.
        #expect(
            try Self.strings(c, "SELECT u.name || ':' || u.id FROM posts AS p JOIN users AS u ON u.id = p.user_id")
                == ["Ada:2"])
        #expect(try Self.strings(c, "SELECT id || ':' || name FROM users ORDER BY id") == ["1:c1", "2:Ada", "3:x"])
    }

    @Test("an app insert that takes the id reserved for an awaited parent keeps its row; the parent gets another")
    func reservedIDTakenByTheApp() throws {
        try Self.write(a, "INSERT INTO users (name) VALUES ('Ada')")
        let parent = try a.changes(since: 0)
        try Self.write(a, "INSERT INTO posts (user_id, title) VALUES (1, 'child')")
        let child = try a.changes(since: parent.through)
        #expect(try c.merge(child).quarantined.count == 1)
        // c's own insert gets id 1, the id the merge reserved for Ada.
        let id = try c.writer.write { db -> Int64 in
            try db.execute(sql: "INSERT INTO users (name) VALUES ('mine')")
            return db.lastInsertedRowID
        }
        #expect(id == 1)
        try c.merge(parent)
        #expect(try c.quarantinedRecords().isEmpty)
        #expect(try Self.strings(c, "SELECT id || ':' || name FROM users ORDER BY id") == ["1:mine", "2:Ada"])
        #expect(
            try Self.strings(c, "SELECT u.name FROM posts AS p JOIN users AS u ON u.id = p.user_id") == ["Ada"])
        // And c's row travels as c's own.
        try Self.exchange(a, c)
        #expect(try Self.strings(a, "SELECT id || ':' || name FROM users ORDER BY id") == ["1:Ada", "2:mine"])
    }

    @Test("edits and deletes of a row made elsewhere travel back to its origin and apply to the right row")
    func editsAndDeletesTravelBack() throws {
        try Self.write(b, "INSERT INTO users (name) VALUES ('b1'), ('b2'), ('b3')")
        try Self.write(a, "INSERT INTO users (name) VALUES ('Ada'), ('Bea')")
        try Self.exchange(a, b)
        // On b, Ada is 4 and Bea 5; b edits Ada, deletes Bea.
        try Self.write(b, "UPDATE users SET name = 'Ada L.' WHERE id = 4")
        try Self.write(b, "DELETE FROM users WHERE id = 5")
        try a.merge(b.changes(since: 0))
        #expect(
            try Self.strings(a, "SELECT id || ':' || name FROM users ORDER BY id") == [
                "1:Ada L.", "3:b1", "4:b2", "5:b3",
            ])
        // A third replica that hears of it all from b alone: same rows, its own ids.
        try c.merge(b.changes(since: 0))
        #expect(try Self.strings(c, "SELECT name FROM users ORDER BY name") == ["Ada L.", "b1", "b2", "b3"])
        try Self.exchange(a, c)
        try Self.exchange(b, c)
        for node in [a, b, c] {
            #expect(try Self.strings(node, "SELECT name FROM users ORDER BY name") == ["Ada L.", "b1", "b2", "b3"])
        }
        // a deletes b's row b2 and renames b1; b applies both to its own ids 2 and 1.
        try Self.write(a, "DELETE FROM users WHERE name = 'b2'")
        try Self.write(a, "UPDATE users SET name = 'b1!' WHERE name = 'b1'")
        try b.merge(a.changes(since: 0))
        #expect(
            try Self.strings(b, "SELECT id || ':' || name FROM users ORDER BY id") == ["1:b1!", "3:b3", "4:Ada L."])
    }

    @Test("a restored database whose lost row's id went to a row from elsewhere keeps both, by identity")
    func lostRowWhoseIDWasTaken() throws {
        let backup = try DatabaseQueue()
        try a.writer.backup(to: backup)
        try Self.write(a, "INSERT INTO users (name) VALUES ('lost')")  // a's id 1, published
        let lost = try a.changes(since: 0)
        // a is restored from its backup: the row is gone here, still known elsewhere.
        let restored = try Replica(backup, site: "a")
        try Self.write(b, "INSERT INTO users (name) VALUES ('from b')")
        try restored.merge(b.changes(since: 0))  // b's row takes id 1 here
        try restored.recoverLostChanges([lost])
        #expect(
            try Self.strings(restored, "SELECT id || ':' || name FROM users ORDER BY id") == ["1:from b", "2:lost"])
        #expect(
            Set(try restored.changes(since: 0).records.map(\.key)) == [
                .identity(site: "a", id: 1), .identity(site: "b", id: 1),
            ])
        try Self.exchange(restored, b)
        #expect(try Self.strings(b, "SELECT id || ':' || name FROM users ORDER BY id") == ["1:from b", "2:lost"])
    }

    @Test("a restored database taking back its lost future gives a row from elsewhere an id its own rows do not come back to")
    func lostFutureWithRowsFromElsewhere() throws {
        let backup = try DatabaseQueue()
        try a.writer.backup(to: backup)
        try Self.write(a, "INSERT INTO users (name) VALUES ('mine')")  // a's id 1
        try Self.write(b, "INSERT INTO users (name) VALUES ('from b')")
        try a.merge(b.changes(since: 0))  // b's row takes id 2 on a
        try Self.write(a, "UPDATE users SET name = 'from b, edited on a' WHERE id = 2")
        // a's published changes: its own row and its edit of b's row, both lost by the restore.
        let lost = try a.changes(since: 0)
        #expect(Set(lost.records.map(\.key)) == [.identity(site: "a", id: 1), .identity(site: "b", id: 1)])
        let restored = try Replica(backup, site: "a")
        try restored.recoverLostChanges([lost])
        // Its own row comes back at its own id; b's row, new here, takes another one.
        #expect(
            try Self.strings(restored, "SELECT id || ':' || name FROM users ORDER BY id") == [
                "1:mine", "2:from b, edited on a",
            ])
        try Self.exchange(restored, b)
        for replica in [restored, b] {
            #expect(
                try Self.strings(replica, "SELECT name FROM users ORDER BY name") == ["from b, edited on a", "mine"])
        }
    }

    @Test("a change set with identities is format 4, in binary and JSON alike; one without stays format 3")
    func identitiesRoundTrip() throws {
        try Self.write(a, "INSERT INTO users (name) VALUES ('Ada')")
        let afterAda = try a.currentSequence()
        try Self.write(a, "INSERT INTO notes (id, author, body) VALUES ('n1', 1, 'x'), ('n2', NULL, 'y')")
        let afterNotes = try a.currentSequence()
        let changes = try a.changes(since: 0)
        #expect(changes.writtenFormatVersion == 4)
        let bytes = changes.serialized()
        #expect(bytes[4] == 4 && bytes[5] == 0)
        #expect(try ChangeSet(serialized: bytes) == changes)
        #expect(try ChangeSet(json: changes.jsonString()) == changes)
        #expect(changes.jsonString().contains("\"identity\" : 1"))
        #expect(changes.jsonString().contains("\"localKeys\" : true"))
        // Only the notes (TEXT keys), whose author is an identity: still format 4.
        let notes = try a.changes(since: afterAda)
        #expect(notes.tables.map(\.name) == ["notes"] && notes.writtenFormatVersion == 4)
        // A change set of text-keyed rows without references is read by earlier builds.
        try Self.write(a, "INSERT INTO notes (id, author, body) VALUES ('n3', NULL, 'z')")
        let plain = try a.changes(since: afterNotes)
        #expect(plain.records.count == 1 && plain.writtenFormatVersion == 3 && plain.serialized()[4] == 3)
        // Format 3 carries no identity: one written so anyway is refused as corrupt.
        #expect(throws: VecSyncError.self) { try ChangeSet(serialized: changes.serialized(formatVersion: 3)) }
    }

    @Test("a table tracked without an authority by an earlier version keeps ids the same on every replica")
    func earlierIntegerTablesKeepTheirIDs() throws {
        let schema = "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)"
        let nodes = try ["a", "b"].map { try Self.replica(SiteID($0), schema: schema) }
        for node in nodes {
            try node.track("users")
            // What an earlier version recorded: no local keys.
            try Self.write(node, "UPDATE vecsync_tables SET local_keys = 0 WHERE name = 'users'")
            try node.writer.write { db in
                try TriggerSQL(table: try #require(Replica.recordedTables(db).first), site: node.site).install(db)
            }
            #expect(try node.trackedTables().first?.hasLocalKeys == false)
        }
        try Self.write(nodes[0], "INSERT INTO users (id, name) VALUES (1, 'x'), (2, 'y')")
        let changes = try nodes[0].changes(since: 0)
        #expect(changes.records.map(\.key) == [.integer(1), .integer(2)] && changes.writtenFormatVersion == 3)
        try nodes[1].merge(changes)
        #expect(try Self.strings(nodes[1], "SELECT id || ':' || name FROM users ORDER BY id") == ["1:x", "2:y"])
        // A replica tracking the table with local keys does not merge into it.
        let fresh = try Self.replica("c", schema: schema)
        try fresh.track("users")
        #expect(try fresh.merge(changes).quarantined.count == 2)
        #expect(throws: VecSyncError.self, "ids local to each replica have no authority") {
            try fresh.setAuthority("c", for: "users")
        }
    }

    @Test("Choir: approvals on two devices offline keep every parameter_history row of both, with its thread")
    func choirHistoryFromBothDevices() throws {
        let choir = try ChoirPair(messages: 8, k0: 1.5)
        let (stores, replicas) = (choir.stores, choir.replicas)
        // Offline: the phone creates a thread (a parameter_history row: error 1811 with an
        // authority) and both approve messages, each writing history rows with its own ids.
        try stores[1].createThread(id: "t2", title: "phone's", k0: 1, alpha: 1, m: 1)
        for index in 0..<3 { _ = try stores[0].setApprovalStatus(.approved, ofMessage: "m\(index)") }
        for index in 3..<8 { _ = try stores[1].setApprovalStatus(.refused, ofMessage: "m\(index)") }
        let macIDs = try Self.strings(replicas[0], "SELECT id FROM parameter_history ORDER BY id")
        let phoneIDs = try Self.strings(replicas[1], "SELECT id FROM parameter_history ORDER BY id")
        #expect(macIDs == ["1", "2", "3", "4"] && phoneIDs == ["1", "2", "3", "4", "5", "6", "7"])
        try choir.exchange()
        let history =
            "SELECT thread_id || ':' || event_type || ':' || timestamp FROM parameter_history ORDER BY timestamp, thread_id"
        let expected = try Self.strings(replicas[0], history)
        #expect(expected.count == 1 + 1 + 3 + 5)
        #expect(try Self.strings(replicas[1], history) == expected)
        #expect(expected.filter { $0.hasPrefix("t1:message_approved") }.count == 3)
        #expect(expected.filter { $0.hasPrefix("t1:message_refused") }.count == 5)
        #expect(expected.filter { $0.hasPrefix("t2:thread_creation") }.count == 1)
        for store in stores {
            #expect(try store.parameterHistory(ofThread: "t1").count == 9)
            #expect(try store.parameterHistory(ofThread: "t2").count == 1)
        }
        // Each device kept the ids it gave its own rows.
        #expect(try Self.strings(replicas[0], "SELECT id FROM parameter_history WHERE id <= 4 ORDER BY id") == macIDs)
        #expect(
            try Self.strings(replicas[1], "SELECT event_type FROM parameter_history WHERE id BETWEEN 5 AND 7")
                == ["message_refused", "message_refused", "message_refused"])
    }
}
