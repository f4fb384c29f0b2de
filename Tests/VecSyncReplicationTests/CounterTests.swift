import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncStores
import VecSyncTestSupport

@testable import VecSyncReplication

/// Counter columns (PN-counters): what each device adds to a declared counter adds up on
/// every device, instead of the last writer's value winning.
@Suite("Counters")
struct CounterTests: ReplicationSuite {
    /// Merges what each has into the other, both ways, twice.
    static func exchange(_ a: Replica, _ b: Replica) throws {
        for _ in 0..<2 {
            try b.merge(a.changes(since: 0))
            try a.merge(b.changes(since: 0))
        }
    }

    @Test(
        "Choir's schema as it ships, on two devices: 6 approvals and 10 give k0 = 1.80 on both, and both keep all 17 history rows"
    )
    func choirApprovalsAddUp() throws {
        // parameter_history has an INTEGER PRIMARY KEY AUTOINCREMENT: written on both.
        let choir = try ChoirPair(messages: 16)
        let stores = choir.stores
        // Offline: 6 approvals on the mac, 10 on the phone.
        for index in 0..<6 { try stores[0].setApprovalStatus(.approved, ofMessage: "m\(index)") }
        for index in 6..<16 { try stores[1].setApprovalStatus(.approved, ofMessage: "m\(index)") }
        try choir.exchange()
        let threads = try stores.map { try #require(try $0.thread(id: "t1")) }
        for thread in threads {
            #expect(abs(thread.parameters.k0 - 1.80) < 1e-9, "k0 \(thread.parameters.k0)")
            #expect(abs(thread.parameters.alpha - (0.5 + 16 * 0.02)) < 1e-9, "alpha \(thread.parameters.alpha)")
            #expect(abs(thread.parameters.m - (1.0 - 16 * 0.01)) < 1e-9, "m \(thread.parameters.m)")
        }
        // The same value, to the bit, on both devices.
        #expect(threads[0].parameters == threads[1].parameters)
        // The thread's creation and the 16 approvals, from both devices, on both.
        for store in stores {
            let history = try store.parameterHistory(ofThread: "t1")
            #expect(history.count == 17)
            #expect(history.filter { $0.eventType == "message_approved" }.count == 16)
        }
    }

    @Test(
        "increments and decrements of a declared counter column from three sites add up; other columns stay last-writer-wins"
    )
    func countersFromThreeSites() throws {
        let replicas = try ["a", "b", "c"].map { site -> Replica in
            let queue = try StoreSchemaSyncTests.database()
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE items (id TEXT PRIMARY KEY, name TEXT, stock INTEGER, score REAL)")
                try CounterColumns.declare(db, table: "items", columns: ["stock", "score"])
            }
            let replica = try Replica(queue, site: SiteID(site))
            try replica.track("items")
            return replica
        }
        try Self.write(replicas[0], "INSERT INTO items VALUES ('i1', 'pen', 10, 0.5)")
        try Self.exchange(replicas[0], replicas[1])
        try Self.exchange(replicas[1], replicas[2])
        let writes = [
            "UPDATE items SET stock = stock + 5, name = 'blue pen' WHERE id = 'i1'",
            "UPDATE items SET stock = stock - 3, score = score + 0.25 WHERE id = 'i1'",
            "UPDATE items SET stock = stock + 1 WHERE id = 'i1'; UPDATE items SET stock = stock + 1 WHERE id = 'i1'",
        ]
        for (replica, sql) in zip(replicas, writes) {
            try replica.writer.write { db in try db.execute(sql: sql) }
        }
        for _ in 0..<2 {
            try Self.exchange(replicas[0], replicas[1])
            try Self.exchange(replicas[1], replicas[2])
            try Self.exchange(replicas[0], replicas[2])
        }
        for replica in replicas {
            let row = try replica.writer.read { db in
                try Row.fetchOne(db, sql: "SELECT name, stock, score, typeof(stock) AS kind FROM items")
            }
            #expect(row?["stock"] == 14)
            #expect(row?["kind"] == "integer")
            #expect(row?["score"] == 0.75)
            #expect(row?["name"] == "blue pen")
        }
    }

