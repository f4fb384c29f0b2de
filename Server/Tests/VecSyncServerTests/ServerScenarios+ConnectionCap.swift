import Foundation
import ServerFixtures
import Testing
import VecSyncServer

extension ServerScenarios {
    /// With every connection place taken by idle clients, one more is closed at once, and
    /// served again once a place is free: idle connections cannot lock the others out for
    /// longer than they hold their places (the idle timeout bounds that).
    static func connectionsPastTheCapAreClosed(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        var limits = SyncServer.Limits()
        limits.maximumConnections = 3
        let server = try await RunningServer.start(test.store, limits: limits)
        let (space, tokens) = try await makeSpace(test.store, "cap")
        let port = server.url.port ?? 0
        let request =
            "GET /v1/spaces/\(space)/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tokens[0])\r\n\r\n"
        // Three clients, each served once and then idle, connection kept.
        var held: [RawConnection] = []
        for _ in 0..<3 {
            let (connection, answer) = try await blocking {
                let connection = try RawConnection(port: port, timeout: .seconds(5))
                connection.send(request)
                return (connection, connection.answer())
            }
            #expect(answer == .status(200), "\(backEnd): \(answer)")
            held.append(connection)
        }
        let refused = try await blocking {
            let connection = try RawConnection(port: port, timeout: .seconds(5))
            connection.send(request)
            return connection.answer()
        }
        #expect(refused == .closed, "\(backEnd): a fourth connection: \(refused)")
        held.removeLast()
        // The place is given back once the server sees the close.
        var answer = RawConnection.Answer.closed
        for _ in 0..<50 where answer != .status(200) {
            try await Task.sleep(for: .milliseconds(100))
            answer = try await blocking {
                let connection = try RawConnection(port: port, timeout: .seconds(5))
                connection.send(request)
                return connection.answer()
            }
        }
        #expect(answer == .status(200), "\(backEnd): after a client left: \(answer)")
        held.removeAll()
        await server.stop()
        await test.close()
    }
}
