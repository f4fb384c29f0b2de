import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncReplication
import VecSyncTestSupport

/// The README's sync example, as a user would write it, on two files and one folder.
@Suite("README sync example")
struct ReadmeExampleTests {
    @Test("the example's calls sync two photo libraries through a folder")
    func readmeSyncExampleRuns() throws {
        let directory = try temporaryDirectory("readme")
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("photos-sync").path

        var replicas: [Replica] = []
        for site in ["macbook", "phone"] {
            let db = try VecSyncDatabase(path: directory.appendingPathComponent("\(site).db").path)
            try db.writer.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE photos (id TEXT PRIMARY KEY, title TEXT, embedding F32_BLOB(3));
                        CREATE TABLE notes (note_id TEXT PRIMARY KEY, body TEXT);
                        CREATE TABLE albums (id TEXT PRIMARY KEY, name TEXT);
                        CREATE VIRTUAL TABLE notes_fts USING fts5(note_id UNINDEXED, body);
                        CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT);
                        """)
            }
            let replica = try Replica(db.writer, site: SiteID(site))
            try replica.track("photos")
            try replica.track("notes")
            try replica.track("albums")
            try replica.register(DerivedIndex(fts5: "notes_fts", on: "notes", keyColumn: "note_id", columns: ["body"]))
            try replica.setAuthority("macbook", for: "photos")
            try replica.track("files", authority: "macbook")
            replicas.append(replica)
        }
        let (mac, phone) = (replicas[0], replicas[1])
        #expect(throws: (any Error).self, "only macbook assigns integer keys") {
            try phone.writer.write { db in try db.execute(sql: "INSERT INTO files (path) VALUES ('a.jpg')") }
        }
        try mac.writer.write { db in
            try db.execute(sql: "INSERT INTO photos VALUES ('p1', 'Sunset', vector32('[1, 0, 0]'))")
            try db.execute(sql: "INSERT INTO notes VALUES ('n1', 'the beach at dusk')")
        }
        let pushed = try mac.sync(through: FolderTransport(path: folder))
        #expect(pushed.description.hasPrefix("macbook: pushed 2 rows in 1 files"), "\(pushed)")
        let pulled = try phone.sync(through: FolderTransport(path: folder))
        #expect(pulled.description.contains("pulled 1 files from 1 sites"), "\(pulled)")

        let found = try phone.writer.read { db in
            try String.fetchAll(db, sql: "SELECT note_id FROM notes_fts WHERE notes_fts MATCH 'beach'")
        }
        #expect(found == ["n1"], "the merge refreshed the phone's FTS5 index")
        #expect(try phone.verifyDerivedIndexes() == ["notes_fts": 0])

        let outgoing = try phone.changes(since: 0)
        #expect(outgoing.records.count == 2 && outgoing.serialized().count > 0)
        let merged = try mac.merge(outgoing)
        #expect(merged.conflicts == 0)
        try phone.setReadOnly(true)
        #expect(throws: (any Error).self) {
            try phone.writer.write { db in try db.execute(sql: "DELETE FROM photos") }
        }
        #expect(try mac.compactTombstones() == 0)
    }
}
