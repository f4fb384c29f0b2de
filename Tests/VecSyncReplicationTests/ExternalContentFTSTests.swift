import Foundation
import GRDB
import Testing
@testable import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// External-content FTS5 indexes (DriveIndex's `files_fts`): never synced, current after every
/// merge, whether the application keeps them with its own triggers or the engine does.
@Suite("External-content FTS5")
struct ExternalContentFTSTests {
    static let schema = """
        CREATE TABLE files (id INTEGER PRIMARY KEY, name TEXT, path TEXT, size INTEGER);
        CREATE VIRTUAL TABLE files_fts USING fts5(name, path, content='files', content_rowid='id', tokenize='porter unicode61');
        """

    /// DriveIndex's own triggers, as SQLite's documentation writes them.
    static let applicationTriggers = """
        CREATE TRIGGER files_ai AFTER INSERT ON files BEGIN
          INSERT INTO files_fts(rowid, name, path) VALUES (new.id, new.name, new.path);
        END;
        CREATE TRIGGER files_ad AFTER DELETE ON files BEGIN
          INSERT INTO files_fts(files_fts, rowid, name, path) VALUES ('delete', old.id, old.name, old.path);
        END;
        CREATE TRIGGER files_au AFTER UPDATE ON files BEGIN
          INSERT INTO files_fts(files_fts, rowid, name, path) VALUES ('delete', old.id, old.name, old.path);
          INSERT INTO files_fts(rowid, name, path) VALUES (new.id, new.name, new.path);
        END;
        """

    /// A replica of DriveIndex's files table, `mac` its authority, with files_fts registered.
    static func replica(_ site: SiteID, ownTriggers: Bool) throws -> Replica {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: schema)
            if ownTriggers { try db.execute(sql: applicationTriggers) }
        }
        let replica = try Replica(queue, site: site)
        try replica.track("files", authority: "mac")
        let index = try queue.read { db in try DerivedIndex.fts5(reading: "files_fts", on: "files", in: db) }
        #expect(index.keyColumn == "rowid")
        #expect(index.columns == ["name", "path"])
        try replica.register(index)
        return replica
    }

    static func search(_ replica: Replica, _ query: String) throws -> [Int64] {
        try replica.writer.read { db in
            try Int64.fetchAll(
                db, sql: "SELECT rowid FROM files_fts WHERE files_fts MATCH ? ORDER BY rowid", arguments: [query])
        }
    }

    static func ship(_ from: Replica, to: Replica, since: Int64) throws -> Int64 {
        try to.merge(from.changes(since: since))
        return try from.currentSequence()
    }

    @Test(
        "merged inserts, renames and deletes reach an external-content index, with the engine's triggers or the application's",
        arguments: [false, true])
    func mergesKeepTheIndexCurrent(ownTriggers: Bool) throws {
        let mac = try Self.replica("mac", ownTriggers: ownTriggers)
        let phone = try Self.replica("phone", ownTriggers: ownTriggers)
        let engineTriggers = try phone.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'vecsync_fts_%'")
        }
        #expect(engineTriggers == (ownTriggers ? 0 : 3))
        try mac.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO files (id, name, path, size) VALUES
                      (1, 'holiday photos.zip', '/archive/2019', 10),
                      (2, 'tax return.pdf', '/documents', 20),
                      (3, 'running shoes.jpg', '/pictures', 30)
                    """)
        }
        var cursor = try Self.ship(mac, to: phone, since: 0)
        #expect(try Self.search(phone, "holiday") == [1])
        #expect(try Self.search(phone, "run") == [3])  // porter: running -> run
        // A rename, a size change that leaves the text alone, a delete.
        try mac.writer.write { db in
            try db.execute(sql: "UPDATE files SET name = 'summer trip.zip' WHERE id = 1")
            try db.execute(sql: "UPDATE files SET size = 21 WHERE id = 2")
            try db.execute(sql: "DELETE FROM files WHERE id = 3")
        }
        cursor = try Self.ship(mac, to: phone, since: cursor)
        #expect(try Self.search(phone, "holiday").isEmpty)
        #expect(try Self.search(phone, "summer") == [1])
        #expect(try Self.search(phone, "tax") == [2])
        #expect(try Self.search(phone, "shoes").isEmpty)
        #expect(try phone.verifyDerivedIndexes() == ["files_fts": 0])
        // Taken out of step by hand: verify sees it, rebuild mends it.
        try phone.writer.write { db in
            try db.execute(
                sql: "INSERT INTO files_fts (files_fts, rowid, name, path) VALUES ('delete', 2, 'tax return.pdf', '/documents')")
        }
        #expect(try phone.verifyDerivedIndexes() == ["files_fts": 1])
        try phone.rebuildDerivedIndexes()
        #expect(try phone.verifyDerivedIndexes() == ["files_fts": 0])
        #expect(try Self.search(phone, "tax") == [2])
        _ = cursor
    }

    @Test("an external-content index of another table, or keyed by a column, is refused with the reason")
    func mismatchedDeclarationsAreRefused() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: Self.schema)
            try db.execute(sql: "CREATE TABLE drives (id INTEGER PRIMARY KEY, label TEXT)")
        }
        let replica = try Replica(queue, site: "mac")
        try replica.track("files", authority: "mac")
        try replica.track("drives", authority: "mac")
        #expect(throws: VecSyncError.self) {
            try replica.register(DerivedIndex(fts5: "files_fts", on: "drives", columns: ["label"]))
        }
        #expect(throws: VecSyncError.self) {
            try replica.register(DerivedIndex(fts5: "files_fts", on: "files", keyColumn: "name", columns: ["path"]))
        }
        #expect(try replica.derivedIndexes().indexes.isEmpty)
    }

    @Test("declarations are read with quotes, spaces and commas inside values")
    func declarationsAreParsed() throws {
        let arguments = ExternalContentFTS.moduleArguments(
            "CREATE VIRTUAL TABLE \"t\" USING FTS5 (a, \"b,c\", content = 'my ''files''', content_rowid=[id], tokenize = \"porter unicode61 remove_diacritics 1\")"
        )
        #expect(
            arguments == [
                "a", "\"b,c\"", "content = 'my ''files'''", "content_rowid=[id]",
                "tokenize = \"porter unicode61 remove_diacritics 1\"",
            ])
        #expect(ExternalContentFTS.unquoted("'my ''files'''") == "my 'files'")
        #expect(ExternalContentFTS.unquoted("[id]") == "id")
    }
}
