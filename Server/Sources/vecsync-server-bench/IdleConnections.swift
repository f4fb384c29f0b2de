import Foundation
import ServerFixtures

// Connections that connect to a server and never send a byte, as a slow or hostile client
// holds them: the load test runs beside them to show what they cost the working devices.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Holds `count` idle TCP connections to a loopback port from a thread of its own,
/// reopening each one the server closes (its idle timeout) once a second, so that about
/// `count` stay open for the whole run.
final class IdleConnections: @unchecked Sendable {
    private let port: UInt16
    private let lock = NSLock()
    private var open = 0
    private var reopened = 0
    private var failed = 0
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    /// Opens `count` connections to 127.0.0.1:`port` and starts watching them.
    init(count: Int, port: UInt16) {
        self.port = port
        let thread = Thread { [self] in hold(count) }
        thread.start()
    }

    /// How many are open now, how many the server closed and were reopened, how many
    /// connection attempts failed.
    var counts: (open: Int, reopened: Int, failed: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (open, reopened, failed)
    }

    /// Closes every connection and waits for the watching thread to end.
    func stop() {
        lock.lock()
        let first = !stopping
        stopping = true
        lock.unlock()
        if first { finished.wait() }
    }

    private func hold(_ count: Int) {
        var sockets = (0..<count).map { _ in openSocket(port: port) }
        record(sockets, reopened: 0, failed: sockets.filter { $0 < 0 }.count)
        while true {
            lock.lock()
            let stop = stopping
            lock.unlock()
            if stop { break }
            Thread.sleep(forTimeInterval: 1)
            var closedNow = 0
            var failedNow = 0
            for index in sockets.indices {
                if sockets[index] >= 0 {
                    guard isClosedByPeer(sockets[index]) else { continue }
                    closeSocket(sockets[index])
                    closedNow += 1
                }
                sockets[index] = openSocket(port: port)
                if sockets[index] < 0 { failedNow += 1 }
            }
            record(sockets, reopened: closedNow, failed: failedNow)
        }
        for socket in sockets where socket >= 0 { closeSocket(socket) }
        record([], reopened: 0, failed: 0)
        finished.signal()
    }

    private func record(_ sockets: [Int32], reopened closed: Int, failed failures: Int) {
        lock.lock()
        open = sockets.filter { $0 >= 0 }.count
        reopened += closed
        failed += failures
        lock.unlock()
    }
}

/// Whether the peer closed `socket` (a read would return end of file or an error).
private func isClosedByPeer(_ socket: Int32) -> Bool {
    var byte: UInt8 = 0
    let got = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
    if got > 0 { return false }
    if got == 0 { return true }
    return errno != EAGAIN && errno != EWOULDBLOCK
}

private func closeSocket(_ socket: Int32) {
    _ = close(socket)
}

/// A connected socket to 127.0.0.1:`port` (a blocking connect, at most 2 s), or -1.
private func openSocket(port: UInt16) -> Int32 {
    (try? LoopbackSocket.connect(port: Int(port), timeout: .seconds(2))) ?? -1
}
