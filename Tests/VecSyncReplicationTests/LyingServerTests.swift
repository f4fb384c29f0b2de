#if canImport(FoundationNetworking) && canImport(Glibc)
    import Foundation
    import Glibc
    import GRDB
    import Testing

    @testable import VecSyncHTTP
    @testable import VecSyncReplication

    /// Requests (a push-like POST, a GET) against a server that lies about its answer's
    /// length, streams without end or drips: each is an error of the transport, in bounded
    /// time and memory, never a crash of the app.
    @Suite("HTTP transport against a lying server")
    struct LyingServerTests {
        /// A server on 127.0.0.1 that answers one connection with `answer`: it reads the
        /// request's head, then calls `answer` with the connection's socket.
        final class OneShotServer: @unchecked Sendable {
            let port: Int
            private let listener: Int32
            private let thread: Thread

            init(answer: @escaping @Sendable (Int32) -> Void) throws {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var yes: Int32 = 1
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                address.sin_port = 0
                let bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard bound == 0, listen(fd, 4) == 0 else {
                    close(fd)
                    throw POSIXError(.EADDRINUSE)
                }
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                _ = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
                }
                port = Int(UInt16(bigEndian: address.sin_port))
                listener = fd
                thread = Thread {
                    let connection = accept(fd, nil, nil)
                    guard connection >= 0 else { return }
                    var head: [UInt8] = []
                    var byte: UInt8 = 0
                    while recv(connection, &byte, 1, 0) == 1 {
                        head.append(byte)
                        if head.suffix(4) == [13, 10, 13, 10] { break }
                    }
                    answer(connection)
                    close(connection)
                }
                thread.start()
            }

            deinit { close(listener) }

            static func send(_ text: String, to socket: Int32) {
                let bytes = Array(text.utf8)
                _ = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }

        /// A push-like request (POST with a body; a GET when `body` is nil) to `server`, one
        /// attempt, timeout 1 s.
        func post(to server: OneShotServer, body: Data? = Data("{}".utf8)) -> (any Error)? {
            var transport = HTTPTransport(
                server: URL(string: "http://127.0.0.1:\(server.port)")!, space: "s", token: "t")
            transport.attempts = 1
            transport.timeout = 1
            do {
                _ = try transport.send(body == nil ? "GET" : "POST", "changes", body: body)
                return nil
            } catch {
                return error
            }
        }

        @Test("A Content-Length of Int.max is an error, not an overflow")
        func hugeContentLength() throws {
            let server = try OneShotServer { socket in
                OneShotServer.send("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\n{}", to: socket)
            }
            let error = post(to: server)
            #expect("\(String(describing: error))".contains("over"), "\(String(describing: error))")
        }

        @Test("A chunk size of 0x7fffffffffffffff is an error, not an overflow")
        func hugeChunk() throws {
            let server = try OneShotServer { socket in
                OneShotServer.send(
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n{}", to: socket)
            }
            let start = Date()
            let error = post(to: server)
            #expect(error is HTTPTransportError, "\(String(describing: error))")
            #expect(Date().timeIntervalSince(start) < 5)
        }

        @Test("An answer that streams without end is cut at the cap", arguments: [true, false])
        func endlessStream(withBody: Bool) throws {
            let server = try OneShotServer { socket in
                OneShotServer.send("HTTP/1.1 200 OK\r\n\r\n", to: socket)
                let block = String(repeating: "x", count: 1 << 20)
                for _ in 0..<64 { OneShotServer.send(block, to: socket) }   // 64 MiB, past the cap
            }
            let error = post(to: server, body: withBody ? Data("{}".utf8) : nil)
            #expect("\(String(describing: error))".contains("longer than"), "\(String(describing: error))")
        }

        @Test("A server that drips its answer is given up on after the deadline")
        func drippingAnswer() throws {
            let server = try OneShotServer { socket in
                OneShotServer.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", to: socket)
                for _ in 0..<40 {
                    OneShotServer.send("x", to: socket)
                    Thread.sleep(forTimeInterval: 0.2)
                }
            }
            let start = Date()
            let error = post(to: server)
            let seconds = Date().timeIntervalSince(start)
            #expect("\(String(describing: error))".contains("in time"), "\(String(describing: error))")
            #expect(seconds < 4, "gave up after \(seconds) s; the deadline is 1 s")
        }

        @Test("A snapshot said to be in parts that lists none is refused before the cursor moves")
        func snapshotWithoutPartsIsRefused() throws {
            let replica = try Replica(try DatabaseQueue(), site: "a")
            let transport = HTTPTransport(server: URL(string: "http://127.0.0.1:9")!, space: "s", token: "t")
            let cursor = transport.pullCursor(storeID: "store")
            let snapshot = ServerSnapshot(
                seq: 7, heads: ["b": 3], rows: 0, size: 0, sha256: String(repeating: "0", count: 64), createdAt: 1,
                parts: [])
            #expect(throws: HTTPTransportError.self) { try transport.bootstrap(replica, from: snapshot, pullCursor: cursor) }
            #expect(try replica.cursor(cursor) == 0)
        }
    }
#endif
