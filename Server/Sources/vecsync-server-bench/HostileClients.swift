import Foundation
import ServerFixtures

// Clients that cost a server without doing any work: uploads that announce a large change
// set and send it a byte at a time, and clients without a valid token that ask again and
// again. The load test runs the devices beside them: what the devices lose is their cost.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Threads that run until stopped, with a lock for what they count.
class ClientThreads: @unchecked Sendable {
    let lock = NSLock()
    private var stopping = false
    private let group = DispatchGroup()

    /// Runs `body` on a new thread; ``stop()`` waits for it.
    func spawn(_ body: @escaping @Sendable () -> Void) {
        group.enter()
        Thread { [group] in
            body()
            group.leave()
        }.start()
    }

    /// Asks every thread to end and waits until they have.
    func stop() {
        lock.lock()
        stopping = true
        lock.unlock()
        group.wait()
    }

    var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }
}

/// `count` slow uploads to one server, each from a thread of its own: a push with a valid
/// token announcing `Content-Length: 64 MiB`, then one byte every 200 ms; when the server
/// answers or closes the connection (its minimum rate, `408 too-slow`), the next upload
/// starts at once.
final class SlowUploads: ClientThreads, @unchecked Sendable {
    private var started = 0
    private var cut = 0
    private var answers: [Int: Int] = [:]

    init(count: Int, port: Int, path: String, token: String) {
        super.init()
        let head =
            "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Type: application/vnd.vecsync.changeset\r\n"
            + "X-VecSync-SHA256: \(String(repeating: "0", count: 64))\r\n"
            + "Content-Length: \(64 << 20)\r\n\r\n"
        for _ in 0..<count {
            spawn { [self] in
                while !isStopping { upload(port: port, head: Array(head.utf8)) }
            }
        }
    }

    /// Uploads started, uploads the server ended (answered or closed), and the statuses of
    /// its answers.
    var counts: (started: Int, cut: Int, answers: [Int: Int]) {
        lock.lock()
        defer { lock.unlock() }
        return (started, cut, answers)
    }

    private func upload(port: Int, head: [UInt8]) {
        guard let socket = try? LoopbackSocket.connect(port: port, timeout: .seconds(2)) else {
            Thread.sleep(forTimeInterval: 0.2)
            return
        }
        defer { close(socket) }
        lock.lock()
        started += 1
        lock.unlock()
        guard sendAll(socket, head) else { return recordCut(nil) }
        while !isStopping {
            Thread.sleep(forTimeInterval: 0.2)
            if let status = answerWaiting(socket) { return recordCut(status) }
            guard sendAll(socket, [0x56]) else { return recordCut(readStatus(socket) ?? 0) }
        }
    }

    private func recordCut(_ status: Int?) {
        lock.lock()
        cut += 1
        if let status { answers[status, default: 0] += 1 }
        lock.unlock()
    }
}

/// `count` clients of one server without a valid token, each from a thread of its own on a
/// kept-alive connection: a status read with a token no space has, every `interval`
/// (`401 unauthorized`, or `429 rate-limited` once their address has spent its allowance),
/// reconnecting when the server closes the connection.
final class TokenlessClients: ClientThreads, @unchecked Sendable {
    private var answers: [Int: Int] = [:]
    private var failed = 0

    init(count: Int, port: Int, path: String, interval: Duration) {
        super.init()
        let request = Array(
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer vs_not-a-token\r\n\r\n".utf8)
        let pause = Double(interval.components.seconds) + Double(interval.components.attoseconds) * 1e-18
        for _ in 0..<count {
            spawn { [self] in
                var socket: Int32 = -1
                while !isStopping {
                    if socket < 0 {
                        socket = (try? LoopbackSocket.connect(port: port, timeout: .seconds(5))) ?? -1
                    }
                    var status: Int?
                    if socket >= 0, sendAll(socket, request) { status = readAnswer(socket) }
                    lock.lock()
                    if let status { answers[status, default: 0] += 1 } else { failed += 1 }
                    lock.unlock()
                    if status == nil, socket >= 0 {
                        close(socket)
                        socket = -1
                    }
                    Thread.sleep(forTimeInterval: pause)
                }
                if socket >= 0 { close(socket) }
            }
        }
    }

    /// The statuses of the answers, and the requests that got none (a closed connection).
    var counts: (answers: [Int: Int], failed: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (answers, failed)
    }
}

/// Sends every byte of `bytes`; false when the connection is gone.
private func sendAll(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
    #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
    #else
        let flags: Int32 = 0
    #endif
    var sent = 0
    while sent < bytes.count {
        let n = bytes.withUnsafeBytes { send(socket, $0.baseAddress! + sent, bytes.count - sent, flags) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return false }
        sent += n
    }
    return true
}

/// Whether the server has answered (or closed) already: the answer's status, 0 for a close
/// without one, nil while nothing is waiting to be read.
private func answerWaiting(_ socket: Int32) -> Int? {
    var byte: UInt8 = 0
    let got = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
    if got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return nil }
    return got > 0 ? readStatus(socket) ?? 0 : 0
}

/// The status of the answer waiting on `socket` (its first line), or nil.
private func readStatus(_ socket: Int32) -> Int? {
    var buffer = [UInt8](repeating: 0, count: 512)
    let got = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
    guard got > 12 else { return nil }
    return statusOf(buffer[0..<got])
}

/// One whole answer read from `socket` (head, and a body of its `Content-Length`); its
/// status, or nil when the connection ended or the answer cannot be read.
private func readAnswer(_ socket: Int32) -> Int? {
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    var headEnd: Int?
    var expected = Int.max
    while received.count < expected {
        let got = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if got < 0 && errno == EINTR { continue }
        guard got > 0 else { return nil }
        received += buffer[0..<got]
        if headEnd == nil, let end = received.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound {
            headEnd = end
            let head = String(decoding: received[0..<end], as: UTF8.self).lowercased()
            guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
            else { return nil }
            expected = end + length
        }
        if received.count > 1 << 20 { return nil }
    }
    return statusOf(received[...])
}

private func statusOf(_ bytes: ArraySlice<UInt8>) -> Int? {
    let line = String(decoding: bytes.prefix(16), as: UTF8.self)
    guard line.hasPrefix("HTTP/1.1 ") else { return nil }
    return Int(line.dropFirst(9).prefix(3))
}
