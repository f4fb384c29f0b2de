import Foundation
import ServerFixtures
import Testing
import VecSyncServer

extension ServerScenarios {
    /// One token's downloads in flight are capped (2 here): with two connections that never
    /// read holding its places, one more download of that token gets 429
    /// `too-many-downloads` with `Retry-After` at once, another token still downloads, and
    /// closing the two gives the places back.
    static func downloadsPerTokenAreCapped(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        var limits = SyncServer.Limits()
        limits.downloadsPerToken = 2
        let server = try await RunningServer.start(test.store, limits: limits)
        let (space, tokens) = try await makeSpace(test.store, "slots", tokens: 2)
        let spaceID = try await spaceID(test.store, tokens[0])
        _ = try await test.store.registerDevice(
            DeviceRegistration(site: "o", name: "n", platform: "p"), inSpace: spaceID, at: 1)
        // 16 MiB: more than the sockets' buffers take while nobody reads (their receive
        // buffers kept small below).
        let body = Data(repeating: 7, count: 16 << 20)
        _ = try await test.store.push(
            IncomingChangeSet(origin: "o", since: 0, through: 1, rows: 1, sha256: sha256Hex(body), body: body),
            inSpace: spaceID, at: 2)
        let port = server.url.port ?? 0
        let url = server.url.appendingPathComponent("v1/spaces/\(space)/changesets/1")
        let head = "GET /v1/spaces/\(space)/changesets/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tokens[0])\r\n\r\n"
        // One after the other, each holding its place once its answer has begun, before any
        // other download is asked for.
        var unread = try await blocking {
            try (0..<2).map { _ in
                let connection = try RawConnection(port: port, timeout: .seconds(10))
                connection.limitReceiveBuffer(4096)
                _ = connection.send(head)
                return (connection, connection.peekStatus())
            }
        }
        let begun = unread.map(\.1)
        #expect(begun == [200, 200], "\(backEnd): the unread downloads began with \(begun)")
        /// The first answer to a download by `token` with `status`, asked every 100 ms for 10 s.
        func waitFor(_ status: Int, token: String) async throws -> RawAnswer {
            var answer = try await raw("GET", url, token: token)
            for _ in 0..<100 where answer.status != status {
                try await Task.sleep(for: .milliseconds(100))
                answer = try await raw("GET", url, token: token)
            }
            return answer
        }
        let refused = try await waitFor(429, token: tokens[0])
        #expect(
            refused.status == 429 && refused.errorCode == "too-many-downloads" && refused.headers["retry-after"] == "1",
            "\(backEnd): \(refused.status) \(refused.json ?? [:])")
        let other = try await raw("GET", url, token: tokens[1])
        #expect(other.status == 200 && other.body == body, "\(backEnd): another token got \(other.status)")
        unread.removeAll()
        let again = try await waitFor(200, token: tokens[0])
        #expect(again.status == 200 && again.body == body, "\(backEnd): after closing, \(again.status)")
        await server.stop()
        await test.close()
    }
}
