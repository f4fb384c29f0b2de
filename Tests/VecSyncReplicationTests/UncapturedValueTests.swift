import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Values that change while the capture triggers are off — inside an `alter` body, in the
/// copy step of a 12-step rebuild — and column defaults that differ between replicas: each
/// converges, or is reported with its repair, never left to diverge silently.
@Suite("Schema changes: values changed without capture")
struct UncapturedValueTests {
    let a: Replica, b: Replica
    init() throws { (a, b) = (try Fixture.replica("a"), try Fixture.replica("b")) }

    typealias S = SchemaChangeTests

    /// The notes table rebuilt with SQLite's 12 steps, its copy step lower-casing `body`.
    static let rebuildNotesLowercasingBodies = """
        CREATE TABLE notes_new (id TEXT PRIMARY KEY, photo TEXT REFERENCES photos(id), body TEXT);
        INSERT INTO notes_new SELECT id, photo, lower(body) FROM notes;
        DROP TABLE notes;
        ALTER TABLE notes_new RENAME TO notes;
        """

    @Test("values an alter body updates in existing rows are recorded column by column, following renames, and sync")
    func alterBodyUpdatesSync() throws {
        try S.write(
            a, "INSERT INTO photos (id, title, rating) VALUES ('p1', 'one', 3), ('p2', 'TWO', 4), ('p3', 'x', 1)")
        try S.deliver(a, to: b)
        let migration: (Database) throws -> Void = { db in
            try db.execute(sql: "ALTER TABLE photos RENAME COLUMN title TO caption")
            try db.execute(sql: "ALTER TABLE photos DROP COLUMN rating")
        }
        try b.alter("photos", renamingColumns: ["title": "caption"], migration)
        let report = try a.alter("photos", renamingColumns: ["title": "caption"]) { db in
            try migration(db)
            try db.execute(sql: "UPDATE photos SET caption = upper(caption)")  // p2 stays as it was
            try db.execute(sql: "UPDATE photos SET score = 0.5 WHERE id = 'p3'")
            try db.execute(sql: "DELETE FROM photos WHERE id = 'p3'")
            try db.execute(sql: "INSERT INTO photos (id, caption) VALUES ('p4', 'new')")
        }
        // p1 changed; p3 deleted, p4 inserted: three rows recorded; p2 was left as it was.
        #expect(report.recordedRows == 3, "\(report)")
        let sent = try a.changes(since: 0)
        let p1 = sent.records.first { $0.key == .text("p1") }
        #expect(p1?.columns.compactMap { $0?.value }.contains(.text("ONE")) == true)
        let p2Version = try a.writer.read { db in
            try Int64.fetchOne(db, sql: "SELECT v0 FROM vecsync_clock_photos WHERE pk = 'p2'")
        }
        try S.deliver(a, to: b)
        #expect(
            try S.rows(b, "SELECT id, caption, score FROM photos ORDER BY id")
                == ["t7031|t4f4e45|null", "t7032|t54574f|null", "t7034|t6e6577|null"])
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b))
        // p2's caption kept its version from before the alter.
        #expect(
            p2Version
                == (try b.writer.read { db in
                    try Int64.fetchOne(db, sql: "SELECT v0 FROM vecsync_clock_photos WHERE pk = 'p2'")
                }))
    }

    @Test("a 12-step rebuild inside alter records the values its copy step changed")
    func rebuildInsideAlterRecordsChangedValues() throws {
        try S.write(a, "INSERT INTO photos (id) VALUES ('p1')")
        try S.write(a, "INSERT INTO notes (id, photo, body) VALUES ('n1', 'p1', 'Hello'), ('n2', 'p1', 'quiet')")
        try S.deliver(a, to: b)
        let report = try a.alter("notes") { db in try db.execute(sql: Self.rebuildNotesLowercasingBodies) }
        #expect(report.recordedRows == 1, "\(report)")
        #expect(report.unverifiedTables.isEmpty)
        try S.deliver(a, to: b)
        #expect(try S.rows(b, "SELECT id, body FROM notes ORDER BY id") == ["t6e31|t68656c6c6f", "t6e32|t7175696574"])
    }

    @Test("a 12-step rebuild outside alter is reported with its repair; restamp makes the changed values sync")
    func rebuildOutsideAlterIsReportedAndRestamped() throws {
        try S.write(a, "INSERT INTO photos (id) VALUES ('p1')")
        try S.write(a, "INSERT INTO notes (id, photo, body) VALUES ('n1', 'p1', 'Hello'), ('n2', 'p1', 'quiet')")
        try S.deliver(a, to: b)
        try S.write(a, Self.rebuildNotesLowercasingBodies)
        // An empty table rebuilt the same way kept no rows from before: nothing to verify.
        try S.write(
            a,
            """
            CREATE TABLE albums_new (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', cover TEXT);
            DROP TABLE albums; ALTER TABLE albums_new RENAME TO albums;
            """)
        let report = try a.adoptSchemaChanges()
        #expect(report.restoredTables.sorted() == ["albums", "notes"])
        #expect(report.unverifiedTables.keys.sorted() == ["notes"], "\(report)")
        #expect(report.description.contains("Replica.restamp(\"notes\""), "\(report)")
        #expect(try a.unverifiedTables().keys.sorted() == ["notes"])
        // Nothing recorded the lower-cased body: the peer keeps "Hello".
        try S.deliver(a, to: b)
        #expect(try S.rows(b, "SELECT body FROM notes WHERE id = 'n1'") == ["t48656c6c6f"])
        #expect(throws: VecSyncError.self) { try a.restamp("notes", columns: ["nope"]) }
        #expect(try a.restamp("notes", columns: ["body"]) == 2)
        #expect(try a.unverifiedTables().isEmpty)
        let sent = try a.changes(since: 0)
        #expect(
            sent.records.filter { $0.key == .text("n1") }.first?.columns.compactMap { $0?.value } == [
                .text("p1"), .text("hello"),
            ])
        try S.deliver(a, to: b)
        #expect(try S.rows(b, "SELECT id, body FROM notes ORDER BY id") == ["t6e31|t68656c6c6f", "t6e32|t7175696574"])
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b))
    }

    @Test("restamping a column makes this replica's values win over writes to it it has not merged")
    func restampWinsOverUnmergedWrites() throws {
        let a = try Fixture.replica("a", wallClock: 1_000)
        let b = try Fixture.replica("b", wallClock: 1_000)
        try S.write(a, "INSERT INTO albums (id, name) VALUES ('a1', 'one')")
        try S.deliver(a, to: b)
        try S.write(b, "UPDATE albums SET name = 'uno', cover = 'p9' WHERE id = 'a1'")
        try a.setWallClockOverride(milliseconds: 2_000)
        #expect(try a.restamp("albums", columns: ["name"]) == 1)
        try S.deliver(b, to: a)
        try S.deliver(a, to: b)
        for replica in [a, b] {
            #expect(try S.rows(replica, "SELECT name, cover FROM albums") == ["t6f6e65|t7039"])
        }
    }
}

