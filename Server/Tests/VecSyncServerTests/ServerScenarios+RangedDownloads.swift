import Foundation
import GRDB
import ServerFixtures
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer

extension ServerScenarios {
    /// Once a change set has been hashed whole and found intact, a byte range of it — from
    /// byte 0 too — is read from the store alone, not read whole and hashed again: with its
    /// stored bytes then damaged at rest, ranges are still served (their bytes as stored now,
    /// which the client's own SHA-256 check of the whole catches), while a full download,
    /// hashed as it streams, finds the damage and marks it: the next one gets 409 `damaged`.
    static func rangesAreReadAlone(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        let server = try await RunningServer.start(test.store, limits: SyncServer.Limits(requestsPerSecond: 0))
        let (space, tokens) = try await makeSpace(test.store, "ranges")
        var random = SeededRandom(defaultSeed: 0x5E4F_0024)
        let seed = random.seed
        let device = try PhotoDevice("ranger", options: Replica.Options(maximumBatchRows: 40))
        try device.addPhotos(30, prefix: "r", random: &random)
        let body = try device.replica.changes(since: 0).serialized()
        let base = server.url.appendingPathComponent("v1/spaces/\(space)")
        #expect(try await rawRegister(base, token: tokens[0], site: "ranger", name: "Ranger").status == 200)
        let pushed = try await rawPush(base, token: tokens[0], body: body)
        #expect(pushed.status == 201, "\(backEnd), seed \(seed): \(pushed.status)")
        let download = base.appendingPathComponent("changesets/1")
        func range(_ spec: String) async throws -> RawAnswer {
            try await raw("GET", download, token: tokens[0], headers: ["Range": "bytes=\(spec)"])
        }
        let first = try await range("0-99")
        #expect(first.status == 206 && first.body == body.prefix(100), "\(backEnd): \(first.status)")
        try await damageAtRest(test, backEnd, space: space, byte: 150)
        let again = try await range("0-99")
        #expect(
            again.status == 206 && again.body == body.prefix(100), "\(backEnd): \(again.status) \(again.json ?? [:])")
        let later = try await range("100-199")
        var damaged = body
        damaged[damaged.startIndex + 150] ^= 0xFF
        #expect(later.status == 206 && later.body == damaged[100..<200], "\(backEnd): \(later.status)")
        #expect(later.headers["content-range"] == "bytes 100-199/\(body.count)", "\(backEnd): \(later.headers)")
        let tail = try await range("-10")
        #expect(tail.status == 206 && tail.body == body.suffix(10), "\(backEnd): \(tail.status)")
        // Found intact before, the change set is hashed as it streams: this answer carries the
        // damaged bytes (the client's SHA-256 check refuses them) and marks it damaged, and
        // the next download is refused.
        let whole = try await raw("GET", download, token: tokens[0])
        #expect(whole.status == 200 && whole.body == damaged, "\(backEnd): \(whole.status)")
        let spaceID = try #require(try await test.store.spaces().first { $0.name == space }?.id)
        let marked = try await test.store.devices(inSpace: spaceID).first { $0.site == "ranger" }?.damaged
        #expect(marked?.map(\.seq) == [1], "\(backEnd): \(String(describing: marked))")
        let refused = try await raw("GET", download, token: tokens[0])
        #expect(refused.status == 409 && refused.errorCode == "damaged", "\(backEnd): \(refused.status)")
        try await snapshotRangesAreReadAlone(test, backEnd, server: server, space: space, token: tokens[0])
        await server.stop()
        await test.close()
    }

    /// A byte range of a snapshot is read from the store alone (incremental blob I/O, or
    /// PostgreSQL's `substring`): its bytes are those of the whole download; an unsatisfiable
    /// range is 416 with the size; another snapshot's `seq` is 404.
    private static func snapshotRangesAreReadAlone(
        _ test: TestStore, _ backEnd: BackEnd, server: RunningServer, space: String, token: String
    ) async throws {
        let spaceID = try #require(try await test.store.spaces().first { $0.name == space }?.id)
        let snapshot = ServerSnapshot(
            seq: 1, heads: ["ranger": 30], rows: 30, size: 300_000, sha256: sha256Hex(Data()), createdAt: 5,
            compactedThrough: 0)
        var random = SeededRandom(defaultSeed: 0x5E4F_0025)
        let bytes = Data((0..<snapshot.size).map { _ in UInt8.random(in: 0...255, using: &random) })
        #expect(try await test.store.saveSnapshot(snapshot, body: bytes, inSpace: spaceID))
        let url = server.url.appendingPathComponent("v1/spaces/\(space)/snapshot/1")
        for (spec, expected) in [("0-0", 0..<1), ("1000-2023", 1000..<2024), ("299990-", 299_990..<300_000)] {
            let part = try await raw("GET", url, token: token, headers: ["Range": "bytes=\(spec)"])
            #expect(part.status == 206 && part.body == bytes[expected], "\(backEnd), \(spec): \(part.status)")
            #expect(
                part.headers["content-range"]
                    == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/\(snapshot.size)",
                "\(backEnd): \(part.headers)")
        }
        let whole = try await raw("GET", url, token: token)
        #expect(whole.status == 200 && whole.body == bytes, "\(backEnd): \(whole.status)")
        let past = try await raw("GET", url, token: token, headers: ["Range": "bytes=300000-300010"])
        #expect(past.status == 416 && past.errorCode == "bad-range", "\(backEnd): \(past.status)")
        #expect(past.headers["content-range"] == "bytes */300000", "\(backEnd): \(past.headers)")
        let other = server.url.appendingPathComponent("v1/spaces/\(space)/snapshot/2")
        let missing = try await raw("GET", other, token: token, headers: ["Range": "bytes=0-9"])
        #expect(missing.status == 404 && missing.errorCode == "not-found", "\(backEnd): \(missing.status)")
    }

    /// Flips every bit of byte `byte` of change set 1 of `space`, behind the server's back.
    private static func damageAtRest(_ test: TestStore, _ backEnd: BackEnd, space: String, byte: Int) async throws {
        switch backEnd {
        case .sqlite:
            let path = try #require((test.store as? SQLiteServerStore)?.path)
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                let sql =
                    "SELECT body FROM change_sets WHERE seq = 1 AND space_id = (SELECT id FROM spaces WHERE name = ?)"
                var body = try #require(try Data.fetchOne(db, sql: sql, arguments: [space]))
                body[body.startIndex + byte] ^= 0xFF
                try db.execute(
                    sql:
                        "UPDATE change_sets SET body = ? WHERE seq = 1 AND space_id = (SELECT id FROM spaces WHERE name = ?)",
                    arguments: [body, space])
            }
            try queue.close()
        case .postgres:
            let url = try #require(BackEnd.postgresURL)
            try PostgresTools.run(
                "psql",
                [
                    url, "-c",
                    """
                    UPDATE change_sets SET body = overlay(body placing
                      set_byte('\\x00'::bytea, 0, get_byte(body, \(byte)) # 255) from \(byte + 1) for 1)
                    WHERE seq = 1 AND space_id = (SELECT id FROM spaces WHERE name = '\(space)')
                    """,
                ])
        }
    }
}
