import Foundation
import ServerFixtures
import Testing
import VecSyncServer

extension ServerScenarios {
    /// Requests no honest client sends, and clients that stop sending their body once the
    /// server has answered early (401, 413, 429): each is answered with a 4xx or closed, and
    /// after each one the server still answers a plain request. (Any of them used to kill
    /// the process: NIO's response compressor trapped on an answer without a request.)
    static func malformedRequestsAreRefusedAndServingGoesOn(_ backEnd: BackEnd) async throws {
        let test = try await TestStore.make(backEnd)
        let server = try await RunningServer.start(
            test.store, limits: SyncServer.Limits(maximumBodyBytes: 1 << 20, requestsPerSecond: 0.01, burst: 40))
        let (space, tokens) = try await makeSpace(test.store, "hostile", tokens: 2)
        let port = server.url.port ?? 0
        let status = "/v1/spaces/\(space)/status"
        let push = "/v1/spaces/\(space)/changesets"
        let unknownToken = "vst_" + String(repeating: "0", count: 64)
        let sha = String(repeating: "0", count: 64)
        // Exhaust the second token's bucket, for the 429 case.
        for _ in 0..<40 {
            _ = try await raw("GET", server.url.appendingPathComponent(status), token: tokens[1])
        }
        let chunk = [UInt8](repeating: 0x5A, count: 64 << 10)
        @Sendable func pushHead(token: String, length: Int?) -> String {
            "POST \(push) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                + "Accept-Encoding: gzip\r\nContent-Type: application/vnd.vecsync.changeset\r\n"
                + "X-VecSync-SHA256: \(sha)\r\n"
                + (length.map { "Content-Length: \($0)\r\n" } ?? "Transfer-Encoding: chunked\r\n") + "\r\n"
        }
        /// Sends `head`, then up to `bodyBytes` of body (chunked when the head says so) and
        /// stops, the connection left open: a client that stops sending once answered.
        @Sendable func abandonedUpload(_ head: String, bodyBytes: Int, chunked: Bool = false)
            -> @Sendable (RawConnection) -> RawConnection.Answer?
        {
            { connection in
                connection.send(head)
                var sent = 0
                while sent < bodyBytes {
                    let ok =
                        chunked
                        ? connection.send(
                            Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8))
                        : connection.send(chunk)
                    if !ok { break }
                    sent += chunk.count
                }
                return connection.answer()
            }
        }
        var hello: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0xF4, 0x01, 0x00, 0x00, 0xF0, 0x03, 0x03]
        hello += (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37) } + [0x20]
        hello += (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11) } + [0x00, 0x08, 0x13, 0x02, 0x13, 0x03]
        hello += [UInt8](repeating: 0, count: 160)
        let clientHello = hello

        let cases: [(String, @Sendable (RawConnection) -> RawConnection.Answer?)] = [
            (
                "garbage request line",
                {
                    $0.send("GARBAGE\r\n\r\n")
                    return $0.answer()
                }
            ),
            (
                "binary garbage",
                {
                    $0.send((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 131) })
                    return $0.answer()
                }
            ),
            (
                "TLS ClientHello on the plain port",
                {
                    $0.send(clientHello)
                    return $0.answer()
                }
            ),
            (
                "request line cut, then closed",
                {
                    $0.send("GET /v1/spa")
                    $0.closeWrite()
                    return $0.answer()
                }
            ),
            (
                "body cut, then closed",
                { connection in
                    connection.send(pushHead(token: tokens[0], length: 100_000))
                    connection.send(Array(chunk[..<1000]))
                    connection.closeWrite()
                    return connection.answer()
                }
            ),
            (
                "header without a colon",
                {
                    $0.send("GET \(status) HTTP/1.1\r\nHost: 127.0.0.1\r\nNoColonHere\r\n\r\n")
                    return $0.answer()
                }
            ),
            (
                "Content-Length with Transfer-Encoding",
                {
                    $0.send(
                        "POST \(push) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tokens[0])\r\n"
                            + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
                    return $0.answer()
                }
            ),
            (
                "10 MB push with an unknown token, stopped after the answer",
                abandonedUpload(pushHead(token: unknownToken, length: 10 << 20), bodyBytes: 256 << 10)
            ),
            (
                "chunked push with an unknown token, stopped after the answer",
                abandonedUpload(pushHead(token: unknownToken, length: nil), bodyBytes: 256 << 10, chunked: true)
            ),
            (
                "announced body over the limit (413), stopped after the answer",
                abandonedUpload(pushHead(token: tokens[0], length: 5 << 20), bodyBytes: 256 << 10)
            ),
            (
                "chunked body over the limit (413)",
                abandonedUpload(pushHead(token: tokens[0], length: nil), bodyBytes: 2 << 20, chunked: true)
            ),
            (
                "push over the rate limit (429), stopped after the answer",
                abandonedUpload(pushHead(token: tokens[1], length: 900 << 10), bodyBytes: 128 << 10)
            ),
            (
                "garbage pipelined after a good request",
                { connection in
                    connection.send(
                        "GET \(status) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tokens[0])\r\n\r\nBAD\r\n\r\n"
                    )
                    let first = connection.answer()
                    return first == .status(200) ? connection.answer() : .status(first == .closed ? 599 : 598)
                }
            ),
        ]
        for (name, exchange) in cases {
            let answer = try await blocking {
                let connection = try RawConnection(port: port)
                return exchange(connection)
            }
            if let answer { #expect(answer.isRefusal, "\(backEnd), \(name): \(answer)") }
            let after = try await raw(
                "GET", server.url.appendingPathComponent(status), token: tokens[0], headers: ["Accept-Encoding": "gzip"]
            )
            #expect(after.status == 200, "\(backEnd), after '\(name)' the server answers \(after.status)")
        }
        await server.stop()
        await test.close()
    }
}