    /// Two replicas of `items(id TEXT PRIMARY KEY, name TEXT, stock INTEGER)` with `stock`
    /// a counter.
    static func itemReplicas(_ sites: [String]) throws -> [Replica] {
        try sites.map { site -> Replica in
            let queue = try StoreSchemaSyncTests.database()
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE items (id TEXT PRIMARY KEY, name TEXT, stock INTEGER)")
                try CounterColumns.declare(db, table: "items", columns: ["stock"])
            }
            let replica = try Replica(queue, site: SiteID(site))
            try replica.track("items")
            return replica
        }
    }

    /// Every replica's items, in key order.
    static func items(_ replica: Replica) throws -> [[DatabaseValue]] {
        try replica.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, stock FROM items ORDER BY id").map { Array($0.databaseValues) }
        }
    }

    @Test(
        "a counter is the sum of the merged contributions whatever came first: NULL writes, a delete racing an increment, a row created again"
    )
    func countersConvergeThroughNullsAndDeletes() throws {
        let replicas = try Self.itemReplicas(["a", "b"])
        try Self.write(replicas[0], "INSERT INTO items VALUES ('unset', 'nobody counted', NULL), ('i2', 'pen', 4)")
        try Self.exchange(replicas[0], replicas[1])
        // A counter nobody has set stays NULL; NULL written on b before a's 7 arrives is no
        // contribution, so the sum is a's 7 on both.
        try Self.write(replicas[0], "UPDATE items SET stock = 7 WHERE id = 'unset'")
        try Self.write(replicas[1], "UPDATE items SET name = 'renamed', stock = NULL WHERE id = 'unset'")
        // b adds 2 to i2 while a deletes it and creates it again with 1.
        try Self.write(replicas[1], "UPDATE items SET stock = stock + 2 WHERE id = 'i2'")
        try replicas[0].writer.write { db in
            try db.execute(sql: "DELETE FROM items WHERE id = 'i2'")
            try db.execute(sql: "INSERT INTO items VALUES ('i2', 'new pen', 1)")
        }
        try Self.exchange(replicas[0], replicas[1])
        let first = try Self.items(replicas[0])
        #expect(first == (try Self.items(replicas[1])))
        #expect(first.first { $0[0] == "unset".databaseValue }?[2] == 7.databaseValue)
        // The new pen counts from 1, plus b's concurrent 2.
        #expect(first.first { $0[0] == "i2".databaseValue }?[2] == 3.databaseValue)
        // Written NULL once a contribution exists: counts as 0 on both.
        try Self.write(replicas[1], "UPDATE items SET stock = NULL WHERE id = 'i2'")
        try Self.exchange(replicas[0], replicas[1])
        for replica in replicas {
            #expect(try Self.items(replica).first { $0[0] == "i2".databaseValue }?[2] == 0.databaseValue)
        }
    }

    @Test("a row moved to another key takes its counter there, where earlier contributions were")
    func rekeyedRowKeepsItsCounter() throws {
        let replicas = try Self.itemReplicas(["a", "b"])
        try Self.write(replicas[0], "INSERT INTO items VALUES ('old', 'pen', 5), ('gone', 'cup', 3)")
        try Self.exchange(replicas[0], replicas[1])
        // 'gone' keeps a's contribution of 3 after its row goes; 'old' then moves there.
        try replicas[0].writer.write { db in
            try db.execute(sql: "DELETE FROM items WHERE id = 'gone'")
            try db.execute(sql: "UPDATE items SET id = 'gone' WHERE id = 'old'")
        }
        try Self.exchange(replicas[0], replicas[1])
        for replica in replicas {
            #expect(try Self.items(replica) == [["gone".databaseValue, "pen".databaseValue, 5.databaseValue]])
        }
    }

    @Test("counter columns of a BLOB-keyed table, or of one with local integer ids, are refused when it is tracked")
    func blobKeyedCountersAreRefused() throws {
        let queue = try StoreSchemaSyncTests.database()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE tags (id BLOB PRIMARY KEY, uses INTEGER)")
            try CounterColumns.declare(db, table: "tags", columns: ["uses"])
        }
        let replica = try Replica(queue, site: SiteID("a"))
        #expect(throws: VecSyncError.self) { try replica.track("tags") }
        // Nothing of the attempts stays: no clock table, no record.
        func clockTables() throws -> [String] {
            try queue.read { db in
                try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'vecsync_clock_%' ORDER BY name")
            }
        }
        // Nor those of a table whose integer ids are local to each replica; with an authority
        // they are the same ids everywhere, and sync as counters.
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE scores (id INTEGER PRIMARY KEY, points INTEGER)")
            try CounterColumns.declare(db, table: "scores", columns: ["points"])
        }
        #expect(throws: VecSyncError.self) { try replica.track("scores") }
        #expect(try clockTables().isEmpty)
        #expect(try replica.trackedTables().isEmpty)
        _ = try replica.track("scores", authority: "a")
        #expect(try clockTables() == ["vecsync_clock_scores", "vecsync_clock_vecsync_counters"])
        #expect(try replica.trackedTables().map(\.name).sorted() == ["scores", "vecsync_counters"])
    }
}
