import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

/// One in-memory copy of a vec0 table per process, shared by every connection to the file,
/// kept current from the change log, with each connection's snapshot respected: what an
/// app with a GRDB pool (one writer, several readers) relies on.
@Suite("vec0 shared copy across connections")
struct Vec0SharedStoreTests {
    /// A WAL database file with `v(embedding float[8])` holding `rows` rows, and a
    /// function that opens another connection to it.
    struct Fixture {
        let directory: URL
        let path: String

        init(rows: Int, seed: UInt64) throws {
            directory = try temporaryDirectory("shared")
            path = directory.appendingPathComponent("shared.db").path
            var random = ExtensionRandom(defaultSeed: seed)
            let writer = try connection()
            try writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode=WAL")
                try db.execute(sql: "CREATE VIRTUAL TABLE v USING vec0(embedding float[8], chunk_size=64)")
            }
            try writer.write { db in
                for row in 1...rows {
                    let values = (0..<8).map { _ in Float.random(in: -1...1, using: &random) }
                    try db.execute(
                        sql: "INSERT INTO v(rowid, embedding) VALUES (?, ?)",
                        arguments: [row, Vector(values)])
                }
            }
        }

        func connection() throws -> DatabaseQueue {
            try DatabaseQueue(path: path, configuration: .vecSync())
        }

