import Foundation
import Testing
import VecSyncServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A PostgreSQL store that cannot be used fails fast, with a message, instead of waiting
/// without end: not running, not answering, the wrong user; and every call of a running
/// server's store is limited in time (``TimedStore``), so a database that goes away turns
/// requests into 503s and never holds the shutdown.
@Suite("Server store availability")
struct StoreAvailabilityTests {
    /// A loopback port that accepts connections and never answers: a database that hangs.
    final class SilentListener: @unchecked Sendable {
        let socket: Int32
        let port: Int

        init() throws {
            #if canImport(Glibc)
                let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
                let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
            #endif
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(fd, pointer, length) == 0 && listen(fd, 16) == 0
                        && getsockname(fd, pointer, &length) == 0
                }
            }
            guard bound else {
                close(fd)
                throw ServerConfigurationError("cannot listen: errno \(errno)")
            }
            socket = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(socket) }
    }

    /// Prepares a store of `url`, expecting it to throw, within `limit` when one is given, an
    /// error whose text names `expected`; returns the store, still to close.
    static func failingStore(
        _ url: String, within limit: Duration? = nil, naming expected: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> PostgresServerStore {
        let store = try PostgresServerStore(url: url)
        let started = ContinuousClock.now
        let error = await #expect(throws: ServerConfigurationError.self, sourceLocation: sourceLocation) {
            try await store.prepare()
        }
        let elapsed = ContinuousClock.now - started
        if let limit { #expect(elapsed < limit, "\(elapsed)", sourceLocation: sourceLocation) }
        #expect(
            error?.description.contains(expected) == true, "\(error?.description ?? "")", sourceLocation: sourceLocation
        )
        return store
    }

    @Test func refusedConnectionFailsFastWithAMessage() async throws {
        let store = try await Self.failingStore(
            "postgres://vecsync@127.0.0.1:1/vecsync", within: .seconds(20), naming: "127.0.0.1:1")
        await store.close()
    }

    @Test func silentDatabaseFailsFastWithAMessage() async throws {
        let listener = try SilentListener()
        let store = try await Self.failingStore(
            "postgres://vecsync@127.0.0.1:\(listener.port)/vecsync", within: .seconds(25),
            naming: "127.0.0.1:\(listener.port)")
        // A call of a server's store (time-limited) fails after its limit, whatever the
        // database does meanwhile.
        let limit: Duration = .seconds(3)
        let timed = TimedStore(store, limit: limit)
        let callStarted = ContinuousClock.now
        await #expect(throws: ServerStoreError.self) { _ = try await timed.grant(forTokenHash: "00") }
        #expect(ContinuousClock.now - callStarted < limit + .seconds(4))
        // From then on one call at a time finds out whether the store is back (and waits its
        // limit again); any other call meanwhile fails at once. Each side measures its own
        // call, so a test task that wakes late on a busy machine measures nothing wrong.
        let (started, starting) = AsyncStream<Void>.makeStream()
        let probe = Task { () -> Duration in
            starting.yield()
            let probeStarted = ContinuousClock.now
            _ = try? await timed.grant(forTokenHash: "00")
            return ContinuousClock.now - probeStarted
        }
        for await _ in started { break }
        try await Task.sleep(for: .milliseconds(200))
        let refusedStarted = ContinuousClock.now
        let refusal = await #expect(throws: ServerStoreError.self) { _ = try await timed.grant(forTokenHash: "00") }
        #expect(ContinuousClock.now - refusedStarted < limit)
        #expect(
            refusal?.description.contains("another call is finding out") == true, "\(refusal.map(\.description) ?? "")")
        let probeTook = await probe.value
        #expect(probeTook >= limit, "the probe waited its limit: \(probeTook)")
        await store.close()
        withExtendedLifetime(listener) {}  // silent to the end, never closed early
    }

    @Test(.enabled(if: BackEnd.postgresURL != nil, BackEnd.postgresSkipReason))
    func wrongUserFailsFastWithTheServersReason() async throws {
        let url = try PostgresTools.url(BackEnd.postgresURL ?? "", database: "postgres")
        guard var components = URLComponents(string: url) else { return }
        components.user = "no_such_user"
        let store = try await Self.failingStore(components.string ?? "", naming: "no_such_user")
        await store.close()
    }
}
