import ArgumentParser
import Foundation
import Testing
import VecSync
import VecSyncTestSupport

@testable import vecsync_cli

/// The subcommands run in-process on files in a temporary folder, as a person runs them.
@Suite("vecsync-cli import, query, verify and rebuild")
struct CLICommandTests {
    let folder: URL

    init() throws {
        folder = try temporaryDirectory("cli")
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func run(_ arguments: [String]) throws {
        var command = try VecSyncCLI.parseAsRoot(arguments)
        try command.run()
    }

    /// `rows` vectors of `dims` floats: row i is (i, i + 0.5, …) scaled, so the nearest row
    /// to row i's vector is row i itself and then its neighbours by number.
    func vectors(rows: Int, dims: Int) -> [[Float]] {
        (0..<rows).map { i in (0..<dims).map { j in Float(i) + Float(j) * 0.01 } }
    }

    /// numpy.save's format, version 1.0, little-endian float32, C order.
    func writeNpy(_ rows: [[Float]], to file: String) throws {
        var header = "{'descr': '<f4', 'fortran_order': False, 'shape': (\(rows.count), \(rows[0].count)), }"
        header += String(repeating: " ", count: 63 - (10 + header.utf8.count) % 64) + "\n"
        var data = Data(
            [0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(header.utf8.count & 0xFF), UInt8(header.utf8.count >> 8)])
        data.append(Data(header.utf8))
        for row in rows { data.append(Vector(row).blob) }
        try data.write(to: URL(fileURLWithPath: file))
    }

    func keys(_ db: VecSyncDatabase, _ index: VectorIndex, near query: Vector, k: Int) throws -> [Int64] {
        try db.read { db in try index.search(db, near: query, limit: k, as: Int64.self).map(\.key) }
    }

    @Test func npyHeaderAndRowsAreRead() throws {
        let rows = vectors(rows: 5, dims: 3)
        try writeNpy(rows, to: path("v.npy"))
        let array = try NpyArray(data: Data(contentsOf: URL(fileURLWithPath: path("v.npy"))))
        #expect(array.rows == 5 && array.columns == 3)
        #expect(array.row(4) == Vector(rows[4]))
        #expect(throws: (any Error).self) { try NpyArray(data: Data("not numpy".utf8)) }
    }

    @Test func importNpyWithAVec0IndexThenQueryVerifyTamperAndRebuild() throws {
        let rows = vectors(rows: 200, dims: 8)
        try writeNpy(rows, to: path("v.npy"))
        try run([
            "import", "--db", path("a.db"), "--table", "docs", "--file", path("v.npy"), "--index", "vec0",
            "--metric", "l2", "--batch", "64", "--no-progress",
        ])
        let db = try VecSyncDatabase(path: path("a.db"))
        let index = try #require(try db.read { db in try VectorIndex.registered(named: "docs_embedding_vec", in: db) })
        #expect(index.dimensions == 8 && index.metric == .l2)
        #expect(
            try keys(db, index, near: Vector(rows[42]), k: 3) == [42, 41, 43]
                || keys(db, index, near: Vector(rows[42]), k: 3) == [42, 43, 41])
        try run(["query", "--db", path("a.db"), "--table", "docs", "--like", "42", "-k", "3", "--json"])
        try run(["verify", "--db", path("a.db")])

        try db.write { db in try db.execute(sql: "DELETE FROM docs_embedding_vec WHERE id = 7") }
        #expect(throws: ExitCode(1)) { try run(["verify", "--db", path("a.db")]) }
        try run(["rebuild", "--db", path("a.db")])
        try run(["verify", "--db", path("a.db")])
        #expect(try db.read { db in try index.verify(db).isConsistent })
    }

