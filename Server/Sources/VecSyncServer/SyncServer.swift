import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import VecSyncCore
import VecSyncWire

/// The HTTP relay: authenticated routes over a ``ServerStore``.
///
/// It keeps no state of its own (the per-token rate limits are counted by the store, in
/// PostgreSQL's database when it is one), so any number of instances may serve one
/// PostgreSQL database. It speaks plain HTTP: TLS is terminated by a
/// reverse proxy in front of it (or it listens on loopback only).
///
/// ```swift
/// let store = try SQLiteServerStore(directory: URL(fileURLWithPath: "server-data"))
/// let server = SyncServer(store: store)
/// try await server.run(host: "127.0.0.1", port: 8080)
/// ```
public final class SyncServer: Sendable {
    /// Limits applied to every request.
    public struct Limits: Sendable, Hashable {
        /// The largest request body accepted; a larger one is answered 413.
        public var maximumBodyBytes: Int
        /// Requests a token may make per second, on average, counted by the store: over every
        /// instance on one PostgreSQL database (0: no limit).
        public var requestsPerSecond: Double
        /// Requests a token may make at once.
        public var burst: Int
        /// The most change sets one pull page lists.
        public var maximumPageSize: Int
        /// How long one call of the store may take before the request is answered 503
        /// (``TimedStore``): a database that is down never holds a request, or the shutdown.
        public var storeTimeout: Duration = .seconds(30)
        /// How long a connection may stay without a byte read or written before it is
        /// closed (``IdleConnectionCloser``): idle keep-alive connections, stalled uploads,
        /// half-sent headers.
        public var idleTimeout: Duration = .seconds(60)
        /// How long a graceful shutdown (SIGTERM, SIGINT, the serving task cancelled) waits
        /// for the requests in flight; past it every connection left is closed, so one slow
        /// client cannot hold a deploy.
        public var shutdownDeadline: Duration = .seconds(10)
        /// The most connections served at once (``ConnectionLimiter``); one past it takes the
        /// place of the connection idle the longest (one that never carried a valid token
        /// first), or is closed when accepted when none is idle.
        public var maximumConnections: Int = 1000
        /// Requests without a valid token (none, malformed, unknown, revoked, of another
        /// space) one client address (``ClientAddress``) may make per second, on average,
        /// counted in this process (0: no limit). Past it the address is held: its requests
        /// are answered 429 before their token is looked up, so a scanner cannot keep the
        /// token check busy, except those bearing a token this process has found valid
        /// (behind a NAT or a proxy, a scanner would otherwise lock out every device of the
        /// address), and, up to ``heldLookupsPerSecond`` over all held addresses, those with
        /// a well-formed token not seen yet (a device's first request since the server
        /// started).
        public var authFailuresPerSecond: Double = 1
        /// Lookups of tokens not yet known valid allowed to held addresses, per second over
        /// all of them (a burst of as many).
        public var heldLookupsPerSecond: Double = 20
        /// The request-body bytes held in memory at once over every request (``BodyBudget``),
        /// charged as they are read; a body whose next part would pass it waits up to
        /// ``bodyWait``, then gets 503 `busy`.
        public var bodyBudgetBytes: Int = 256 << 20
        /// The request-body bytes the requests of one space may hold at once, within
        /// ``bodyBudgetBytes`` (nil: half of it, and at least ``maximumBodyBytes``): one
        /// space's uploads cannot take the whole budget.
        public var spaceBodyBytes: Int?
        /// How long a request waits for room in ``bodyBudgetBytes``.
        public var bodyWait: Duration = .seconds(10)
        /// The slowest a request body may come, in bytes a second over its whole time, once
        /// ``bodyGrace`` has passed (0: no least rate); slower, it gets 408 `too-slow` and its
        /// connection is closed (``BodyPace``).
        public var minimumBodyRate: Int = 1024
        /// How long a body may come at any pace before ``minimumBodyRate`` applies.
        public var bodyGrace: Duration = .seconds(10)
        /// The longest a request body may take in all.
        public var bodyTimeLimit: Duration = .seconds(600)
        /// The most bytes of change sets one space may hold (nil: no quota); a push past it
        /// is answered 507 `quota-exceeded` and nothing is stored. Compaction frees room.
        public var spaceQuotaBytes: Int64?
        /// How many requests without a valid token an address may make at once.
        public var authFailureBurst: Int = 30
        /// How long the 429 to a held address (one past ``authFailuresPerSecond``) waits before
        /// it is sent, while fewer than half the connection places are taken (zero: none). A
        /// client that waits for each answer before asking again slows to one request per
        /// connection per this; the waiting answers never crowd devices out of the places.
        public var heldAnswerDelay: Duration = .seconds(1)
        /// Whether the client address is the last one of `X-Forwarded-For` (behind a reverse
        /// proxy that appends the peer it sees) rather than the connection's peer.
        public var trustForwardedFor = false
        /// The downloads (of change sets and snapshots) one token may have in flight at once,
        /// each holding one part of 1 MiB in the server; past it, 429 `too-many-downloads`
        /// with `Retry-After` (``DownloadSlots``).
        public var downloadsPerToken: Int = 16

