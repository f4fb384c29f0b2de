import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Keys that cannot collide: integer keys local to each replica, or assigned by one site,
/// BLOB keys end to end, and keys of the wrong kind refused when the row is written.
@Suite("Keys")
struct KeyTests: FolderSuite {
    let scratch = ScratchFolder("blob-keys")

    static func replica(_ site: SiteID, schema: String) throws -> Replica {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: schema) }
        return try Replica(queue, site: site)
    }

    /// The SQLite message of a refused write, or nil when the write went through.
    static func refusal(_ replica: Replica, _ sql: String, _ arguments: StatementArguments = []) -> String? {
        do {
            try write(replica, sql, arguments)
            return nil
        } catch let error as DatabaseError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test("integer keys are tracked without an authority, as ids local to each replica")
    func integerKeysWithoutAnAuthorityAreLocal() throws {
        // Node 1 would insert Alice and node 2 Bob, both as id 1: each keeps its id, and
        // the other's row gets an id of its own there (LocalKeyTests has the merges).
        for schema in [
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
            "CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT)",
            "CREATE TABLE users (id INT PRIMARY KEY, name TEXT)",
            "CREATE TABLE users (id BIGINT PRIMARY KEY NOT NULL, name TEXT) WITHOUT ROWID",
        ] {
            let node = try Self.replica("node-1", schema: schema)
            let table = try node.track("users")
            #expect(table.hasLocalKeys, "\(schema)")
            #expect(try node.trackedTables() == [table])
            let withAuthority = try Self.replica("node-1", schema: schema)
            #expect(try withAuthority.track("users", authority: "node-1").hasLocalKeys == false)
            #expect(table.fingerprint != (try withAuthority.trackedTables().first?.fingerprint))
        }
    }

    @Test("an integer-keyed table tracked with an authority: only that site inserts, no row is lost")
    func integerKeysWithAnAuthority() throws {
        let schema = "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)"
        let node1 = try Self.replica("node-1", schema: schema)
        let node2 = try Self.replica("node-2", schema: schema)
        for node in [node1, node2] { try node.track("users", authority: "node-1") }
        try Self.write(node1, "INSERT INTO users (name) VALUES ('Alice')")
        // Node 2 would pick id 1 as well: its insert is refused when written.
        let refused = Self.refusal(node2, "INSERT INTO users (name) VALUES ('Bob')")
        #expect(
            refused
                == "vecsync: table users takes new keys only from site 'node-1', which assigns its integer keys (column id); insert the row there"
        )
        #expect(Self.refusal(node2, "INSERT INTO users (id, name) VALUES (7, 'Bob')") == refused)
        try node2.merge(node1.changes(since: 0))
        #expect(Self.refusal(node2, "UPDATE users SET id = 2 WHERE id = 1") == refused, "a key change creates a key")
        try Self.write(node2, "UPDATE users SET name = 'Alice L.' WHERE id = 1")
        try node1.merge(node2.changes(since: 0))
        try Self.write(node1, "INSERT INTO users (name) VALUES ('Bob')")
        try node2.merge(node1.changes(since: 0))
        for node in [node1, node2] {
            let names = try node.writer.read { db in
                try String.fetchAll(db, sql: "SELECT id || ':' || name FROM users ORDER BY id")
            }
            #expect(names == ["1:Alice L.", "2:Bob"])
        }
        #expect(throws: VecSyncError.self, "an integer-keyed table keeps an authority") {
            try node1.setAuthority(nil, for: "users")
        }
        try node1.setAuthority("node-2", for: "users")
        #expect(Self.refusal(node1, "INSERT INTO users (name) VALUES ('Carol')") != nil)
    }

    @Test("a NULL key, or a blob bound into a TEXT key, is refused when written, naming the table and column")
    func wrongKindKeysAreRefusedAtWriteTime() throws {
        let schema = "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)"  // the key may be NULL in SQLite
        let a = try Self.replica("a", schema: schema)
        let b = try Self.replica("b", schema: schema)
        for replica in [a, b] { try replica.track("notes") }
        let expected =
            "vecsync: table notes, key column id: a key must be a non-NULL TEXT value to sync; the row was not written"
        #expect(Self.refusal(a, "INSERT INTO notes (id, body) VALUES (?, 'x')", [Data([1, 2, 3])]) == expected)
        #expect(Self.refusal(a, "INSERT INTO notes (id, body) VALUES (NULL, 'x')") == expected)
        #expect(Self.refusal(a, "INSERT INTO notes (body) VALUES ('x')") == expected)
        try Self.write(a, "INSERT INTO notes (id, body) VALUES (42, 'a number becomes text')")
        try Self.write(a, "INSERT INTO notes (id, body) VALUES ('n1', 'fine')")
        #expect(Self.refusal(a, "UPDATE notes SET id = ? WHERE id = 'n1'", [Data([9])]) == expected)
        #expect(try a.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") } == 2)
        // Nothing unreadable left the replica: the receiver merges all of it.
        let report = try b.merge(ChangeSet(serialized: a.changes(since: 0).serialized()))
        #expect(report.inserted == 2)

        // Rows already there with such keys: tracking says so.
        let c = try Self.replica("c", schema: schema + "; INSERT INTO notes VALUES (NULL, 'orphan'), (x'00', 'blob')")
        do {
            try c.track("notes")
            Issue.record("a table with NULL and blob keys was tracked")
        } catch let VecSyncError.untrackableTable(table, reason) {
            #expect(table == "notes")
            #expect(reason.hasPrefix("2 rows have a NULL key or a key that is not TEXT in column id"), "\(reason)")
        }
    }

    @Test("BLOB keys (16-byte UUIDs) sync end to end: capture, binary and JSON change sets, merge, folder")
    func blobKeysSyncEndToEnd() throws {
        let schema = "CREATE TABLE items (id BLOB PRIMARY KEY, name TEXT, embedding F32_BLOB(2))"
        let a = try Self.replica("a", schema: schema)
        let b = try Self.replica("b", schema: schema)
        for replica in [a, b] { #expect(try replica.track("items").keyKind == .blob) }
        func uuid(_ text: String) -> Data {
            withUnsafeBytes(of: UUID(uuidString: text)!.uuid) { Data($0) }
        }
        let k1 = uuid("6F9619FF-8B86-D011-B42D-00C04FC964FF")
        let k2 = uuid("00000000-0000-0000-0000-000000000001")
        let v1 = Vector([1, 0.5]).blob
        try Self.write(a, "INSERT INTO items VALUES (?, 'one', ?)", [k1, v1])
        try Self.write(b, "INSERT INTO items VALUES (?, 'two', NULL)", [k2])
        #expect(
            Self.refusal(a, "INSERT INTO items VALUES ('6f9619ff', 'text key', NULL)")
                == "vecsync: table items, key column id: a key must be a non-NULL BLOB value to sync; the row was not written"
        )

        let changes = try a.changes(since: 0)
        #expect(changes.records.map(\.key) == [.blob(k1)])
        let decoded = try ChangeSet(serialized: changes.serialized())
        #expect(decoded == changes)
        #expect(changes.jsonString().contains(#""key" : {"#) && changes.jsonString().contains(k1.base64EncodedString()))

        try a.sync(through: transport)
        try b.sync(through: transport)
        try a.sync(through: transport)
        try Self.write(b, "UPDATE items SET name = 'uno' WHERE id = ?", [k1])
        try Self.write(a, "DELETE FROM items WHERE id = ?", [k2])
        try b.sync(through: transport)
        try a.sync(through: transport)
        try b.sync(through: transport)
        for replica in [a, b] {
            let rows = try replica.writer.read { db in
                try Row.fetchAll(db, sql: "SELECT id, name, embedding FROM items ORDER BY id")
            }
            #expect(rows.count == 1)
            #expect(rows.first?["id"] as Data? == k1)
            #expect(rows.first?["name"] as String? == "uno")
            #expect(rows.first?["embedding"] as Data? == v1)
        }
    }
}
