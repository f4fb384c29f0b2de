import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Schema changes of tracked tables: ADD COLUMN followed on its own, the `alter` call for
/// drops and renames, table rebuilds, and replicas on different schema versions.
@Suite("Schema changes")
struct SchemaChangeTests: ReplicationSuite {
    let a: Replica, b: Replica
    init() throws { (a, b) = (try Fixture.replica("a"), try Fixture.replica("b")) }

    static func rows(_ replica: Replica, _ sql: String) throws -> [String] {
        try replica.writer.read { db in
            try Row.fetchAll(db, sql: sql).map { row in
                row.databaseValues.map { Fixture.render($0) }.joined(separator: "|")
            }
        }
    }

    @Test("a column added with ALTER TABLE syncs from then on, on its own")
    func addedColumnSyncs() throws {
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'one'), ('p2', 'two')")
        try Self.deliver(a, to: b)
        for replica in [a, b] { try Self.write(replica, "ALTER TABLE photos ADD COLUMN caption TEXT DEFAULT 'none'") }
        // Written before the engine looked: a value other than the default is a local write.
        try Self.write(a, "UPDATE photos SET caption = 'sea' WHERE id = 'p1'")
        try Self.write(a, "INSERT INTO photos (id, title, caption) VALUES ('p3', 'three', 'sky')")
        let report = try Self.deliver(a, to: b)
        #expect(report.keptColumns.isEmpty, "\(report)")
        #expect(try a.trackedTables().first { $0.name == "photos" }?.columns.last == "caption")
        let expected = try Self.rows(a, "SELECT id, title, caption FROM photos ORDER BY id")
        #expect(expected.count == 3)
        #expect(try Self.rows(b, "SELECT id, title, caption FROM photos ORDER BY id") == expected)
        #expect(
            try b.writer.read { db in try String.fetchOne(db, sql: "SELECT caption FROM photos WHERE id = 'p2'") }
                == "none")
        // After adoption the trigger captures the new column.
        try Self.write(b, "UPDATE photos SET caption = 'dune' WHERE id = 'p2'")
        let back = try a.merge(b.changes(since: 0))
        #expect(back.accepted.contains { $0.key == .text("p2") && $0.columns == ["caption"] }, "\(back.accepted)")
        #expect(
            try Self.rows(a, "SELECT id, caption FROM photos ORDER BY id")
                == Self.rows(b, "SELECT id, caption FROM photos ORDER BY id"))
    }

    @Test("a replica with the old schema keeps a new column's values and applies them once it adds the column")
    func narrowerReplicaKeepsNewColumnValues() throws {
        try Self.write(a, "ALTER TABLE photos ADD COLUMN caption TEXT")
        try Self.write(a, "INSERT INTO photos (id, title, caption) VALUES ('p1', 'one', 'sea')")
        let report = try Self.deliver(a, to: b)
        #expect(report.keptColumns == ["photos": ["caption"]], "\(report)")
        #expect(report.quarantined.isEmpty)
        #expect(
            try b.writer.read { db in try String.fetchOne(db, sql: "SELECT title FROM photos WHERE id = 'p1'") }
                == "one")
        // The old-schema replica edits a column it knows; the other merges it.
        try Self.write(b, "UPDATE photos SET title = 'uno' WHERE id = 'p1'")
        try Self.deliver(b, to: a)
        #expect(
            try a.writer.read { db in try String.fetchOne(db, sql: "SELECT title FROM photos WHERE id = 'p1'") }
                == "uno")
        // b adds the column: the kept value lands, with a's version, and travels on to c.
        try Self.write(b, "ALTER TABLE photos ADD COLUMN caption TEXT")
        let adopted = try b.adoptSchemaChanges()
        #expect(adopted.addedColumns == ["photos": ["caption"]])
        #expect(adopted.appliedKeptValues == 1, "\(adopted)")
        #expect(try Self.rows(b, "SELECT id, title, caption FROM photos") == ["t7031|t756e6f|t736561"])
        let c = try Fixture.replica("c")
        try Self.write(c, "ALTER TABLE photos ADD COLUMN caption TEXT")
        try Self.deliver(b, to: c)
        #expect(try Self.rows(c, "SELECT id, title, caption FROM photos") == ["t7031|t756e6f|t736561"])
        // A later write on a wins over the kept one everywhere.
        try Self.write(a, "UPDATE photos SET caption = 'lake' WHERE id = 'p1'")
        try Self.deliver(a, to: c)
        try Self.deliver(a, to: b)
        for replica in [a, b, c] {
            #expect(
                try replica.writer.read { db in try String.fetchOne(db, sql: "SELECT caption FROM photos") } == "lake")
        }
    }

    @Test("two replicas on different schema versions exchange changes both ways and converge once both migrate")
    func differentSchemaVersionsConverge() throws {
        let old = try Fixture.replica("old")
        let new = try Fixture.replica("new")
        try Self.write(new, "ALTER TABLE albums ADD COLUMN color TEXT NOT NULL DEFAULT 'grey'")
        try Self.write(new, "INSERT INTO albums (id, name, color) VALUES ('a1', 'trip', 'red')")
        try Self.write(old, "INSERT INTO albums (id, name) VALUES ('a2', 'home')")
        let toOld = try Self.deliver(new, to: old)
        let toNew = try Self.deliver(old, to: new)
        #expect(toOld.keptColumns == ["albums": ["color"]])
        #expect(toNew.inserted == 1)
        // A row from the old schema takes the column's default.
        #expect(
            try Self.rows(new, "SELECT id, name, color FROM albums ORDER BY id") == [
                "t6131|t74726970|t726564", "t6132|t686f6d65|t67726579",
            ])
        try Self.write(old, "UPDATE albums SET name = 'house' WHERE id = 'a2'")
        try Self.write(new, "UPDATE albums SET name = 'journey' WHERE id = 'a1'")
        try Self.deliver(new, to: old)
        try Self.deliver(old, to: new)
        try Self.write(old, "ALTER TABLE albums ADD COLUMN color TEXT NOT NULL DEFAULT 'grey'")
        try Self.deliver(new, to: old)
        try Self.deliver(old, to: new)
        #expect(try Fixture.snapshot(old) == Fixture.snapshot(new))
        #expect(
            try Self.rows(old, "SELECT id, name, color FROM albums ORDER BY id") == [
                "t6131|t6a6f75726e6579|t726564", "t6132|t686f757365|t67726579",
            ])
        #expect(try old.quarantinedRecords().isEmpty && new.quarantinedRecords().isEmpty)
    }

    @Test("a table rebuilt with SQLite's 12 steps outside the engine is detected and capture restored")
    func rebuiltTableIsRestored() throws {
        try Self.write(a, "INSERT INTO albums (id, name, cover) VALUES ('a1', 'one', 'p1'), ('a2', 'two', NULL)")
        try Self.deliver(a, to: b)
        try a.writer.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE albums_new (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', cover TEXT);
                    INSERT INTO albums_new SELECT id, name, cover FROM albums;
                    DROP TABLE albums;
                    ALTER TABLE albums_new RENAME TO albums;
                    """)
            // Written while no trigger watched.
            try db.execute(sql: "INSERT INTO albums (id, name) VALUES ('a3', 'three')")
            try db.execute(sql: "DELETE FROM albums WHERE id = 'a2'")
        }
        #expect(try a.suspendedTables().isEmpty)
        let report = try a.adoptSchemaChanges()
        #expect(report.restoredTables == ["albums"], "\(report)")
        #expect(report.recordedRows == 2)
        try Self.write(a, "UPDATE albums SET name = 'uno' WHERE id = 'a1'")
        try Self.deliver(a, to: b)
        #expect(try Self.rows(b, "SELECT id, name FROM albums ORDER BY id") == ["t6131|t756e6f", "t6133|t7468726565"])
    }

    @Test("alter renames and drops columns without losing versions; peers on the old schema still merge")
    func alterRenamesAndDrops() throws {
        try Self.write(a, "INSERT INTO photos (id, title, rating) VALUES ('p1', 'one', 3), ('p2', 'two', 4)")
        try Self.deliver(a, to: b)
        let report = try a.alter("photos", renamingColumns: ["title": "caption"]) { db in
            try db.execute(sql: "ALTER TABLE photos RENAME COLUMN title TO caption")
            try db.execute(sql: "ALTER TABLE photos DROP COLUMN rating")
        }
        #expect(report.renamedColumns == ["photos": ["title": "caption"]])
        #expect(report.droppedColumns == ["photos": ["rating"]])
        #expect(try a.trackedTables().first { $0.name == "photos" }?.columns == ["caption", "score", "embedding"])
        #expect(try a.suspendedTables().isEmpty)
        // Nothing re-versioned: the clock kept the old versions, so there is nothing to send.
        #expect(try Self.deliver(a, to: b).applied == 0)
        // b, still on the old schema, writes the old names: the title lands in caption, the
        // rating is ignored, and says so.
        try Self.write(b, "UPDATE photos SET title = 'uno', rating = 5 WHERE id = 'p1'")
        let merged = try Self.deliver(b, to: a)
        #expect(merged.retiredIgnored == ["photos": ["rating"]], "\(merged)")
        #expect(try Self.rows(a, "SELECT id, caption FROM photos ORDER BY id") == ["t7031|t756e6f", "t7032|t74776f"])
        // a writes the new name; b keeps it until it migrates too.
        try Self.write(a, "UPDATE photos SET caption = 'deux' WHERE id = 'p2'")
        #expect(try Self.deliver(a, to: b).keptColumns == ["photos": ["caption"]])
        try b.alter("photos", renamingColumns: ["title": "caption"]) { db in
            try db.execute(sql: "ALTER TABLE photos RENAME COLUMN title TO caption")
            try db.execute(sql: "ALTER TABLE photos DROP COLUMN rating")
        }
        try Self.deliver(a, to: b)
        try Self.deliver(b, to: a)
        let expected = try Self.rows(a, "SELECT * FROM photos ORDER BY id")
        #expect(try Self.rows(b, "SELECT * FROM photos ORDER BY id") == expected)
        #expect(try Self.rows(b, "SELECT id, caption FROM photos ORDER BY id") == ["t7031|t756e6f", "t7032|t64657578"])
        // Capture works on the new layout.
        try Self.write(b, "UPDATE photos SET caption = 'un' WHERE id = 'p1'")
        try Self.deliver(b, to: a)
        #expect(try Self.rows(a, "SELECT caption FROM photos WHERE id = 'p1'") == ["t756e"])
    }

    @Test("alter can drop a tracked table: it stops syncing, and peers' changes to it are ignored")
    func alterDropsTable() throws {
        let report = try a.alter("albums") { db in try db.execute(sql: "DROP TABLE albums") }
        #expect(report.droppedTables == ["albums"])
        #expect(try !a.trackedTables().contains { $0.name == "albums" })
        try Self.write(b, "INSERT INTO albums (id, name) VALUES ('a1', 'x')")
        try Self.write(b, "INSERT INTO photos (id, title) VALUES ('p1', 'kept')")
        let merged = try Self.deliver(b, to: a)
        #expect(merged.retiredIgnored == ["albums": []], "\(merged)")
        #expect(merged.inserted == 1)
        #expect(try a.quarantinedRecords().isEmpty)
        #expect(try Self.rows(a, "SELECT title FROM photos") == ["t6b657074"])
    }

    @Test("a column renamed outside alter suspends that table only; alter with an empty body resumes it")
    func unsupportedChangeSuspendsOneTable() throws {
        try Self.write(b, "ALTER TABLE albums RENAME COLUMN cover TO cover_photo")
        #expect(try b.suspendedTables().keys.sorted() == ["albums"])
        try Self.write(a, "INSERT INTO albums (id, name, cover) VALUES ('a1', 'x', 'p1')")
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'still syncs')")
        try Self.write(b, "INSERT INTO photos (id, title) VALUES ('p2', 'b too')")
        let merged = try Self.deliver(a, to: b)
        #expect(merged.inserted == 1)
        #expect(merged.quarantined.map(\.table) == ["albums"])
        // Written while the table is suspended: captured, and not lost when scans pass it.
        try Self.write(b, "INSERT INTO albums (id, name, cover_photo) VALUES ('b1', 'from b', NULL)")
        let scanned = try b.changes(since: 0)
        #expect(scanned.records.count == 2)  // p1 merged, p2 written: photos only
        let resumed = try b.alter("albums", renamingColumns: ["cover": "cover_photo"]) { _ in }
        #expect(resumed.renamedColumns == ["albums": ["cover": "cover_photo"]])
        #expect(resumed.resumedTables == ["albums"])
        try a.merge(b.changes(since: scanned.through))
        #expect(try Self.rows(a, "SELECT id, name FROM albums ORDER BY id") == ["t6131|t78", "t6231|t66726f6d2062"])
        #expect(try b.suspendedTables().isEmpty)
        let retried = try Self.deliver(a, to: b)
        #expect(retried.releasedFromQuarantine == 1, "\(retried)")
        #expect(try Self.rows(b, "SELECT id, cover_photo FROM albums ORDER BY id") == ["t6131|t7031", "t6231|null"])
    }

    @Test("a change set whose shared columns differ in type is quarantined for that table; the others merge")
    func incompatibleTableIsQuarantinedAlone() throws {
        let queue = try Fixture.database()
        try queue.write { db in
            try db.execute(sql: "DROP TABLE albums_fts; DROP TABLE albums")
            try db.execute(sql: "CREATE TABLE albums (id TEXT PRIMARY KEY, name BLOB, cover TEXT)")
        }
        let b = try Replica(queue, site: "b")
        for table in Fixture.trackedTables { try b.track(table) }
        try Self.write(a, "INSERT INTO albums (id, name) VALUES ('a1', 'x')")
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'one')")
        let merged = try Self.deliver(a, to: b)
        #expect(merged.inserted == 1)
        #expect(merged.quarantined.count == 1)
        #expect(merged.quarantined.first?.reason.contains("name is TEXT there") == true, "\(merged.quarantined)")
    }

    @Test("a change set of format 2 merges only into an identical definition, table by table")
    func formatTwoNeedsTheSameDefinition() throws {
        try Self.write(b, "ALTER TABLE albums ADD COLUMN color TEXT")
        try Self.write(a, "INSERT INTO albums (id, name) VALUES ('a1', 'x')")
        try Self.write(a, "INSERT INTO photos (id, title) VALUES ('p1', 'one')")
        let data = try a.changes(since: 0).serialized(formatVersion: 2)
        let merged = try b.merge(serialized: data)
        #expect(merged.inserted == 1)
        #expect(merged.quarantined.map(\.table) == ["albums"])
        #expect(merged.quarantined.first?.reason.contains("format 2") == true)
    }
}
