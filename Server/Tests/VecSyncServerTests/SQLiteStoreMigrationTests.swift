import Foundation
import Testing
import VecSyncCore
import VecSyncReplication
import VecSyncServer
import ServerTestSupport

/// A SQLite store made by an earlier server opens with today's layout: `prepare()` adds the
/// columns it lacks, keeps its rows, and does nothing the second time.
@Suite("SQLite store migration")
struct SQLiteStoreMigrationTests {
    @Test func changeSetsWithoutTheDamagedMarkGainItUnmarked() async throws {
        let body = Data("0-5".utf8)
        // The change set table as servers made it before damaged change sets were recorded.
        let directory = try await storeMadeEarlier { db in
            try db.execute(
                sql: """
                    CREATE TABLE change_sets (
                      space_id INTEGER NOT NULL REFERENCES spaces(id), seq INTEGER NOT NULL, origin TEXT NOT NULL,
                      since INTEGER NOT NULL, through INTEGER NOT NULL, rows INTEGER NOT NULL, size INTEGER NOT NULL,
                      sha256 TEXT NOT NULL, received_at INTEGER NOT NULL, body BLOB NOT NULL,
                      PRIMARY KEY (space_id, seq), UNIQUE (space_id, origin, since, through));
                    INSERT INTO spaces (id, name, created_at, last_seq) VALUES (1, 'old', 1, 1);
                    """)
            try db.execute(
                sql: """
                    INSERT INTO change_sets (space_id, seq, origin, since, through, rows, size, sha256, received_at, body)
                    VALUES (1, 1, 'o', 0, 5, 1, ?, ?, 1, ?)
                    """, arguments: [body.count, sha256Hex(body), body])
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteServerStore(directory: directory)
        try await store.prepare()
        try await store.prepare()
        _ = try await store.registerDevice(DeviceRegistration(site: "o", name: "n", platform: "p"), inSpace: 1, at: 2)
        #expect(try await store.devices(inSpace: 1).map(\.damaged) == [nil])
        try await store.markDamaged(inSpace: 1, seq: 1, sha256: sha256Hex(body))
        #expect(
            try await store.devices(inSpace: 1).map(\.damaged) == [
                [ServerDamagedChangeSet(seq: 1, since: 0, through: 5)]
            ]
        )
        #expect(try await store.changeSet(inSpace: 1, seq: 1)?.body == body)
        await store.close()
    }

    @Test func snapshotsWithoutPartsStayWholeAndGainTheColumn() async throws {
        let body = Data("folded".utf8)
        // The snapshot table as servers made it before snapshots in parts.
        let directory = try await storeMadeEarlier { db in
            try db.execute(
                sql: """
                    CREATE TABLE snapshots (
                      space_id INTEGER PRIMARY KEY REFERENCES spaces(id), seq INTEGER NOT NULL, heads TEXT NOT NULL,
                      rows INTEGER NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL, created_at INTEGER NOT NULL,
                      compacted_through INTEGER NOT NULL DEFAULT 0, body BLOB NOT NULL);
                    INSERT INTO spaces (id, name, created_at, last_seq) VALUES (1, 'old', 1, 4);
                    """)
            try db.execute(
                sql: """
                    INSERT INTO snapshots (space_id, seq, heads, rows, size, sha256, created_at, compacted_through, body)
                    VALUES (1, 4, '{"o":9}', 3, ?, ?, 1, 2, ?)
                    """, arguments: [body.count, sha256Hex(body), body])
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteServerStore(directory: directory)
        try await store.prepare()
        try await store.prepare()
        let entry = try #require(try await store.snapshotEntry(inSpace: 1))
        #expect(entry.parts == nil && entry.seq == 4 && entry.heads == ["o": 9] && entry.compactedThrough == 2)
        #expect(try await store.snapshotBytes(inSpace: 1, seq: 4, part: nil, range: 0..<body.count) == body)
        #expect(try await store.snapshotBytes(inSpace: 1, seq: 4, part: 0, range: 0..<1) == nil)
        // A part of a snapshot this far or older is refused; one further is kept until an
        // entry names it or passes it.
        #expect(try await store.saveSnapshotPart(body, part: 0, seq: 4, inSpace: 1) == false)
        #expect(try await store.saveSnapshotPart(body, part: 0, seq: 5, inSpace: 1))
        #expect(try await store.saveSnapshotPart(body, part: 1, seq: 6, inSpace: 1))
        let parts = [ServerSnapshotPart(rows: 1, size: Int64(body.count), sha256: sha256Hex(body))]
        var next = entry
        next.seq = 5
        next.parts = parts
        #expect(try await store.saveSnapshot(next, body: Data(), inSpace: 1))
        #expect(try await store.snapshotEntry(inSpace: 1)?.parts == parts)
        #expect(try await store.snapshotBytes(inSpace: 1, seq: 5, part: 0, range: 0..<body.count) == body)
        #expect(try await store.snapshotBytes(inSpace: 1, seq: 6, part: 1, range: 0..<body.count) == body)
        await store.close()
    }

    /// A folder holding a store whose tables `make` lays out as an earlier server did, beside
    /// the space table every server made.
    private func storeMadeEarlier(_ make: @escaping @Sendable (Database) throws -> Void) async throws -> URL {
        let directory = try temporaryDirectory("server-migration")
        let old = try DatabaseQueue(path: directory.appendingPathComponent("vecsync-server.sqlite").path)
        try await old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE spaces (
                      id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL,
                      last_seq INTEGER NOT NULL DEFAULT 0);
                    """)
            try make(db)
        }
        try old.close()
        return directory
    }
}