        /// 64 MiB bodies (a change set is at most about 1 MB plus one large row), 50 requests a
        /// second with bursts of 400, pages of up to 1,000 change sets.
        public init(
            maximumBodyBytes: Int = 64 << 20, requestsPerSecond: Double = 50, burst: Int = 400,
            maximumPageSize: Int = ChangeSetPaging.maximumLimit
        ) {
            self.maximumBodyBytes = maximumBodyBytes
            self.requestsPerSecond = requestsPerSecond
            self.burst = burst
            self.maximumPageSize = maximumPageSize
        }
    }

    /// The server's version, reported by `GET …/status`.
    public static let version = VecSyncExtension.version

    /// Where it keeps everything, each call limited to ``Limits/storeTimeout``.
    public let store: any ServerStore
    /// The store without the limit, for preparing it (a first start may take long).
    private let unlimitedStore: any ServerStore
    /// Its limits.
    public let limits: Limits
    let logger: Logger
    /// Requests without a valid token, per client address.
    let authFailures = RateLimiter()
    /// Token lookups allowed to held addresses for tokens not known valid, process-wide.
    let heldLookups = RateLimiter(capacity: 1)
    /// Hashes of the tokens this process found valid, the most recent 100,000: a request
    /// bearing one is never held back by its address's limit.
    let knownTokens = KnownTokens()
    /// The request bodies held at once.
    let bodyBudget: BodyBudget
    /// The connections served at once.
    let connections: ConnectionLimiter
    /// The writes skipped while the store's disk is full.
    let fullDisk = FullDiskNotice()
    /// The change sets this process found whole and matching their SHA-256.
    let verified = VerifiedBodies()
    /// The downloads each token has in flight.
    let downloads: DownloadSlots
    /// What `GET /metrics` serves.
    public let metrics = ServerMetrics()
    /// The SHA-256 of the token `GET /metrics` needs; nil: metrics are not served.
    let metricsTokenHash: String?

    /// A server over `store`; `GET /metrics` answers a request bearing `metricsToken` (and
    /// none when it is nil).
    public init(
        store: any ServerStore, limits: Limits = Limits(), logger: Logger = Logger(label: "vecsync-server"),
        metricsToken: String? = nil
    ) {
        self.metricsTokenHash = metricsToken.map(AccessToken.hash)
        self.store = TimedStore(store, limit: limits.storeTimeout)
        self.unlimitedStore = store
        self.limits = limits
        self.logger = logger
        self.connections = ConnectionLimiter(maximum: max(1, limits.maximumConnections))
        self.downloads = DownloadSlots(perToken: limits.downloadsPerToken)
        self.bodyBudget = BodyBudget(
            total: limits.bodyBudgetBytes,
            spaceShare: limits.spaceBodyBytes ?? max(limits.bodyBudgetBytes / 2, limits.maximumBodyBytes))
    }

    /// Prepares the store, then serves on `host:port` until the task is cancelled (or, with
    /// `handleSignals`, until SIGINT or SIGTERM); either way it shuts down gracefully,
    /// finishing the requests in flight.
    /// `onRunning` receives the port bound (useful with port 0).
    public func run(
        host: String, port: Int, handleSignals: Bool = false,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        try await unlimitedStore.prepare()
        let idleTimeout = limits.idleTimeout
        let connections = self.connections
        let responder = RequestObserver(
            base: makeRouter().buildResponder(), metrics: metrics, logger: logger,
            trustForwardedFor: limits.trustForwardedFor)
        let app = Application(
            responder: responder,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [connections.handler()]
                        + IdleConnectionCloser.handlers(after: idleTimeout))),
            configuration: .init(address: .hostname(host, port: port), serverName: "vecsync-server/\(Self.version)"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
        // Stopping is always graceful: the listener closes, the requests in flight finish.
        // Cancelling the task that serves would instead drop connections accepted but not
        // yet served, which NIO does not allow (a trap, not an error). So the group runs in
        // a task of its own, and cancelling this one asks it to shut down.
        // The group stops its services in reverse order: the deadline hears of the shutdown
        // first, arms its timer and returns, then the application stops gracefully.
        let deadline = ShutdownDeadline(after: limits.shutdownDeadline, connections: connections, logger: logger)
        let group = ServiceGroup(
            services: [app, deadline], gracefulShutdownSignals: handleSignals ? [.sigterm, .sigint] : [],
            logger: logger)
        let serving = Task { try await group.run() }
        try await withTaskCancellationHandler {
            try await serving.value
        } onCancel: {
            Task { await group.triggerGracefulShutdown() }
        }
    }

    /// Milliseconds since 1970, the stores' time unit.
    static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
