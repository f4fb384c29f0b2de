import Foundation
import ServerFixtures
import Testing
import VecSyncServer

extension ServerScenarios {
    /// Runs `body` with a server of `places` connection places, its port, and a status
    /// request of a valid token of a new space labelled `label`.
    private static func withPlaces(
        _ places: Int, _ backEnd: BackEnd, _ label: String,
        _ body: (_ port: Int, _ request: String) async throws -> Void
    ) async throws {
        let test = try await TestStore.make(backEnd)
        var limits = SyncServer.Limits()
        limits.maximumConnections = places
        let server = try await RunningServer.start(test.store, limits: limits)
        let (space, tokens) = try await makeSpace(test.store, label)
        let request =
            "GET /v1/spaces/\(space)/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tokens[0])\r\n\r\n"
        try await body(server.url.port ?? 0, request)
        await server.stop()
        await test.close()
    }

    /// With every connection place taken by clients served a moment ago (none silent, none
    /// idle for a second), one more is closed at once, and served again once a place is free.
    static func connectionsPastTheCapAreClosed(_ backEnd: BackEnd) async throws {
        try await withPlaces(3, backEnd, "cap") { port, request in
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
        }
    }

    /// With 16 places, a client that holds all of them with connections that send nothing,
    /// reopening each as soon as it is closed, does not lock a device out: the device's 10
    /// requests, each on a new connection, take the places of silent connections and are
    /// answered 200 (at least 8 of them: see the race below).
    static func idleConnectionsGiveWayToDevices(_ backEnd: BackEnd) async throws {
        try await withPlaces(16, backEnd, "reserve") { port, request in
            let until = ContinuousClock.now.advanced(by: .seconds(6))
            // Each holder on a thread of its own: its reads block.
            let holders = (0..<16).map { _ in
                Task {
                    try await blocking { () -> Int in
                        var opened = 0
                        while ContinuousClock.now < until {
                            guard let connection = try? RawConnection(port: port, timeout: .seconds(1)) else {
                                continue
                            }
                            opened += 1
                            while ContinuousClock.now < until, !connection.isClosedByServer() {}
                        }
                        return opened
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(1500))
            var answers: [RawConnection.Answer] = []
            for _ in 0..<10 {
                answers.append(
                    try await blocking {
                        let connection = try RawConnection(port: port, timeout: .seconds(5))
                        connection.send(request)
                        return connection.answer()
                    })
                try await Task.sleep(for: .milliseconds(100))
            }
            var opened = 0
            for holder in holders { opened += try await holder.value }
            // A device's new connection is silent until the server has read its request: under
            // load a holder's reconnection may take its place first, after every older silent
            // connection has given way. Nearly all must be served (before: 1 of 10).
            let served = answers.filter { $0 == .status(200) }.count
            #expect(served >= 8, "\(backEnd): \(served) of 10 served: \(answers)")
            #expect(opened > 16, "\(backEnd): the holder's connections were never closed (\(opened) opened)")
        }
    }
}