    @Test func sqliteVecExportAndMigrateMoveATableBothWays() throws {
        let file = path("sv.db")
        let db = try VecSyncDatabase(path: file)
        let layout = """
            select group_concat(name, ' ') from (select name from sqlite_schema
              where name like 'items\\_%' escape '\\' order by name)
            """
        let nearest = "select rowid from items where e match '[1, 0]' and k = 2"
        try db.write { db in
            try db.execute(sql: "create virtual table items using vec0(e float[2], tag text, +note text)")
            try db.execute(
                sql: "insert into items(rowid, e, tag, note) values (1, '[1, 0]', 'a', 'x'), (2, '[0, 1]', 'b', NULL), (3, '[1, 0.1]', 'a', 'y')")
        }
        try run(["sqlite-vec", "export", "--db", file, "--table", "items"])
        let reopened = try VecSyncDatabase(path: file)
        #expect(
            try reopened.read { try String.fetchOne($0, sql: layout) }
                == "items_auxiliary items_chunks items_info items_metadatachunks00 items_metadatatext00 items_rowids items_vector_chunks00")
        #expect(try reopened.read { try Int64.fetchAll($0, sql: nearest) } == [1, 3])
        #expect(throws: (any Error).self) {
            try reopened.write { try $0.execute(sql: "insert into items(rowid, e, tag) values (4, '[1, 1]', 'c')") }
        }
        #expect(throws: (any Error).self) { try run(["sqlite-vec", "export", "--db", file, "--table", "items"]) }
        try run(["sqlite-vec", "migrate", "--db", file, "--table", "items"])
        let migrated = try VecSyncDatabase(path: file)
        #expect(try migrated.read { try String.fetchOne($0, sql: layout) } == "items_changes items_free items_info items_rows items_vectors")
        #expect(try migrated.read { try Int64.fetchAll($0, sql: nearest) } == [1, 3])
        try migrated.write { try $0.execute(sql: "insert into items(rowid, e, tag) values (4, '[1, 0.01]', 'c')") }
        #expect(try migrated.read { try Int64.fetchAll($0, sql: nearest) } == [1, 4])
        #expect(throws: (any Error).self) { try run(["sqlite-vec", "migrate", "--db", file, "--table", "nothing"]) }
    }

    @Test func importJSONLinesKeepsKeysAndFieldsAndBuildsALibSQLIndex() throws {
        let lines = (0..<50).map { i in
            #"{"id": "doc-\#(i)", "embedding": [\#(i), 1, 0.5], "title": "Document \#(i)", "year": \#(2000 + i)}"#
        }
        try lines.joined(separator: "\n").write(toFile: path("v.jsonl"), atomically: true, encoding: .utf8)
        try run([
            "import", "--db", path("b.db"), "--table", "notes", "--file", path("v.jsonl"), "--index", "libsql",
            "--no-progress",
        ])
        let db = try VecSyncDatabase(path: path("b.db"))
        try db.read { db in
            let row = try #require(
                try Row.fetchOne(db, sql: "SELECT title, year, embedding FROM notes WHERE id = 'doc-7'"))
            #expect(row["title"] == "Document 7")
            #expect(row["year"] == 2007)
            #expect(Vector.fromDatabaseValue(row["embedding"]) == Vector([7, 1, 0.5]))
            let index = try #require(try LibSQLVectorIndex.named("notes_embedding_idx", in: db))
            #expect(index.column == "embedding" && index.dimensions == 3)
            #expect(try index.verify(db).isConsistent)
        }
        try run([
            "query", "--db", path("b.db"), "--index", "notes_embedding_idx", "--vector", "[7, 1, 0.5]", "-k", "2",
            "--show", "title",
        ])
    }

    @Test func importCSVWithAHeaderAndBracketedVectors() throws {
        try "id,x0,x1\n1,0.5,1\n2,1,0\n".write(toFile: path("a.csv"), atomically: true, encoding: .utf8)
        try "10,\"[1, 2]\"\n11,\"[3, 4]\"\n".write(toFile: path("b.csv"), atomically: true, encoding: .utf8)
        try run(["import", "--db", path("c.db"), "--table", "t", "--file", path("a.csv"), "--no-progress"])
        try run(["import", "--db", path("c.db"), "--table", "t", "--file", path("b.csv"), "--no-progress"])
        let db = try VecSyncDatabase(path: path("c.db"))
        let stored = try db.read { db in try Vector.fetchAll(db, sql: "SELECT embedding FROM t ORDER BY id") }
        #expect(stored == [[0.5, 1], [1, 0], [1, 2], [3, 4]])
    }

    @Test func importRefusesVectorsOfAnotherDimension() throws {
        try "1,0.5,1\n2,1,0,3\n".write(toFile: path("bad.csv"), atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) {
            try run(["import", "--db", path("d.db"), "--table", "t", "--file", path("bad.csv"), "--no-progress"])
        }
        do {
            _ = try VecSyncCLI.parseAsRoot(["query", "--db", path("d.db"), "--table", "t"])
            Issue.record("a query without a vector should be refused")
        } catch {
            #expect(VecSyncCLI.message(for: error) == "give exactly one of --vector, --vector-file, --like")
        }
    }

    /// A database whose only derived index is an FTS5 table registered with the sync engine
    /// (as DriveIndex's `files_fts` is): `verify` and `rebuild` find it in the catalogue.
    @Test func verifyAndRebuildSeeAnFTS5TableRegisteredWithTheEngine() throws {
        let db = try VecSyncDatabase(path: path("fts.db"))
        try db.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE files (id TEXT PRIMARY KEY, name TEXT, size INTEGER);
                    CREATE VIRTUAL TABLE files_fts USING fts5(id UNINDEXED, name);
                    INSERT INTO files (id, name, size) VALUES ('f1', 'holiday.jpg', 10), ('f2', 'budget.xlsx', 20),
                      ('f3', 'notes.txt', 30);
                    INSERT INTO files_fts (id, name) SELECT id, name FROM files;
                    """)
        }
        let replica = try Replica(db.writer, site: "laptop")
        try replica.track("files")
        try replica.register(DerivedIndex(fts5: "files_fts", on: "files", keyColumn: "id", columns: ["name"]))

        try run(["verify", "--db", path("fts.db")])
        try run(["verify", "--db", path("fts.db"), "--index", "files_fts"])
        // A row the index lost, and one it holds in an old version: 2 out of step.
        try db.write { db in
            try db.execute(sql: "DELETE FROM files_fts WHERE id = 'f2'")
            try db.execute(sql: "UPDATE files SET name = 'notes-2024.txt' WHERE id = 'f3'")
        }
        #expect(try db.read { db in try DerivedIndexCatalogue(db).verify(db).map(\.outOfStep) } == [3])
        #expect(throws: ExitCode(1)) { try run(["verify", "--db", path("fts.db")]) }
        try run(["rebuild", "--db", path("fts.db"), "--index", "files_fts"])
        try run(["verify", "--db", path("fts.db")])
        #expect(
            try db.read { db in try String.fetchAll(db, sql: "SELECT id FROM files_fts WHERE files_fts MATCH 'notes'") }
                == ["f3"])
        #expect(throws: (any Error).self) { try run(["verify", "--db", path("fts.db"), "--index", "nothing"]) }
    }

    @Test func trackRegistersAnExternalContentFTSAndSyncRunsUntilQuiet() throws {
        for name in ["mac.db", "phone.db"] {
            let db = try VecSyncDatabase(path: path(name))
            try db.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE files (id INTEGER PRIMARY KEY, name TEXT, size INTEGER);
                        CREATE VIRTUAL TABLE files_fts USING fts5(name, content='files', content_rowid='id');
                        """)
            }
        }
        let mac = try VecSyncDatabase(path: path("mac.db"))
        try mac.write { db in
            for index in 1...250 {
                try db.execute(
                    sql: "INSERT INTO files (id, name, size) VALUES (?, ?, ?)",
                    arguments: [index, "report \(index) draft.pdf", index])
            }
        }
        for (name, site) in [("mac.db", "mac"), ("phone.db", "phone")] {
            try run([
                "track", "--db", path(name), "--table", "files", "--fts", "files_fts", "--site", site, "--authority",
                "mac",
            ])
        }
        #expect(throws: (any Error).self) {
            try run(["track", "--db", path("mac.db"), "--table", "files", "--table", "x", "--fts", "files_fts"])
        }
        // Counters are declared when a table is first tracked, not on one that syncs already.
        #expect(throws: (any Error).self) {
            try run(["track", "--db", path("mac.db"), "--table", "files", "--counter", "size"])
        }
        let shared = path("shared")
        try run(["sync", "--db", path("mac.db"), "--folder", shared])
        try run(["sync", "--db", path("phone.db"), "--folder", shared, "--until-quiet", "--max-runs", "3"])
        let phone = try VecSyncDatabase(path: path("phone.db"))
        #expect(
            try phone.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM files_fts WHERE files_fts MATCH 'draft'") }
                == 250)
        let status = try Replica(opening: phone.writer).syncStatus()
        #expect(status.lastSyncs.first?.runs == 2, "the first sync merged, the second was quiet")
        #expect(status.lastSyncs.first?.firstCaughtUp != nil)
        try run(["verify", "--db", path("phone.db"), "--index", "files_fts"])
    }

    @Test func demoRunsAndItsSearchesFindTheirTopics() throws {
        try run(["demo", "--db", path("demo.db")])
        let db = try VecSyncDatabase(path: path("demo.db"))
        let photos = try PhotoStore(db, dimensions: 768)
        #expect(try photos.count() == 20, "21 photos, one deleted on the phone and synced back")
        #expect(try photos.photo(sourceId: "PH-301")?.mood == "serene", "the phone's edit, merged")
        #expect(try Replica.storedSite(in: db.writer) == "mac")
        let (vector, text) = try photos.verifyIndexes()
        #expect(vector.isConsistent && text.isEmpty)
        let messages = try MessageStore(db, dimensions: 1536)
        #expect(try messages.messages(inThread: "japan").count == 9)
    }

    @Test func serverOptionsAreCheckedBeforeAnythingRuns() {
        for arguments in [
            ["sync", "--db", "x.db"],
            ["sync", "--db", "x.db", "--server", "http://127.0.0.1:1"],
            ["sync", "--db", "x.db", "--server", "http://127.0.0.1:1", "--space", "s"],
            ["sync", "--db", "x.db", "--server", "ftp://host", "--space", "s", "--token", "vst_x"],
            [
                "sync", "--db", "x.db", "--folder", "f", "--server", "http://127.0.0.1:1", "--space", "s", "--token",
                "t",
            ],
        ] {
            #expect(throws: (any Error).self, "\(arguments)") { _ = try VecSyncCLI.parseAsRoot(arguments) }
        }
    }
}
