import Foundation
import VecSyncServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback TCP relay to another IPv4 address and port, for a test to take that server
/// away and bring it back: ``cut()`` closes every relayed connection and the listening port
/// (new connections are refused, as they are when a database is down); ``restore()`` listens
/// on the same port again. Blocking sockets, a thread per direction of each connection.
final class TCPRelay: @unchecked Sendable {
    let port: Int
    private let upstream: sockaddr_in
    private let lock = NSLock()
    private var listener: Int32 = -1
    private var sockets: Set<Int32> = []

    /// A relay from a new loopback port to `host` (a dotted IPv4 address) and `port`.
    init(to host: String, port upstreamPort: Int) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(upstreamPort)).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw ServerConfigurationError("TCPRelay: \(host) is not an IPv4 address")
        }
        upstream = address
        let (fd, bound) = try Self.openListener(port: 0)
        listener = fd
        port = bound
        startAccepting(fd)
    }

    deinit { cut() }

    /// Every relayed connection closed, the port closed: connections are refused.
    func cut() {
        lock.lock()
        let all = sockets
        let fd = listener
        listener = -1
        // shutdown wakes the threads blocked on these sockets; the last of a connection's
        // two closes both (under the lock, so no number here is reused meanwhile).
        for socket in all { shutdown(socket, Int32(SHUT_RDWR)) }
        lock.unlock()
        if fd >= 0 {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    /// Listening again on the same port (after ``cut()``).
    func restore() throws {
        let (fd, _) = try Self.openListener(port: port)
        lock.lock()
        listener = fd
        lock.unlock()
        startAccepting(fd)
    }

    private static func openListener(port: Int) throws -> (Int32, Int) {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let error = errno
            close(fd)
            throw ServerConfigurationError("TCPRelay: cannot listen on port \(port): errno \(error)")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    private func startAccepting(_ fd: Int32) {
        let thread = Thread { [weak self] in
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else {
                    if errno == EINTR { continue }
                    return  // the listener was cut
                }
                guard let self else {
                    close(client)
                    return
                }
                self.relay(client)
            }
        }
        thread.start()
    }

    private func relay(_ client: Int32) {
        #if canImport(Glibc)
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let server = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = upstream
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        lock.lock()
        let live = listener >= 0 && connected
        if live { sockets.formUnion([client, server]) }
        lock.unlock()
        guard live else {
            close(client)
            close(server)
            return
        }
        // Each direction ends both sockets' use when it ends; the last one to end closes them.
        let ends = Ends(client, server, relay: self)
        for (from, to) in [(client, server), (server, client)] {
            let thread = Thread {
                var buffer = [UInt8](repeating: 0, count: 64 << 10)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { break }
                    var sent = 0
                    while sent < n {
                        let m = buffer.withUnsafeBytes { write(to, $0.baseAddress! + sent, n - sent) }
                        if m < 0 && errno == EINTR { continue }
                        guard m > 0 else { break }
                        sent += m
                    }
                    guard sent == n else { break }
                }
                ends.oneEnded()
            }
            thread.start()
        }
    }

    fileprivate func closeBoth(_ a: Int32, _ b: Int32) {
        lock.lock()
        sockets.remove(a)
        sockets.remove(b)
        close(a)
        close(b)
        lock.unlock()
    }

    /// The two sockets of one relayed connection, closed when both directions have ended.
    private final class Ends: @unchecked Sendable {
        let a: Int32, b: Int32
        weak var relay: TCPRelay?
        private let lock = NSLock()
        private var ended = 0

        init(_ a: Int32, _ b: Int32, relay: TCPRelay) {
            self.a = a
            self.b = b
            self.relay = relay
        }

        func oneEnded() {
            shutdown(a, Int32(SHUT_RDWR))
            shutdown(b, Int32(SHUT_RDWR))
            lock.lock()
            ended += 1
            let last = ended == 2
            lock.unlock()
            guard last else { return }
            if let relay {
                relay.closeBoth(a, b)
            } else {
                close(a)
                close(b)
            }
        }
    }
}
