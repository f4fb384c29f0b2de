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
    /// which the client's own SHA-256 check of the whole catches), while a full download still
    /// checks and answers 409 `damaged`.
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
        let whole = try await raw("GET", download, token: tokens[0])
        #expect(whole.status == 409 && whole.errorCode == "damaged", "\(backEnd): \(whole.status)")
        await server.stop()
        await test.close()
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