        /// Runs `body` with a new fixture, then removes its folder.
        static func with(rows: Int, seed: UInt64, _ body: (Fixture) throws -> Void) throws {
            let fixture = try Fixture(rows: rows, seed: seed)
            defer { try? FileManager.default.removeItem(at: fixture.directory) }
            try body(fixture)
        }
    }

    static let query = Vector([1, 1, 1, 1, 1, 1, 1, 1])

    /// ``nearest(_:k:)`` on a connection of its own, in a read transaction.
    static func nearest(in queue: DatabaseQueue) throws -> [Int64] {
        try queue.read { db in try nearest(db) }
    }

    static func nearest(_ db: Database, k: Int = 3) throws -> [Int64] {
        try Int64.fetchAll(
            db, sql: "SELECT rowid FROM v WHERE embedding MATCH ? AND k = ?",
            arguments: [query, k])
    }

    @Test("The first search of the process streams; the second loads the copy, which other connections take")
    func secondConnectionSharesTheCopy() throws {
        try Fixture.with(rows: 500, seed: 0x5eed_0110) { fixture in
            let first = try fixture.connection()
            let second = try fixture.connection()
            let a = try first.read { db in (try Self.nearest(db), try Self.info(db)) }
            #expect(a.1.processWide && a.1.loaded == 1 && a.1.streamed, "first search: \(a.1)")
            let warm = try first.read { db in (try Self.nearest(db), try Self.info(db)) }
            #expect(warm.0 == a.0)
            #expect(warm.1.loaded == 2 && !warm.1.streamed, "second search: \(warm.1)")
            let b = try second.read { db in (try Self.nearest(db), try Self.info(db)) }
            #expect(a.0 == b.0)
            #expect(b.1.loaded == 0 && b.1.taken == 1 && !b.1.streamed, "second connection: \(b.1)")
        }
    }

    @Test("The batch function loads the copy at once")
    func batchLoadsTheCopy() throws {
        try Fixture.with(rows: 500, seed: 0x5eed_0112) { fixture in
            let info = try fixture.connection().read { db in
                _ = try Row.fetchAll(db, sql: "SELECT * FROM vecsync_knn_batch('v', ?, 3)", arguments: [Self.query])
                return try Self.info(db)
            }
            #expect(info.loaded == 1 && !info.streamed, "\(info)")
        }
    }

    @Test("After another connection writes one row, a reader replays it instead of reloading")
    func oneRowWriteIsReplayed() throws {
        try Fixture.with(rows: 500, seed: 0x5eed_0111) { fixture in
            let reader = try fixture.connection()
            let writer = try fixture.connection()
            _ = try Self.nearest(in: reader)     // streamed: the first search of the process
            _ = try Self.nearest(in: reader)     // the copy, loaded
            try writer.write { db in
                try db.execute(sql: "INSERT INTO v(rowid, embedding) VALUES (9999, ?)", arguments: [Self.query])
            }
            let (rows, info) = try reader.read { db in (try Self.nearest(db), try Self.info(db)) }
            #expect(rows.first == 9999, "the new row is the nearest: \(rows)")
            #expect(info.loaded == 2 && info.replayed + info.taken == 1, "\(info)")
            #expect(info.rows == 501)
            try writer.write { db in try db.execute(sql: "DELETE FROM v WHERE rowid = 9999") }
            let after = try Self.nearest(in: reader)
            #expect(!after.contains(9999), "a deleted row is gone from the next search: \(after)")
        }
    }

    @Test("Deleting the newest rows gives their storage back; readers follow and VACUUM shrinks the file")
    func trailingDeletesReleaseStorage() throws {
        // 500 rows of 8 dimensions, chunk_size 64: blobs of 64 slots, slots 0..499.
        try Fixture.with(rows: 500, seed: 0x5eed_0113) { fixture in
            let reader = try fixture.connection()
            let writer = try fixture.connection()
            _ = try Self.nearest(in: reader)
            func storage(_ db: Database) throws -> [Int] {
                [
                    try Int.fetchOne(db, sql: "SELECT value FROM v_info WHERE key = 'next_slot'") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM v_vectors") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM v_free") ?? -1,
                ]
            }
            try writer.write { db in try db.execute(sql: "DELETE FROM v WHERE rowid > 100") }
            // Slots 0..99 stay in use: blob 1 (slots 64..127) stays, with 28 free slots.
            #expect(try writer.read(storage) == [128, 2, 28])
            let exact = try writer.read { db in
                try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT rowid FROM v ORDER BY vec_distance_l2(embedding, ?), rowid LIMIT 3
                        """, arguments: [Self.query])
            }
            #expect(try Self.nearest(in: reader) == exact)
            func pages() throws -> Int {
                try writer.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                    return try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                }
            }
            let pagesBefore = try pages()
            try writer.write { db in try db.execute(sql: "DELETE FROM v") }
            #expect(try writer.read(storage) == [0, 0, 0])
            #expect(try Self.nearest(in: reader) == [])
            try writer.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
            let pagesAfter = try pages()
            // The blobs held 500 x 8 floats (16,000 bytes, 4 pages and more); T_rows went too.
            #expect(pagesAfter + 4 <= pagesBefore, "pages \(pagesBefore) -> \(pagesAfter)")
            try writer.write { db in
                try db.execute(sql: "INSERT INTO v(rowid, embedding) VALUES (1, ?)", arguments: [Self.query])
            }
            #expect(try Self.nearest(in: reader) == [1])
        }
    }

    @Test("A row added at the end of the table and deleted costs readers a replay, not a load")
    func trimmedSlotsAreReplayed() throws {
        // 512 rows of 8 dimensions, chunk_size 64: blobs of 64 slots, 0..7 full. Row 513
        // opens blob 8; deleting it gives the blob back and takes next_slot down to 512.
        try Fixture.with(rows: 512, seed: 0x5eed_0115) { fixture in
            let reader = try fixture.connection()
            let writer = try fixture.connection()
            let before = try Self.nearest(in: reader)    // streamed: the first search
            _ = try Self.nearest(in: reader)             // the copy, loaded
            func nextSlot() throws -> Int {
                try writer.read { db in
                    try Int.fetchOne(db, sql: "SELECT value FROM v_info WHERE key = 'next_slot'") ?? -1
                }
            }
            func insert(_ rowid: Int) throws {
                try writer.write { db in
                    try db.execute(
                        sql: "INSERT INTO v(rowid, embedding) VALUES (?, ?)", arguments: [rowid, Self.query])
                }
            }
            func delete(_ rowid: Int) throws {
                try writer.write { db in try db.execute(sql: "DELETE FROM v WHERE rowid = ?", arguments: [rowid]) }
            }
            try insert(9001)
            #expect(try Self.nearest(in: reader).first == 9001)
            try delete(9001)
            #expect(try nextSlot() == 512, "the trailing blob was given back")
            let (rows, info) = try reader.read { db in (try Self.nearest(db), try Self.info(db)) }
            #expect(rows == before, "the deleted row is gone: \(rows)")
            #expect(info.loaded == 2 && info.rows == 512, "replayed, not loaded again: \(info)")

            // Inserted and given back between two searches: the replay meets the row's
            // slot past next_slot (its blob gone) and does not read it.
            try insert(9002)
            try delete(9002)
            try insert(9003)
            let (again, info2) = try reader.read { db in (try Self.nearest(db), try Self.info(db)) }
            #expect(again.first == 9003 && !again.contains(9002), "\(again)")
            #expect(info2.loaded == 2 && info2.rows == 513, "\(info2)")
            try delete(9003)
            try insert(9004)
            try delete(9004)
            let (last, info3) = try reader.read { db in (try Self.nearest(db), try Self.info(db)) }
            #expect(last == before, "\(last)")
            #expect(info3.loaded == 2 && info3.rows == 512, "\(info3)")
            // The writer's own copy follows too.
            #expect(try Self.nearest(in: writer) == before)
        }
    }

    @Test("An ivf index follows slots given back at the end of the table without reading its lists again")
    func ivfFollowsTrimmedSlots() throws {
        try Fixture.with(rows: 1, seed: 0x5eed_0116) { fixture in
            let writer = try fixture.connection()
            var random = ExtensionRandom(defaultSeed: 0x5eed_0116)
            let vectors = (0..<520).map { _ in Vector((0..<8).map { _ in Float.random(in: -1...1, using: &random) }) }
            try writer.write { db in
                try db.execute(sql: """
                    CREATE VIRTUAL TABLE w USING vec0(
                      embedding float[8] indexed by ivf(nlist=8, nprobe=2), chunk_size=64)
                    """)
                for row in 0..<512 {
                    try db.execute(
                        sql: "INSERT INTO w(rowid, embedding) VALUES (?, ?)", arguments: [row + 1, vectors[row]])
                }
                _ = try Int.fetchOne(db, sql: "SELECT vecsync_ivf_retrain('w')")
            }
            func search(_ db: Database) throws -> [[Int64]] {
                try vectors[512..<520].map { q in
                    try Int64.fetchAll(
                        db, sql: "SELECT rowid FROM w WHERE embedding MATCH ? AND k = 5", arguments: [q])
                }
            }
            func report(_ db: Database) throws -> [Int] {
                let json = try String.fetchOne(db, sql: "SELECT vecsync_index_info('w')") ?? "{}"
                let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
                return [object["lists_in_memory"] as? Int ?? -1, object["listed_rows"] as? Int ?? -1]
            }
            let reader = try fixture.connection()
            let before = try reader.read(search)
            let inMemory = try reader.read(report)[0]
            #expect(inMemory > 0)
            for rowid in [9001, 9002] {
                try writer.write { db in
                    try db.execute(sql: "INSERT INTO w(rowid, embedding) VALUES (?, ?)", arguments: [rowid, vectors[512]])
                }
                #expect(try reader.read(search)[0].first == Int64(rowid))
                try writer.write { db in try db.execute(sql: "DELETE FROM w WHERE rowid = ?", arguments: [rowid]) }
                #expect(try writer.read { db in
                    try Int.fetchOne(db, sql: "SELECT value FROM w_info WHERE key = 'next_slot'")
                } == 512)
                #expect(try reader.read(report) == [inMemory, 512], "caught up, not read again")
                #expect(try reader.read(search) == before)
            }
            #expect(try fixture.connection().read(search) == before, "a new connection answers alike")
        }
    }

    @Test("next_slot taken down under rows by damage is an error for a reader replaying the log")
    func damagedNextSlotBelowRowsIsAnError() throws {
        try Fixture.with(rows: 512, seed: 0x5eed_0117) { fixture in
            let reader = try fixture.connection()
            _ = try Self.nearest(in: reader)
            _ = try Self.nearest(in: reader)
            // Blob 7 (slots 448..511) and next_slot both gone, rows 449..512 still in T_rows,
            // and a new generation with nothing logged: the shape a trim has, without its frees.
            try fixture.connection().write { db in
                try db.execute(sql: """
                    DELETE FROM v_vectors WHERE chunk_id = 7;
                    UPDATE v_info SET value = 448 WHERE key = 'next_slot';
                    UPDATE v_info SET value = value + 1 WHERE key = 'generation';
                    """)
            }
            #expect {
                try Self.nearest(in: reader)
            } throws: { error in
                let message = "\(error)"
                return message.contains("storage is damaged") && message.contains("next_slot went down to 448")
            }
        }
    }

    @Test("A reader inside a transaction keeps its snapshot while another connection commits")
    func readerKeepsItsSnapshot() throws {
        try Fixture.with(rows: 300, seed: 0x5eed_0112) { fixture in
            let reader = try fixture.connection()
            let writer = try fixture.connection()
            let before = try Self.nearest(in: reader)
            try reader.inDatabase { db in
                try db.execute(sql: "BEGIN")
                #expect(try Self.nearest(db) == before)
                try writer.write { db in
                    try db.execute(sql: "INSERT INTO v(rowid, embedding) VALUES (7777, ?)", arguments: [Self.query])
                }
                #expect(try Self.nearest(db) == before, "inside its transaction the reader sees its snapshot")
                try db.execute(sql: "COMMIT")
            }
            #expect(try Self.nearest(in: reader).first == 7777)
        }
    }

    @Test("A writer sees its own uncommitted rows; ROLLBACK and ROLLBACK TO undo them")
    func writerSeesItsOwnRowsAndRollbackUndoes() throws {
        try Fixture.with(rows: 300, seed: 0x5eed_0113) { fixture in
            let writer = try fixture.connection()
            let other = try fixture.connection()
            let before = try Self.nearest(in: other)
            try writer.inDatabase { db in
                _ = try Self.nearest(db)
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "INSERT INTO v(rowid, embedding) VALUES (5555, ?)", arguments: [Self.query])
                #expect(try Self.nearest(db).first == 5555)
                try db.execute(sql: "SAVEPOINT s")
                try db.execute(sql: "DELETE FROM v WHERE rowid = 5555")
                #expect(try !Self.nearest(db).contains(5555))
                try db.execute(sql: "ROLLBACK TO s")
                #expect(try Self.nearest(db).first == 5555, "ROLLBACK TO brings the row back")
                #expect(try Self.nearest(in: other) == before, "uncommitted rows stay private")
                try db.execute(sql: "ROLLBACK")
                #expect(try Self.nearest(db) == before, "ROLLBACK removes the row")
            }
            #expect(try Self.nearest(in: other) == before)
        }
    }

    @Test("Random writes from two connections: every search equals brute force over the rows")
    func randomWritesMatchBruteForce() throws {
        try Fixture.with(rows: 200, seed: 0x5eed_0114) { fixture in
            var random = ExtensionRandom(defaultSeed: 0x5eed_0115)
            let connections = [try fixture.connection(), try fixture.connection(), try fixture.connection()]
            var nextRowid: Int64 = 1_000
            for step in 0..<120 {
                let writer = connections[Int.random(in: 0..<2, using: &random)]
                let action = Int.random(in: 0..<4, using: &random)
                let vector = Vector((0..<8).map { _ in Float.random(in: -1...1, using: &random) })
                let pick = Int.random(in: 0..<1_000, using: &random)
                try writer.write { db in
                    // A row chosen by the seeded generator, not by SQLite's random().
                    let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM v_rows") ?? 0
                    let victim =
                        count == 0
                        ? nil
                        : try Int64.fetchOne(
                            db, sql: "SELECT rowid FROM v_rows ORDER BY rowid LIMIT 1 OFFSET ?",
                            arguments: [pick % count])
                    switch action {
                    case 0:
                        nextRowid += 1
                        try db.execute(
                            sql: "INSERT INTO v(rowid, embedding) VALUES (?, ?)", arguments: [nextRowid, vector])
                    case 1:
                        try db.execute(sql: "DELETE FROM v WHERE rowid = ?", arguments: [victim])
                    case 2:
                        try db.execute(sql: "UPDATE v SET embedding = ? WHERE rowid = ?", arguments: [vector, victim])
                    default:
                        // A transaction rolled back: nothing of it may show.
                        try db.execute(sql: "SAVEPOINT x")
                        try db.execute(sql: "INSERT INTO v(rowid, embedding) VALUES (-1, ?)", arguments: [Self.query])
                        try db.execute(sql: "ROLLBACK TO x")
                        try db.execute(sql: "RELEASE x")
                    }
                }
                let reader = connections[Int.random(in: 0..<3, using: &random)]
                try reader.read { db in
                    let got = try Self.nearest(db, k: 5)
                    let rows = try Row.fetchAll(db, sql: "SELECT rowid, embedding FROM v")
                    let scored = rows.map { row -> (Int64, Double) in
                        let id: Int64 = row[0]
                        let blob: Data = row[1]
                        let v = (try? Vector(blob: blob)) ?? Vector([])
                        let d = zip(v.scalars, Self.query.scalars).reduce(0.0) {
                            $0 + (Double($1.0) - Double($1.1)) * (Double($1.0) - Double($1.1))
                        }
                        return (id, d)
                    }.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
                    let want = scored.prefix(5).map(\.0)
                    #expect(got == want, "step \(step) (seed \(random.seed)): got \(got), brute force \(want)")
                }
            }
        }
    }
}
