import Foundation
import ServerFixtures
import Testing
import VecSyncServer

extension ServerScenarios {
    /// The head of a push of 100,000 bytes to `space` with `token`, its body still to come.
    static func uploadHead(_ space: String, _ token: String) -> String {
        "POST /v1/spaces/\(space)/changesets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "X-VecSync-SHA256: \(String(repeating: "0", count: 64))\r\nContent-Length: 100000\r\n\r\n"
    }

    /// Connections that hold the server without using it — half a header, an upload stopped
    /// half way, an idle keep-alive connection — are closed once idle for the limit, and a
    /// stalled upload does not hold the server's shutdown.
    static func stalledClientsAreDropped(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        var limits = SyncServer.Limits()
        limits.idleTimeout = .seconds(1)
        let server = try await RunningServer.start(test.store, limits: limits)
        let (space, tokens) = try await makeSpace(test.store, "stalled")
        let port = server.url.port ?? 0
        let status =
            "GET /v1/spaces/\(space)/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tokens[0])\r\n\r\n"
        let upload = uploadHead(space, tokens[0])
        let cases: [(String, @Sendable (RawConnection) -> Void)] = [
            ("half a header", { $0.send("GET /v1/spa") }),
            ("an upload stopped half way", { $0.send(upload + String(repeating: "x", count: 1000)) }),
            (
                "an idle keep-alive connection",
                { connection in
                    connection.send(status)
                    _ = connection.answer()
                }
            ),
        ]
        for (name, start) in cases {
            let (closed, elapsed) = try await blocking {
                let connection = try RawConnection(port: port, timeout: .seconds(10))
                start(connection)
                let began = ContinuousClock.now
                return (connection.isClosedByServer(), ContinuousClock.now - began)
            }
            #expect(closed && elapsed < .seconds(8), "\(backEnd), \(name): closed \(closed) after \(elapsed)")
        }
        // A stalled upload open while the server stops: the stop ends anyway.
        let stalled = try await blocking {
            let connection = try RawConnection(port: port, timeout: .seconds(10))
            connection.send(upload)
            return connection
        }
        let began = ContinuousClock.now
        await server.stop()
        #expect(ContinuousClock.now - began < .seconds(10), "\(backEnd): the stop waited for a stalled upload")
        _ = stalled
        await test.close()
    }

    /// An upload that trickles a byte every 200 ms is never idle, so the idle limit cannot
    /// close it; a graceful stop still ends within its deadline (1 s here), closing it.
    static func shutdownHasADeadline(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        var limits = SyncServer.Limits()
        (limits.idleTimeout, limits.shutdownDeadline) = (.seconds(60), .seconds(1))
        let server = try await RunningServer.start(test.store, limits: limits)
        let (space, tokens) = try await makeSpace(test.store, "deadline")
        let port = server.url.port ?? 0
        let connection = try await blocking { try RawConnection(port: port, timeout: .seconds(30)) }
        _ = connection.send(uploadHead(space, tokens[0]))
        // A byte every 200 ms for up to 20 s, until the server closes the connection.
        let trickle = Task.detached {
            for _ in 0..<100 {
                try await Task.sleep(for: .milliseconds(200))
                if !connection.send("x") { return }
            }
        }
        try await Task.sleep(for: .milliseconds(600))
        let began = ContinuousClock.now
        await server.stop()
        let elapsed = ContinuousClock.now - began
        #expect(elapsed < .seconds(5), "\(backEnd): the stop waited \(elapsed) for a trickling upload")
        trickle.cancel()
        await test.close()
    }

    /// Four uploads announcing 64 MiB and trickling a byte every 200 ms hold a few bytes of a
    /// 1 MiB body budget, not all of it: a push of 500 KiB meanwhile goes through to the route
    /// at once (400: its bytes are not a change set), where waiting for the budget would have
    /// taken its wait (2 s here) and a 503, the trickles holding it for their grace (3 s here).
    /// Once the grace is over, each is refused with 408 `too-slow` at its next byte, slower
    /// than 1,000 bytes a second, and its connection is closed.
    static func slowUploadsHoldNothing(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        var limits = SyncServer.Limits(requestsPerSecond: 0)
        limits.bodyBudgetBytes = 1 << 20
        limits.bodyWait = .seconds(2)
        (limits.minimumBodyRate, limits.bodyGrace) = (1000, .seconds(3))
        let server = try await RunningServer.start(test.store, limits: limits)
        let (space, tokens) = try await makeSpace(test.store, "trickle")
        let port = server.url.port ?? 0
        let head =
            "POST /v1/spaces/\(space)/changesets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tokens[0])\r\n"
            + "X-VecSync-SHA256: \(String(repeating: "0", count: 64))\r\nContent-Length: \(64 << 20)\r\n\r\n"
        let trickles = (0..<4).map { _ in
            Task.detached { () -> (RawConnection.Answer, Bool) in
                let connection = try RawConnection(port: port, timeout: .seconds(10))
                connection.send(head)
                for _ in 0..<50 {
                    try await Task.sleep(for: .milliseconds(200))
                    if !connection.send("x") { break }
                }
                return try await blocking { (connection.answer(), connection.isClosedByServer()) }
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        let body = Data(repeating: 7, count: 500 << 10)
        let began = ContinuousClock.now
        let served = try await raw(
            "POST", server.url.appendingPathComponent("v1/spaces/\(space)/changesets"), token: tokens[0],
            headers: ["X-VecSync-SHA256": sha256Hex(body), "Content-Type": "application/vnd.vecsync.changeset"],
            body: body)
        #expect(served.status == 400 && served.errorCode == "malformed", "\(backEnd): \(served.status)")
        let took = ContinuousClock.now - began
        #expect(took < .milliseconds(1500), "\(backEnd): the push waited \(took) for the trickles")
        for trickle in trickles {
            let (answer, closed) = try await trickle.value
            #expect(answer == .status(408) && closed, "\(backEnd): a trickling upload got \(answer), closed \(closed)")
        }
        await server.stop()
        await test.close()
    }
}
