import Foundation
import ServerFixtures
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer

extension ServerScenarios {
    /// A token no space has.
    static let unknownToken = "vst_" + String(repeating: "f", count: 64)

    /// Requests without a valid token are counted per client address: past the burst the
    /// address is held, and its requests get 429 with `Retry-After` before any token is looked
    /// up, except those bearing a token this process found valid (a scanner behind the same
    /// NAT locks out no device) and, within the process-wide allowance of held lookups, one
    /// well-formed token not seen yet (a device's first request). A held address's 429 waits
    /// (300 ms here) before it is sent. Another address (through `X-Forwarded-For`, when
    /// trusted) is not held back, and valid requests never count.
    static func authFailuresAreLimitedPerAddress(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        var limits = SyncServer.Limits(requestsPerSecond: 0)
        limits.authFailuresPerSecond = 0.01
        limits.authFailureBurst = 3
        limits.heldLookupsPerSecond = 0.01
        limits.heldAnswerDelay = .milliseconds(300)
        limits.trustForwardedFor = true
        let server = try await RunningServer.start(test.store, limits: limits)
        let (space, tokens) = try await makeSpace(test.store, "auth-failures", tokens: 2)
        let status = server.url.appendingPathComponent("v1/spaces/\(space)/status")
        let scanner = ["X-Forwarded-For": "203.0.113.7"]
        // Valid requests take nothing from the address's bucket.
        for _ in 0..<5 { #expect(try await raw("GET", status, token: tokens[0], headers: scanner).status == 200) }
        var codes: [Int] = []
        for token in [Self.unknownToken, nil, "vst_short"] {
            codes.append(try await raw("GET", status, token: token, headers: scanner).status)
        }
        #expect(codes == [401, 401, 401], "\(backEnd): \(codes)")
        // Held: a valid token not seen yet takes the one held lookup there is, and goes on.
        let first = try await raw("GET", status, token: tokens[1], headers: scanner)
        #expect(first.status == 200, "\(backEnd): a device's first request from a held address: \(first.status)")
        for token in [Self.unknownToken, nil] {
            let asked = ContinuousClock.now
            let held = try await raw("GET", status, token: token, headers: scanner)
            let waited = ContinuousClock.now - asked
            #expect(held.status == 429, "\(backEnd): \(held.status)")
            #expect(waited >= .milliseconds(300), "\(backEnd): a held address's 429 came after \(waited)")
            #expect(held.errorCode == "rate-limited")
            #expect(Int(held.headers["retry-after"] ?? "") ?? 0 >= 1, "\(backEnd): \(held.headers)")
        }
        // Tokens known valid go on while the address is held.
        for token in tokens {
            let known = try await raw("GET", status, token: token, headers: scanner)
            #expect(known.status == 200, "\(backEnd): a valid token from the held address: \(known.status)")
        }
        // Another address goes on.
        let other = ["X-Forwarded-For": "198.51.100.1, 203.0.113.9"]
        #expect(try await raw("GET", status, token: tokens[0], headers: other).status == 200)
        #expect(try await raw("GET", status, token: Self.unknownToken, headers: other).status == 401)
        await server.stop()
        await test.close()
    }

    /// A held address's 429 waits (2 s here) only while fewer than half the connection places
    /// are taken: with 2 of 4 places held by silent connections it is sent at once, so
    /// waiting answers cannot keep devices out.
    static func heldAnswersWaitOnlyWhilePlacesAreFree(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        var limits = SyncServer.Limits(requestsPerSecond: 0)
        (limits.authFailuresPerSecond, limits.authFailureBurst) = (0.01, 1)
        (limits.heldAnswerDelay, limits.maximumConnections) = (.seconds(2), 4)
        let server = try await RunningServer.start(test.store, limits: limits)
        let (space, _) = try await makeSpace(test.store, "held-delay")
        let status = server.url.appendingPathComponent("v1/spaces/\(space)/status")
        // Without a token: a well-formed one may still be looked up while held.
        #expect(try await raw("GET", status).status == 401)
        func timedHeld() async throws -> Duration {
            let asked = ContinuousClock.now
            let answer = try await raw("GET", status)
            #expect(answer.status == 429, "\(backEnd): \(answer.status)")
            return ContinuousClock.now - asked
        }
        let free = try await timedHeld()
        #expect(free >= .seconds(2), "\(backEnd): with places free the 429 came after \(free)")
        let port = server.url.port ?? 0
        let silent = try await blocking { try (0..<2).map { _ in try RawConnection(port: port, timeout: .seconds(10)) } }
        try await Task.sleep(for: .milliseconds(200))
        let short = try await timedHeld()
        #expect(short < .seconds(1), "\(backEnd): with half the places taken the 429 came after \(short)")
        _ = silent
        await server.stop()
        await test.close()
    }

    /// Request bodies are charged to the server's body budget as they are read, within a share
    /// for each space. With a 1 MiB budget, a 600 KiB share and an upload of space A stalled
    /// after 550 KiB: another push of A (100 KiB) finds its share full and gets 503 `busy` with
    /// `Retry-After`; a push of space B (400 KiB) goes through to the route (400: its bytes are
    /// not a change set), one of 500 KiB finds the whole budget full (503). Once the stalled
    /// upload's connection closes, A's push goes through.
    static func bodiesWaitForTheBodyBudget(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        var limits = SyncServer.Limits(requestsPerSecond: 0)
        limits.bodyBudgetBytes = 1 << 20
        limits.spaceBodyBytes = 600 << 10
        limits.bodyWait = .milliseconds(500)
        let server = try await RunningServer.start(test.store, limits: limits)
        let (spaceA, tokensA) = try await makeSpace(test.store, "budget-a")
        let (spaceB, tokensB) = try await makeSpace(test.store, "budget-b")
        func push(_ space: String, _ token: String, kib: Int) async throws -> RawAnswer {
            let body = Data(repeating: 7, count: kib << 10)
            let headers = ["X-VecSync-SHA256": sha256Hex(body), "Content-Type": "application/vnd.vecsync.changeset"]
            return try await raw(
                "POST", server.url.appendingPathComponent("v1/spaces/\(space)/changesets"), token: token,
                headers: headers, body: body)
        }
        let port = server.url.port ?? 0
        let head =
            "POST /v1/spaces/\(spaceA)/changesets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tokensA[0])\r\n"
            + "X-VecSync-SHA256: \(String(repeating: "0", count: 64))\r\nContent-Length: \(1000 << 10)\r\n\r\n"
        var stalled: RawConnection? = try await blocking {
            let connection = try RawConnection(port: port)
            connection.send(head + String(repeating: "x", count: 550 << 10))
            return connection
        }
        try await Task.sleep(for: .milliseconds(300))
        let sameSpace = try await push(spaceA, tokensA[0], kib: 100)
        #expect(
            sameSpace.status == 503 && sameSpace.errorCode == "busy",
            "\(backEnd): \(sameSpace.status) \(sameSpace.json ?? [:])")
        #expect(sameSpace.headers["retry-after"] != nil)
        let otherSpace = try await push(spaceB, tokensB[0], kib: 400)
        #expect(otherSpace.status == 400 && otherSpace.errorCode == "malformed", "\(backEnd): \(otherSpace.status)")
        let pastBudget = try await push(spaceB, tokensB[0], kib: 500)
        #expect(pastBudget.status == 503 && pastBudget.errorCode == "busy", "\(backEnd): \(pastBudget.status)")
        stalled = nil
        try await Task.sleep(for: .milliseconds(300))
        let served = try await push(spaceA, tokensA[0], kib: 100)
        #expect(served.status == 400 && served.errorCode == "malformed", "\(backEnd): \(served.status)")
        _ = stalled
        await server.stop()
        await test.close()
    }