/// Column defaults that differ between replicas.
extension UncapturedValueTests {
    @Test("replicas that add a column with different DEFAULTs converge on one of them; real writes win over both")
    func differentDefaultsConverge() throws {
        try S.write(a, "INSERT INTO albums (id, name) VALUES ('a1', 'one'), ('a2', 'two'), ('a3', 'three')")
        try S.deliver(a, to: b)
        let cursor = try a.changes(since: 0).through
        try S.write(a, "ALTER TABLE albums ADD COLUMN rank INTEGER NOT NULL DEFAULT 0")
        try S.write(b, "ALTER TABLE albums ADD COLUMN rank INTEGER NOT NULL DEFAULT 1")
        try S.write(b, "UPDATE albums SET rank = 7 WHERE id = 'a3'")  // before b noticed the column
        let adoptedA = try a.adoptSchemaChanges()
        let adoptedB = try b.adoptSchemaChanges()
        #expect(adoptedA.defaultedRows == 3, "\(adoptedA)")
        #expect(adoptedB.defaultedRows == 2 && adoptedB.recordedRows == 1, "\(adoptedB)")
        // What travels for the defaults: each row's key and the new column, nothing else.
        let defaults = try a.changes(since: cursor)
        #expect(defaults.records.count == 3)
        #expect(defaults.records.allSatisfy { $0.presentColumns.map(\.index) == [2] }, "\(defaults.records)")
        try S.write(a, "UPDATE albums SET rank = 5 WHERE id = 'a2'")
        // Each merges what the other had before either merged: the defaults cross.
        let toB = try a.changes(since: 0, maximumRows: 10_000)
        let toA = try b.changes(since: 0, maximumRows: 10_000)
        try b.merge(toB)
        try a.merge(toA)
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b))
        try S.deliver(a, to: b)
        try S.deliver(b, to: a)
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b))
        // a1: both defaults, ordered by site ("b" after "a"); a2 and a3: the real writes.
        #expect(try S.rows(a, "SELECT id, rank FROM albums ORDER BY id") == ["t6131|i1", "t6132|i5", "t6133|i7"])
    }

    @Test("a row that arrives from a replica without the column takes each receiver's DEFAULT, ordered by site")
    func rowsFromAnOlderSchemaTakeOrderedDefaults() throws {
        let old = try Fixture.replica("c")
        try S.write(a, "ALTER TABLE albums ADD COLUMN rank INTEGER NOT NULL DEFAULT 0")
        try S.write(b, "ALTER TABLE albums ADD COLUMN rank INTEGER NOT NULL DEFAULT 1")
        _ = try a.adoptSchemaChanges()
        _ = try b.adoptSchemaChanges()
        // c, still on the old schema, creates a row: a and b each fill the column it lacks.
        try S.write(old, "INSERT INTO albums (id, name) VALUES ('c1', 'from c')")
        try S.deliver(old, to: a)
        try S.deliver(old, to: b)
        #expect(try S.rows(a, "SELECT rank FROM albums") == ["i0"])
        #expect(try S.rows(b, "SELECT rank FROM albums") == ["i1"])
        try S.deliver(a, to: b)
        try S.deliver(b, to: a)
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b))
        #expect(try S.rows(a, "SELECT rank FROM albums") == ["i1"])
    }

    @Test("a read-only replica takes the defaults it receives: it never sends its own, so they must not win")
    func readOnlyReplicaTakesReceivedDefaults() throws {
        let z = try Fixture.replica("z")
        try S.write(a, "INSERT INTO albums (id, name) VALUES ('a1', 'one')")
        try S.deliver(a, to: z)
        try z.setReadOnly(true)
        try S.write(a, "ALTER TABLE albums ADD COLUMN rank INTEGER NOT NULL DEFAULT 0")
        try S.write(z, "ALTER TABLE albums ADD COLUMN rank INTEGER NOT NULL DEFAULT 9")
        #expect(try z.adoptSchemaChanges().defaultedRows == 0)
        #expect(throws: VecSyncError.readOnlyReplica(site: "z", operation: "restamp table albums")) {
            try z.restamp("albums")
        }
        try S.deliver(a, to: z)
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(z))
        #expect(try S.rows(z, "SELECT rank FROM albums") == ["i0"])
    }
}
