import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

@testable import VecSyncReplication

/// Issue 13: the push cursor lives in the database, and a replica never echoes back what
/// it received. Each test counts the rows that arrive, or that travel, through a folder.
@Suite("Push cursor and echo")
struct PushCursorTests: FolderSuite {
    let scratch = ScratchFolder("restore")
    let a: Replica, b: Replica
    init() throws { (a, b) = (try Fixture.replica("a"), try Fixture.replica("b")) }

    /// Inserts `count` photos with embeddings, ids `<prefix>-<n>`.
    static func insertPhotos(_ replica: Replica, prefix: String, count: Int, random: inout SeededRandom) throws {
        let vectors = (0..<count).map { _ in Vector.random(dimensions: Fixture.dimensions, using: &random).blob }
        try replica.writer.write { db in
            for (row, blob) in vectors.enumerated() {
                try db.execute(
                    sql: "INSERT INTO photos (id, title, rating, embedding) VALUES (?, ?, ?, ?)",
                    arguments: ["\(prefix)-\(row)", "title \(prefix) \(row)", row % 5, blob])
            }
        }
    }

    static func photoCount(_ replica: Replica) throws -> Int {
        try replica.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM photos") ?? 0 }
    }

    /// Every change set file in `site`'s subfolder: its name, bytes and record count.
    static func published(by site: String, in folder: URL) throws -> [String: (bytes: Int, rows: Int)] {
        let directory = folder.appendingPathComponent(FolderTransport.folderName(for: SiteID(site)))
        var files: [String: (bytes: Int, rows: Int)] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        where name.hasSuffix(".vcs") {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            files[name] = (data.count, try ChangeSet(serialized: data).records.count)
        }
        return files
    }

