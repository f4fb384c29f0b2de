import Foundation
import GRDB
import ServerFixtures
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer
import VecSyncHTTP

extension ServerScenarios {
    /// The server's store restored from a backup: a reader that had pulled past the backup's
    /// last sequence number notices (a new generation) and pulls again from the start, so it
    /// does not skip the change sets stored after the restore under the numbers it passed; the
    /// writer pushes again what the restored store lost. No row is lost anywhere.
    /// SQLite: `backup` (VACUUM INTO, with a new generation) and the file put back.
    /// PostgreSQL: `pg_dump`, `pg_restore` into a new database, then `newEpoch()`.
    static func restoredStoreLosesNoRows(_ backEnd: BackEnd) async throws {
        try await restore(backEnd, newGeneration: true)
    }

    /// The same, restored from a raw copy that keeps the old generation: SQLite's file copied
    /// with `VACUUM INTO` behind the server's back (as a filesystem snapshot or Litestream
    /// would give it), PostgreSQL's `pg_restore` without `new-epoch`. The devices that pushed
    /// after the restore take the numbers the reader had passed, and more: the reader finds
    /// another change set at its cursor and lists again from the start.
    static func rawCopyRestoreLosesNoRows(_ backEnd: BackEnd) async throws {
        try await restore(backEnd, newGeneration: false)
    }

    private static func restore(_ backEnd: BackEnd, newGeneration: Bool) async throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_0024)
        let seed = random.seed
        let directory = try temporaryDirectory("restore")
        defer { try? FileManager.default.removeItem(at: directory) }
        var postgresURL: String?
        var store: any ServerStore
        switch backEnd {
        case .sqlite:
            store = try SQLiteServerStore(directory: directory.appendingPathComponent("live"))
        case .postgres:
            guard let url = BackEnd.postgresURL else { throw ServerConfigurationError("no PostgreSQL") }
            let database = uniqueSpace("restore-source").replacingOccurrences(of: "-", with: "_")
            try PostgresTools.run("createdb", ["--maintenance-db=\(url)", database])
            postgresURL = try PostgresTools.url(url, database: database)
            store = try PostgresServerStore(url: postgresURL ?? "")
        }
        try await store.prepare()
        var server = try await RunningServer.start(store)
        let (space, tokens) = try await makeSpace(store, "restore", tokens: 3)
        let writer = try PhotoDevice("writer", options: Replica.Options(maximumBatchRows: 10))
        let reader = try PhotoDevice("reader", options: Replica.Options(maximumBatchRows: 10))
        let latecomer = try PhotoDevice("latecomer", options: Replica.Options(maximumBatchRows: 10))
        @Sendable func sync(_ device: PhotoDevice, _ token: String, _ server: RunningServer) async throws {
            var transport = HTTPTransport(server: server.url, space: space, token: token)
            transport.pageSize = 5
            let configured = transport
            let report = try await device.sync(through: configured)
            #expect(report.problems.isEmpty, "seed \(seed), \(device.name): \(report.problems)")
        }
        try writer.addPhotos(20, prefix: "before", random: &random)
        try await sync(writer, tokens[0], server)
        try await sync(reader, tokens[1], server)
        let epochBefore = try await store.epoch()

        // The backup, taken while the server serves.
        let backupFile = directory.appendingPathComponent("backup.sqlite").path
        switch backEnd {
        case .sqlite where newGeneration:
            let copyEpoch = try await (store as? SQLiteServerStore)?.backup(to: backupFile)
            #expect(copyEpoch != nil && copyEpoch != epochBefore, "the copy has a generation of its own")
        case .sqlite:
            let live = directory.appendingPathComponent("live/vecsync-server.sqlite").path
            try DatabaseQueue(path: live).inDatabase { db in
                try db.execute(sql: "VACUUM INTO ?", arguments: [backupFile])
            }
        case .postgres:
            try PostgresTools.run("pg_dump", ["--format=custom", "--file=\(backupFile)", postgresURL ?? ""])
        }
        let spaceID = try await spaceID(store, tokens[0])
        let backupLastSeq = try await store.lastSequence(inSpace: spaceID)

        // After the backup: the writer adds 15 photos, the reader pulls past the backup.
        try writer.addPhotos(15, prefix: "lost", random: &random)
        try await sync(writer, tokens[0], server)
        try await sync(reader, tokens[1], server)
        #expect(try reader.photos.count() == 35, "seed \(seed)")
        let readerCursor = try reader.replica.publishedThrough(
            to: HTTPTransport(server: server.url, space: space, token: tokens[1]).pullCursorKey(
                storeID: try await store.storeID()))
        #expect(readerCursor > backupLastSeq, "the reader pulled past the backup")

        // The restore.
        await server.stop()
        await store.close()
        switch backEnd {
        case .sqlite:
            let live = directory.appendingPathComponent("live")
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(at: live.appendingPathComponent("vecsync-server.sqlite" + suffix))
            }
            try FileManager.default.copyItem(
                atPath: backupFile, toPath: live.appendingPathComponent("vecsync-server.sqlite").path)
            store = try SQLiteServerStore(directory: live)
            try await store.prepare()
        case .postgres:
            guard let url = BackEnd.postgresURL else { throw ServerConfigurationError("no PostgreSQL") }
            let database = uniqueSpace("restore-target").replacingOccurrences(of: "-", with: "_")
            try PostgresTools.run("createdb", ["--maintenance-db=\(url)", database])
            let restoredURL = try PostgresTools.url(url, database: database)
            try PostgresTools.run("pg_restore", ["--no-owner", "--dbname=\(restoredURL)", backupFile])
            store = try PostgresServerStore(url: restoredURL)
            try await store.prepare()
            if newGeneration { _ = try await store.newEpoch() }
        }
        if newGeneration {
            #expect(try await store.epoch() != epochBefore, "the restored store is a new generation")
        } else {
            #expect(try await store.epoch() == epochBefore, "a raw copy keeps the generation")
        }
        #expect(try await store.lastSequence(inSpace: spaceID) == backupLastSeq)
        server = try await RunningServer.start(store)

        // A device that never saw the old store pushes first: its change sets take the
        // numbers the reader had passed (from a raw copy, more of them than the reader
        // passed, so its cursor is not past the last one). Then everyone syncs twice.
        let late = newGeneration ? 10 : 40
        try latecomer.addPhotos(late, prefix: "late", random: &random)
        try await sync(latecomer, tokens[2], server)
        if !newGeneration {
            #expect(try await store.lastSequence(inSpace: spaceID) >= readerCursor, "seed \(seed)")
        }
        for _ in 0..<2 {
            try await sync(writer, tokens[0], server)
            try await sync(reader, tokens[1], server)
            try await sync(latecomer, tokens[2], server)
        }
        let reference = try writer.snapshot()
        #expect(reference.filter { $0.hasPrefix("photos ") }.count == 35 + late, "seed \(seed)")
        #expect(try reader.snapshot() == reference, "seed \(seed): the reader lost rows")
        #expect(try latecomer.snapshot() == reference, "seed \(seed): the latecomer lost rows")
        await server.stop()
        await store.close()
    }
}