    /// `GET /metrics` needs the metrics token (403 without one configured, 401 for another)
    /// and counts requests by route template and status; each request gets one access-log
    /// line with method, route, status, bytes, time and space, and no token in it.
    static func metricsAndAccessLog(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        let log = CollectedLog()
        let metricsToken = "metrics-" + UUID().uuidString
        let server = try await RunningServer.start(test.store, logger: log.logger(), metricsToken: metricsToken)
        let (space, tokens) = try await makeSpace(test.store, "metrics")
        let status = server.url.appendingPathComponent("v1/spaces/\(space)/status")
        #expect(try await raw("GET", status, token: tokens[0]).status == 200)
        #expect(try await raw("GET", status, token: Self.unknownToken).status == 401)
        let metricsURL = server.url.appendingPathComponent("metrics")
        #expect(try await raw("GET", metricsURL, token: tokens[0]).status == 401)
        let metrics = try await raw("GET", metricsURL, token: metricsToken)
        #expect(metrics.status == 200, "\(backEnd): \(metrics.status)")
        let text = String(decoding: metrics.body, as: UTF8.self)
        for expected in [
            #"vecsync_http_requests_total{route="/v1/spaces/{space}/status",method="GET",status="200"} 1"#,
            #"vecsync_http_requests_total{route="/v1/spaces/{space}/status",method="GET",status="401"} 1"#,
            "vecsync_http_request_duration_seconds_bucket{",
            #"vecsync_http_response_bytes_total{route="/v1/spaces/{space}/status"}"#,
        ] {
            #expect(text.contains(expected), "\(backEnd): no \(expected) in\n\(text)")
        }
        let lines = log.lines.filter { $0.contains(" request ") }
        let statusLine = lines.first { $0.contains("status=200") && $0.contains("route=/v1/spaces/{space}/status") }
        #expect(statusLine != nil, "\(backEnd): \(lines)")
        if let statusLine {
            for field in ["method=GET", "space=\(space)", "bytes_in=0", "bytes_out=", "ms=", "client=127.0.0.1"] {
                #expect(statusLine.contains(field), "\(backEnd): no \(field) in \(statusLine)")
            }
        }
        #expect(lines.count >= 4, "\(backEnd): one line per request: \(lines)")
        for secret in [tokens[0], metricsToken, Self.unknownToken] {
            #expect(!log.lines.contains { $0.contains(secret) }, "\(backEnd): a token in the log")
        }
        await server.stop()
        let unconfigured = try await RunningServer.start(test.store)
        #expect(
            try await raw("GET", unconfigured.url.appendingPathComponent("metrics"), token: metricsToken).status == 403)
        await unconfigured.stop()
        await test.close()
    }

    /// A space's change sets stay within its quota: the push that would pass it gets 507
    /// `quota-exceeded` and nothing of it is stored; the pushes before it are stored, and
    /// counted per space in the metrics.
    static func spaceQuotaIsKept(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        let (batches, seed) = try PhotoDevice.serializedBatches(
            "quota", photos: 12, prefix: "q", batchRows: 4, seed: 0x5E4F_0022)
        #expect(batches.count >= 3, "seed \(seed)")
        var limits = SyncServer.Limits(requestsPerSecond: 0)
        limits.spaceQuotaBytes = Int64(batches[0].count + batches[1].count + batches[2].count - 1)
        let metricsToken = "metrics-" + UUID().uuidString
        let server = try await RunningServer.start(test.store, limits: limits, metricsToken: metricsToken)
        let (space, tokens) = try await makeSpace(test.store, "quota")
        let base = server.url.appendingPathComponent("v1/spaces/\(space)")
        #expect(try await rawRegister(base, token: tokens[0], site: "quota", name: "Quota").status == 200)
        var codes: [Int] = []
        var refusal: RawAnswer?
        for body in batches.prefix(3) {
            let answer = try await rawPush(base, token: tokens[0], body: body)
            codes.append(answer.status)
            if answer.status == 507 { refusal = answer }
        }
        #expect(codes == [201, 201, 507], "\(backEnd), seed \(seed): \(codes)")
        #expect(refusal?.errorCode == "quota-exceeded", "\(backEnd): \(refusal?.json ?? [:])")
        let status = try await raw("GET", base.appendingPathComponent("status"), token: tokens[0])
        #expect(status.json?["lastSeq"] as? Int == 2, "\(backEnd): \(status.json ?? [:])")
        #expect(status.json?["bytes"] as? Int == batches[0].count + batches[1].count, "\(backEnd)")
        let metrics = try await raw("GET", server.url.appendingPathComponent("metrics"), token: metricsToken)
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains(#"vecsync_pushes_total{space="\#(space)",result="stored"} 2"#), "\(backEnd): \(text)")
        #expect(
            text.contains(
                #"vecsync_http_requests_total{route="/v1/spaces/{space}/changesets",method="POST",status="507"} 1"#),
            "\(backEnd): \(text)")
        await server.stop()
        await test.close()
    }
}
