import Foundation
import ServerFixtures
import VecSyncServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain TCP connection to a test server on loopback, for bytes no HTTP client would
/// send: broken request lines, bodies abandoned half way, a TLS handshake on the plain port.
/// Its calls block (run it through ``blocking(_:)``); every read and write gives up after
/// `timeout`, so a server that neither answers nor closes fails the test instead of hanging it.
final class RawConnection: @unchecked Sendable {
    /// What came back for a request.
    enum Answer: Equatable, CustomStringConvertible {
        /// A response with this status.
        case status(Int)
        /// The server closed the connection without a response.
        case closed
        /// Neither a response nor a close within the timeout.
        case timedOut

        var description: String {
            switch self {
            case .status(let code): "HTTP \(code)"
            case .closed: "closed"
            case .timedOut: "no answer, connection left open"
            }
        }

        /// A 4xx response, or a close: what a malformed request may get.
        var isRefusal: Bool {
            switch self {
            case .status(let code): (400..<500).contains(code)
            case .closed: true
            case .timedOut: false
            }
        }
    }

    private let socket: Int32
    private var received: [UInt8] = []

    /// Connects to `127.0.0.1:port`.
    init(port: Int, timeout: Duration = .seconds(10)) throws {
        socket = try LoopbackSocket.connect(port: port, timeout: timeout)
    }

    deinit { close(socket) }

    /// Caps the receive buffer at about `bytes` (the kernel doubles it), turning off its
    /// growth: a client that does not read then holds the server's answer back within a few
    /// kilobytes, not the tens of megabytes loopback buffers grow to.
    func limitReceiveBuffer(_ bytes: Int32) {
        var size = bytes
        setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends every byte; false when the server closed the connection or stopped reading
    /// (the write timed out) first.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { raw in
                #if canImport(Glibc)
                    Glibc.send(socket, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
                #else
                    Darwin.send(socket, raw.baseAddress, raw.count, 0)
                #endif
            }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Sends text as UTF-8.
    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Half-closes: the server reads the end of the request stream.
    func closeWrite() { shutdown(socket, Int32(SHUT_WR)) }

    /// Reads one response (its head, and its body when it announces a Content-Length).
    func answer() -> Answer {
        while true {
            if let end = headEnd() {
                let head = String(decoding: received[..<end], as: UTF8.self)
                let lines = head.components(separatedBy: "\r\n")
                let parts = lines[0].split(separator: " ")
                guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
                    return .closed
                }
                let length =
                    lines.dropFirst().compactMap { line -> Int? in
                        let pair = line.split(separator: ":", maxSplits: 1)
                        guard pair.count == 2, pair[0].lowercased() == "content-length" else { return nil }
                        return Int(pair[1].trimmingCharacters(in: .whitespaces))
                    }.first ?? 0
                while received.count < end + 4 + length {
                    if !readMore() { break }
                }
                received.removeFirst(min(received.count, end + 4 + length))
                return .status(status)
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count == 0 { return .closed }
            if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? .timedOut : .closed }
            received.append(contentsOf: buffer[..<count])
        }
    }

    /// The status of the answer whose head has come, read without taking anything off the
    /// connection (the body stays unread); nil when no whole head came within `tries` reads of
    /// the timeout each.
    func peekStatus(tries: Int = 3) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<tries {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_PEEK)) }
            guard count > 0 else { if count == 0 { return nil } else { continue } }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            guard text.contains("\r\n\r\n") else {
                usleep(50_000)
                continue
            }
            let parts = text.prefix { $0 != "\r" }.split(separator: " ")
            return parts.count >= 2 ? Int(parts[1]) : nil
        }
        return nil
    }

    /// Whether the server closed the connection (a read meets its end, or a reset) within the timeout.
    func isClosedByServer() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 { return !(errno == EAGAIN || errno == EWOULDBLOCK) }
        }
    }

    private func readMore() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        received.append(contentsOf: buffer[..<count])
        return true
    }

    private func headEnd() -> Int? {
        guard received.count >= 4 else { return nil }
        for index in 0...(received.count - 4)
        where received[index] == 13 && received[index + 1] == 10 && received[index + 2] == 13
            && received[index + 3] == 10
        {
            return index
        }
        return nil
    }
}
