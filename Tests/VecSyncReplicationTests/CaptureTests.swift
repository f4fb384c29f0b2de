import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Writes to tracked tables are captured whatever the SQL, and tables the engine cannot
/// track safely are refused with the reason.
@Suite("Capture")
struct CaptureTests: ReplicationSuite {
    static func records(_ replica: Replica, since: Int64 = 0) throws -> [String: ChangeSet.Record] {
        let changes = try replica.changes(since: since)
        var byKey: [String: ChangeSet.Record] = [:]
        for record in changes.records {
            let table = changes.tables[record.table].name
            byKey["\(table)/\(record.key)"] = record
        }
        return byKey
    }

    @Test("a database set up by the earlier layout is upgraded when opened, and keeps syncing")
    func earlierLayoutIsUpgraded() throws {
        let replica = try Fixture.replica("a")
        try Self.write(replica, "INSERT INTO photos (id, title) VALUES ('p1', 'before')")
        // The earlier layout: no authority counts, no ra_floor, a seq index on each clock table.
        try replica.writer.write { db in
            for table in try Replica.trackedTables(db, checkingSchema: false) {
                let sql = TriggerSQL(table: table, site: replica.site)
                try db.execute(sql: TriggerSQL.drop(sql.triggerNames))
                for column in ["ra"] + table.columns.indices.flatMap({ ["a\($0)", "q\($0)"] }) {
                    try db.execute(sql: "ALTER TABLE \(table.clockTable.quotedName) DROP COLUMN \(column)")
                }
                let index = "\(table.clockTable.name)_seq".quotedSQLIdentifier
                try db.execute(sql: "CREATE INDEX \(index) ON \(table.clockTable.quotedName)(seq)")
            }
            try db.execute(sql: "ALTER TABLE vecsync_replica DROP COLUMN ra_floor")
        }
        let reopened = try Replica(opening: replica.writer)
        let (replicaColumns, clockColumns, clockIndexes) = try reopened.writer.read { db in
            (
                try db.columns(in: "vecsync_replica").map(\.name),
                try db.columns(in: "vecsync_clock_photos").map(\.name),
                try db.indexes(on: "vecsync_clock_photos").map(\.name)
            )
        }
        #expect(replicaColumns.contains("ra_floor"))
        #expect(clockColumns.suffix(9) == ["ra", "a0", "a1", "a2", "a3", "q0", "q1", "q2", "q3"])
        #expect(!clockIndexes.contains("vecsync_clock_photos_seq"))
        let cursor = try reopened.currentSequence()
        try Self.write(reopened, "UPDATE photos SET title = 'after' WHERE id = 'p1'")
        let after = try Self.records(reopened, since: cursor)["photos/text(\"p1\")"]
        #expect(after?.columns[0]?.value == .text("after"))
        #expect(after?.columns[1] != nil, "a row from before the upgrade travels whole")
        let b = try Fixture.replica("b")
        try b.merge(reopened.changes(since: 0))
        #expect(
            try b.writer.read { db in try String.fetchOne(db, sql: "SELECT title FROM photos WHERE id = 'p1'") }
                == "after")
    }

    @Test("a database whose triggers read vecsync_replica.merging gets the one flag's triggers when opened")
    func mergingColumnIsReplaced() throws {
        let replica = try Fixture.replica("a")
        try replica.setReadOnly(true)
        // The earlier layout kept the flag in a column of vecsync_replica, read by every trigger.
        try replica.writer.write { db in
            try db.execute(sql: "ALTER TABLE vecsync_replica ADD COLUMN merging INTEGER NOT NULL DEFAULT 0")
            try db.execute(
                sql: """
                    DROP TRIGGER vecsync_photos_guard_insert;
                    CREATE TRIGGER vecsync_photos_guard_insert BEFORE INSERT ON photos
                    WHEN (SELECT merging FROM vecsync_replica WHERE id = 1) = 0
                    BEGIN SELECT RAISE(ABORT, 'old guard'); END;
                    """)
        }
        let reopened = try Replica(opening: replica.writer)
        let (columns, stale) = try reopened.writer.read { db in
            (
                try db.columns(in: "vecsync_replica").map(\.name),
                try Int.fetchOne(
                    db,
                    sql:
                        "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%merging FROM vecsync_replica%'"
                ) ?? -1
            )
        }
        #expect(!columns.contains("merging"))
        #expect(stale == 0)
        // The guard is the current one: it refuses local writes, and lets a merge through
        // without capturing it as a local change.
        #expect(throws: (any Error).self) {
            try Self.write(reopened, "INSERT INTO photos (id, title) VALUES ('x', 'local')")
        }
        let b = try Fixture.replica("b")
        try Self.write(b, "INSERT INTO photos (id, title) VALUES ('p1', 'from b')")
        try reopened.merge(b.changes(since: 0))
        let (title, writer) = try reopened.writer.read { db in
            (
                try String.fetchOne(db, sql: "SELECT title FROM photos WHERE id = 'p1'"),
                try Int.fetchOne(db, sql: "SELECT s0 FROM vecsync_clock_photos WHERE pk = 'p1'")
            )
        }
        #expect(title == "from b")
        #expect(writer != nil && writer != 0, "the merged row keeps b as its writer: the merge was not captured")
    }

    @Test("INSERT, UPDATE, DELETE, INSERT OR REPLACE and UPSERT are all captured")
    func everyWayOfWritingIsCaptured() throws {
        let replica = try Fixture.replica("a")
        try Self.write(replica, "INSERT INTO photos (id, title) VALUES ('p1', 'one')")
        try Self.write(replica, "INSERT OR REPLACE INTO photos (id, title) VALUES ('p2', 'two')")
        try Self.write(
            replica,
            "INSERT INTO photos (id, title) VALUES ('p3', 'three') ON CONFLICT(id) DO UPDATE SET title = excluded.title"
        )
        var records = try Self.records(replica)
        #expect(records.keys.sorted() == ["photos/text(\"p1\")", "photos/text(\"p2\")", "photos/text(\"p3\")"])
        #expect(records.values.allSatisfy { $0.causalLength == 1 && $0.columns.count == 4 })

        let cursor = try replica.currentSequence()
        try Self.write(replica, "UPDATE photos SET rating = 4 WHERE id = 'p1'")
        try Self.write(
            replica,
            "INSERT INTO photos (id, title) VALUES ('p3', 'THREE') ON CONFLICT(id) DO UPDATE SET title = excluded.title"
        )
        try Self.write(replica, "DELETE FROM photos WHERE id = 'p2'")
        records = try Self.records(replica, since: cursor)
        #expect(records.count == 3)
        let p1 = try #require(records["photos/text(\"p1\")"])
        #expect(p1.columns[1]?.value == .integer(4))
        #expect(p1.presentColumns.map(\.index) == [1], "only the updated column travels")
        #expect(
            try Self.records(replica)["photos/text(\"p1\")"].map { $0.columns[1]!.version > $0.columns[0]!.version }
                == true,
            "only the updated column gets a new version")
        #expect(records["photos/text(\"p3\")"]?.columns[0]?.value == .text("THREE"))
        #expect(records["photos/text(\"p2\")"]?.causalLength == 2)
        #expect(records["photos/text(\"p2\")"]?.columns.isEmpty == true)

        // Re-insert after delete: the causal length moves on to 3.
        try Self.write(replica, "INSERT INTO photos (id, title) VALUES ('p2', 'again')")
        #expect(try Self.records(replica)["photos/text(\"p2\")"]?.causalLength == 3)
    }

    @Test("an UPDATE that changes nothing is not a change")
    func updateToTheSameValueIsNotCaptured() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (id TEXT PRIMARY KEY, name TEXT COLLATE NOCASE, anything)")
        }
        let replica = try Replica(queue, site: "a")
        try replica.track("t")
        try Self.write(replica, "INSERT INTO t VALUES ('k', 'one', 1)")
        let cursor = try replica.currentSequence()
        try Self.write(replica, "UPDATE t SET name = 'one', anything = 1 WHERE id = 'k'")
        #expect(try replica.changes(since: cursor).isEmpty)
        // Changes that SQL calls equal are changes all the same: another case under NOCASE,
        // another storage class for a column without affinity.
        try Self.write(replica, "UPDATE t SET name = 'ONE' WHERE id = 'k'")
        #expect(try replica.changes(since: cursor).records.count == 1)
        let next = try replica.currentSequence()
        try Self.write(replica, "UPDATE t SET anything = 1.0 WHERE id = 'k'")
        #expect(try replica.changes(since: next).records.first?.columns[1]?.value == .real(1.0))
    }

    @Test("changing a primary key is a delete of the old key and an insert of the new")
    func keyChangeIsDeleteAndInsert() throws {
        let replica = try Fixture.replica("a")
        try Self.write(replica, "INSERT INTO photos (id, title) VALUES ('p1', 'one')")
        try Self.write(replica, "UPDATE photos SET id = 'p9' WHERE id = 'p1'")
        let records = try Self.records(replica)
        #expect(records["photos/text(\"p1\")"]?.causalLength == 2)
        #expect(records["photos/text(\"p9\")"]?.columns.first??.value == .text("one"))
    }

    @Test("a row that INSERT OR REPLACE removes through another UNIQUE column is recorded as deleted by reconcile")
    func replaceOnAnotherUniqueColumnIsReconciled() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT UNIQUE)") }
        let replica = try Replica(queue, site: "a")
        try replica.track("tags", authority: "a")
        try Self.write(replica, "INSERT INTO tags VALUES (1, 'red'), (2, 'blue')")
        // Without recursive triggers SQLite deletes row 1 silently.
        try Self.write(replica, "INSERT OR REPLACE INTO tags VALUES (3, 'red')")
        #expect(
            try replica.changes(since: 0).records.map(\.key) == [.integer(2), .integer(3)],
            "a live clock row without its table row is not sent")
        #expect(try replica.reconcile() == 1)
        #expect(try replica.reconcile() == 0)
        let deleted = try replica.changes(since: 0).records.first { $0.key == .integer(1) }
        #expect(deleted?.causalLength == 2)
    }

    @Test("tracking a table with rows gives each row a version")
    func trackingBackfillsExistingRows() throws {
        let queue = try Fixture.database()
        try queue.write { db in
            try db.execute(sql: "INSERT INTO albums (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        }
        let replica = try Replica(queue, site: "a")
        try replica.track("albums")
        let changes = try replica.changes(since: 0, maximumRows: 2)
        #expect(changes.records.count == 2, "backfilled rows have distinct sequence numbers, so batches can split them")
        let rest = try replica.changes(since: changes.through)
        #expect(rest.records.count == 1)
        #expect(try replica.changes(since: rest.through).isEmpty)
    }

    @Test(
        "tables that cannot be tracked safely are refused with the reason",
        arguments: [
            ("CREATE TABLE t (a TEXT, b TEXT)", "no primary key"),
            ("CREATE TABLE t (a TEXT, b TEXT, PRIMARY KEY (a, b))", "several columns"),
            ("CREATE TABLE t (id REAL PRIMARY KEY, b TEXT)", "only TEXT, BLOB and INTEGER keys"),
            ("CREATE TABLE t (id PRIMARY KEY, b TEXT)", "only TEXT, BLOB and INTEGER keys"),
            ("CREATE VIRTUAL TABLE t USING fts5(b)", "virtual table"),
        ])
    func untrackableTablesAreRefused(sql: String, reason: String) throws {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: sql) }
        let replica = try Replica(queue, site: "a")
        do {
            try replica.track("t")
            Issue.record("\(sql) was tracked")
        } catch let error as VecSyncError {
            guard case .untrackableTable(let table, let message) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(table == "t")
            #expect(message.contains(reason), "\(message)")
        }
    }

    @Test("a database keeps its site id")
    func siteIdIsKept() throws {
        let queue = try DatabaseQueue()
        _ = try Replica(queue, site: "a")
        #expect(throws: VecSyncError.siteMismatch(stored: "a", requested: "b")) { try Replica(queue, site: "b") }
        #expect(try Replica(opening: queue).site == "a")
    }

    @Test("writes from the sqlite3 shell without the extension are captured; a read-only replica refuses them")
    func sqlite3ShellWritesAreCaptured() throws {
        let shell = "/usr/bin/sqlite3"
        try #require(
            FileManager.default.isExecutableFile(atPath: shell), "the sqlite3 shell is needed (apt-get install sqlite3)"
        )
        let directory = try temporaryDirectory("shell")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("a.db").path
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in try db.execute(sql: "CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)") }
            let replica = try Replica(queue, site: "a")
            try replica.track("notes")
        }
        let result = try Self.runShell(
            shell, path,
            """
            INSERT INTO notes VALUES ('n1', 'hello');
            INSERT OR REPLACE INTO notes VALUES ('n2', 'world');
            UPDATE notes SET body = 'hello there' WHERE id = 'n1';
            DELETE FROM notes WHERE id = 'n2';
            """)
        #expect(result.status == 0, "\(result.output)")
        let queue = try DatabaseQueue(path: path)
        let replica = try Replica(opening: queue)
        let changes = try replica.changes(since: 0)
        let states = changes.records.map { "\($0.key):\($0.causalLength):\($0.columns.first??.value ?? .null)" }
            .sorted()
        #expect(states == ["text(\"n1\"):1:text(\"hello there\")", "text(\"n2\"):2:null"])

        try replica.setReadOnly(true)
        let refused = try Self.runShell(shell, path, "INSERT INTO notes VALUES ('n3', 'no');")
        #expect(refused.status != 0)
        #expect(
            refused.output.contains("vecsync: table notes is read-only on replica 'a'; its rows change only by sync"),
            "\(refused.output)")
    }

    static func runShell(_ shell: String, _ path: String, _ sql: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: shell)
        process.arguments = ["-batch", "-bail", path]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data(sql.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