    @Test("a database restored from a backup publishes every row written after the restore")
    func restoredDatabaseSkipsNoRow() throws {
        var random = SeededRandom(defaultSeed: 13_01)
        let options = Replica.Options(maximumBatchRows: 40)
        let a = try Fixture.replica("a", options: options)
        let b = try Fixture.replica("b", options: options)
        try Self.insertPhotos(a, prefix: "before", count: 100, random: &random)
        try a.sync(through: transport)
        let backup = try DatabaseQueue(configuration: Configuration.vecSync())
        try a.writer.backup(to: backup)
        // The lost future: published, then the database is restored from the backup.
        try Self.insertPhotos(a, prefix: "lost", count: 130, random: &random)
        try a.sync(through: transport)
        try b.sync(through: transport)
        #expect(try Self.photoCount(b) == 230)

        let restored = try Replica(backup, site: SiteID("a"), options: options)
        try Self.insertPhotos(restored, prefix: "after", count: 130, random: &random)
        // The push finds the lost future in its own files: it takes those 130 rows back and
        // publishes them once more with the 130 new ones (they are its own writes now).
        let report = try restored.sync(through: transport)
        #expect(report.pushedRows == 260)
        try b.sync(through: transport)
        #expect(try Self.photoCount(b) == 360)
        let arrived = try b.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM photos WHERE id LIKE 'after-%'") ?? 0
        }
        #expect(arrived == 130)
        // The restored database took back its lost future from its own files: it holds
        // what b holds.
        #expect(try Self.photoCount(restored) == 360)
        #expect(try Fixture.snapshot(restored) == Fixture.snapshot(b))
        // Publishing again changes nothing, and merging the overlap again is harmless.
        #expect(try restored.sync(through: transport).pushedRows == 0)
        #expect(try b.sync(through: transport).applied == 0)
    }

    @Test("a restored database that rewrites a row with a version its lost future used converges by value")
    func restoredDatabaseReusingVersionsConverges() throws {
        // A clock that stands still: the restored database issues the very versions its
        // lost future used.
        let a = try Fixture.replica("a", wallClock: 1_700_000_000_000)
        let b = try Fixture.replica("b", wallClock: 1_700_000_000_000)
        try Self.write(a, "INSERT INTO photos (id, title, rating) VALUES ('p1', 'first', 1)")
        try a.sync(through: transport)
        let backup = try DatabaseQueue(configuration: Configuration.vecSync())
        try a.writer.backup(to: backup)
        try Self.write(a, "UPDATE photos SET title = 'lost', rating = 2 WHERE id = 'p1'")
        try a.sync(through: transport)
        try b.sync(through: transport)

        let restored = try Replica(backup, site: SiteID("a"))
        try Self.write(restored, "UPDATE photos SET title = 'after', rating = 3 WHERE id = 'p1'")
        for _ in 0..<2 {
            try restored.sync(through: transport)
            try b.sync(through: transport)
        }
        #expect(try Fixture.snapshot(restored) == Fixture.snapshot(b))
        // Same tag, different values: the greater value wins on both.
        let row = try b.writer.read { db in try Row.fetchOne(db, sql: "SELECT title, rating FROM photos") }
        #expect(row?["title"] as String? == "lost")
        #expect(row?["rating"] as Int64? == 3)
    }

    @Test("a stray file claiming a larger range does not make a push skip rows")
    func strayFileSkipsNoRow() throws {
        var random = SeededRandom(defaultSeed: 13_02)
        let subfolder = folder.appendingPathComponent("a")
        try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: true)
        try Data("not a change set".utf8).write(
            to: subfolder.appendingPathComponent(FolderTransport.fileName(since: 500, through: 900)))
        try Self.insertPhotos(a, prefix: "p", count: 230, random: &random)
        #expect(try a.sync(through: transport).pushedRows == 230)
        let report = try b.sync(through: transport)
        #expect(try Self.photoCount(b) == 230)
        #expect(report.problems.count == 1, "\(report.problems)")
        try Self.insertPhotos(a, prefix: "q", count: 20, random: &random)
        try a.sync(through: transport)
        try b.sync(through: transport)
        #expect(try Self.photoCount(b) == 250)
    }

    @Test("a receiver publishes none of the rows it received, and a 1% edit settles in about its own bytes")
    func receiverDoesNotEcho() throws {
        var random = SeededRandom(defaultSeed: 13_03)
        try Self.insertPhotos(a, prefix: "p", count: 1_000, random: &random)
        for _ in 0..<2 {
            try a.sync(through: transport)
            try b.sync(through: transport)
        }
        #expect(try Self.published(by: "b", in: folder).values.reduce(0) { $0 + $1.rows } == 0)
        let initial = try Self.published(by: "a", in: folder)
        #expect(initial.values.reduce(0) { $0 + $1.rows } == 1_000)
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b))

        // A 1% edit on b: only b's 10 rows travel, once, and nothing comes back.
        try Self.write(
            b, "UPDATE photos SET title = 'edited ' || id WHERE id IN (SELECT id FROM photos ORDER BY id LIMIT 10)")
        for _ in 0..<2 {
            try b.sync(through: transport)
            try a.sync(through: transport)
        }
        #expect(try Fixture.snapshot(a) == Fixture.snapshot(b))
        let fromA = try Self.published(by: "a", in: folder).filter { initial[$0.key] == nil }
        let fromB = try Self.published(by: "b", in: folder)
        #expect(fromA.values.reduce(0) { $0 + $1.rows } == 0)
        #expect(fromB.values.reduce(0) { $0 + $1.rows } == 10)
        // Each edited row carries its title only: a few dozen bytes, not the row's embedding.
        let moved = (Array(fromA.values) + Array(fromB.values)).reduce(0) { $0 + $1.bytes }
        let initialBytes = initial.values.reduce(0) { $0 + $1.bytes }
        #expect(
            moved < 10 * initialBytes / 1_000 + 1_024,
            "moved \(moved) bytes to settle; all 1,000 rows took \(initialBytes)")
    }

    @Test("INSERT OR REPLACE of an unchanged row captures nothing; of a changed row, the change")
    func replaceOfUnchangedRowIsNotAChange() throws {
        try Self.write(a, "INSERT INTO photos (id, title, rating) VALUES ('p1', 'one', 1)")
        let before = try a.currentSequence()
        try Self.write(a, "INSERT OR REPLACE INTO photos (id, title, rating) VALUES ('p1', 'one', 1)")
        #expect(try a.currentSequence() == before)
        #expect(try a.changes(since: before).isEmpty)
        // Nothing else is hidden: a duplicate plain INSERT still fails, an OR IGNORE leaves
        // no trace, and a REPLACE that changes a value is captured.
        #expect(throws: DatabaseError.self) {
            try Self.write(a, "INSERT INTO photos (id, title, rating) VALUES ('p1', 'one', 1)")
        }
        try Self.write(a, "INSERT OR IGNORE INTO photos (id, title, rating) VALUES ('p1', 'one', 1)")
        try Self.write(a, "INSERT OR REPLACE INTO photos (id, title, rating) VALUES ('p1', 'one', 2)")
        let changes = try a.changes(since: before)
        #expect(changes.records.count == 1)
        #expect(try a.currentSequence() > before)
    }
}
