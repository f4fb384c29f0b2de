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
        let directory = try temporaryDirectory("server-migration")
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = Data("0-5".utf8)
        // The change set table as servers made it before damaged change sets were recorded.
        let old = try DatabaseQueue(path: directory.appendingPathComponent("vecsync-server.sqlite").path)
        try await old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE spaces (
                      id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL,
                      last_seq INTEGER NOT NULL DEFAULT 0);
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
        try old.close()

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
}
