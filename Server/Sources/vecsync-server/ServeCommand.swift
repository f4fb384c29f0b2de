import ArgumentParser
import Foundation
import Logging
import VecSyncServer

/// `vecsync-server serve`.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the HTTP API until SIGINT or SIGTERM.",
        discussion: """
            Listens on --host:--port (127.0.0.1:8080 by default; use --host 0.0.0.0 behind a \
            proxy on another machine). Requests in flight finish before it exits.
            """)

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "The address to listen on (env VECSYNC_HOST).")
    var host = ServerEnvironment.value("VECSYNC_HOST") ?? "127.0.0.1"

    @Option(name: .long, help: "The port to listen on (0: any free port, printed; env VECSYNC_PORT).")
    var port = ServerEnvironment.number("VECSYNC_PORT", 8080)

    @Option(name: .long, help: "The largest request body, in MiB (env VECSYNC_MAX_BODY_MIB).")
    var maxBodyMib = ServerEnvironment.number("VECSYNC_MAX_BODY_MIB", 64)

    @Option(name: .long, help: "Requests a second per token (0: no limit; env VECSYNC_RATE).")
    var rate: Double = ServerEnvironment.number("VECSYNC_RATE", 50.0)

    @Option(name: .long, help: "Requests a token may make in one burst (env VECSYNC_BURST).")
    var burst = ServerEnvironment.number("VECSYNC_BURST", 400)

    @Option(
        name: .long,
        help:
            "Seconds a connection may stay without a byte read or written before it is closed (env VECSYNC_IDLE_TIMEOUT)."
    )
    var idleTimeout = ServerEnvironment.number("VECSYNC_IDLE_TIMEOUT", 60)

    @Option(
        name: .long,
        help:
            "Seconds SIGTERM or SIGINT waits for the requests in flight before the connections left are closed (env VECSYNC_SHUTDOWN_DEADLINE)."
    )
    var shutdownDeadline = ServerEnvironment.number("VECSYNC_SHUTDOWN_DEADLINE", 10)

    @Option(
        name: .long,
        help: "Seconds one store call may take before the request is answered 503 (env VECSYNC_STORE_TIMEOUT).")
    var storeTimeout = ServerEnvironment.number("VECSYNC_STORE_TIMEOUT", 30)

    @Option(name: .long, help: "The most connections served at once; more are closed (env VECSYNC_MAX_CONNECTIONS).")
    var maxConnections = ServerEnvironment.number("VECSYNC_MAX_CONNECTIONS", 1000)

    @Option(
        name: .long,
        help:
            "The downloads one token may have in flight at once, each holding 1 MiB in the server; more get 429 (env VECSYNC_DOWNLOADS_PER_TOKEN)."
    )
    var downloadsPerToken = ServerEnvironment.number("VECSYNC_DOWNLOADS_PER_TOKEN", 16)

    @Option(
        name: .long,
        help:
            "Requests a second without a valid token one client address may make, on average; past it the address gets 429, but for tokens known valid (0: no limit; env VECSYNC_AUTH_FAILURE_RATE)."
    )
    var authFailureRate: Double = ServerEnvironment.number("VECSYNC_AUTH_FAILURE_RATE", 1.0)

    @Option(
        name: .long,
        help: "Requests without a valid token one address may make at once (env VECSYNC_AUTH_FAILURE_BURST).")
    var authFailureBurst = ServerEnvironment.number("VECSYNC_AUTH_FAILURE_BURST", 30)

    @Option(
        name: .long,
        help:
            "Milliseconds a held address's 429 waits before it is sent, while fewer than half of --max-connections are taken: a client that waits for each answer slows to one request a connection per this (0: none; env VECSYNC_HELD_DELAY_MS)."
    )
    var heldDelayMs = ServerEnvironment.number("VECSYNC_HELD_DELAY_MS", 1000)

    @Flag(
        name: .long, inversion: .prefixedNo,
        help:
            "Take the client address from the last entry of X-Forwarded-For (behind a proxy that appends it; env VECSYNC_TRUST_FORWARDED_FOR=1)."
    )
    var trustForwardedFor = ServerEnvironment.flag("VECSYNC_TRUST_FORWARDED_FOR")

    @Option(
        name: .long,
        help:
            "MiB of request bodies held in memory at once over all requests; a body past it waits, then gets 503 (env VECSYNC_BODY_BUDGET_MIB)."
    )
    var bodyBudgetMib = ServerEnvironment.number("VECSYNC_BODY_BUDGET_MIB", 256)

    @Option(
        name: .long,
        help:
            "MiB of the body budget one space's requests may hold at once (0: half the budget, at least --max-body-mib; env VECSYNC_SPACE_BODY_MIB)."
    )
    var spaceBodyMib = ServerEnvironment.number("VECSYNC_SPACE_BODY_MIB", 0)

    @Option(
        name: .long,
        help:
            "The slowest a request body may come, in bytes a second, after its first 10 s; slower gets 408 too-slow (0: any pace; env VECSYNC_MIN_BODY_RATE)."
    )
    var minBodyRate = ServerEnvironment.number("VECSYNC_MIN_BODY_RATE", 1024)

    @Option(
        name: .customLong("metrics-token"),
        help: ArgumentHelp(
            "The bearer token GET /metrics needs; without one metrics are not served (env VECSYNC_METRICS_TOKEN, which keeps it out of ps).",
            valueName: "token"))
    var metricsTokenOption: String?

    /// `--metrics-token`, else `VECSYNC_METRICS_TOKEN`; nil: metrics are not served.
    var metricsToken: String? { metricsTokenOption ?? ServerEnvironment.value("VECSYNC_METRICS_TOKEN") }

    @Option(
        name: .long,
        help:
            "The least level logged: trace, debug, info (one access line per request), notice, warning, error, critical (env VECSYNC_LOG_LEVEL)."
    )
    var logLevel = ServerEnvironment.value("VECSYNC_LOG_LEVEL") ?? "info"

    @Option(
        name: .long,
        help:
            "MiB of change sets one space may hold; a push past it gets 507 quota-exceeded (0: no quota, the default; env VECSYNC_SPACE_QUOTA_MIB)."
    )
    var spaceQuotaMib = ServerEnvironment.number("VECSYNC_SPACE_QUOTA_MIB", 0)

    func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port must be in 0...65535") }
        if spaceQuotaMib < 0 { throw ValidationError("--space-quota-mib cannot be negative") }
        if Logger.Level(rawValue: logLevel.lowercased()) == nil {
            throw ValidationError(
                "--log-level (VECSYNC_LOG_LEVEL) must be trace, debug, info, notice, warning, error or critical, not '\(logLevel)'"
            )
        }
        if let metricsToken, metricsToken.utf8.count < 16 {
            throw ValidationError("--metrics-token (VECSYNC_METRICS_TOKEN) must have at least 16 characters")
        }
        if authFailureRate < 0 { throw ValidationError("--auth-failure-rate cannot be negative") }
        if authFailureBurst < 1 { throw ValidationError("--auth-failure-burst must be at least 1") }
        if heldDelayMs < 0 { throw ValidationError("--held-delay-ms cannot be negative") }
        if bodyBudgetMib < 1 { throw ValidationError("--body-budget-mib must be at least 1") }
        if spaceBodyMib < 0 { throw ValidationError("--space-body-mib cannot be negative") }
        if minBodyRate < 0 { throw ValidationError("--min-body-rate cannot be negative") }
        if maxBodyMib < 1 { throw ValidationError("--max-body-mib must be at least 1") }
        if rate < 0 { throw ValidationError("--rate cannot be negative") }
        if burst < 1 { throw ValidationError("--burst must be at least 1") }
        if idleTimeout < 1 { throw ValidationError("--idle-timeout must be at least 1") }
        if shutdownDeadline < 0 { throw ValidationError("--shutdown-deadline cannot be negative") }
        if storeTimeout < 1 { throw ValidationError("--store-timeout must be at least 1") }
        if maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
        if downloadsPerToken < 1 { throw ValidationError("--downloads-per-token must be at least 1") }
    }

    func run() async throws {
        try await store.withStore { try await serve($0) }
    }

    /// Serves the API over `store` until a signal stops it.
    private func serve(_ store: any ServerStore) async throws {
        var limits = SyncServer.Limits(maximumBodyBytes: maxBodyMib << 20, requestsPerSecond: rate, burst: burst)
        limits.idleTimeout = .seconds(idleTimeout)
        limits.shutdownDeadline = .seconds(shutdownDeadline)
        limits.storeTimeout = .seconds(storeTimeout)
        limits.maximumConnections = maxConnections
        limits.downloadsPerToken = downloadsPerToken
        limits.authFailuresPerSecond = authFailureRate
        limits.authFailureBurst = authFailureBurst
        limits.heldAnswerDelay = .milliseconds(heldDelayMs)
        limits.trustForwardedFor = trustForwardedFor
        limits.bodyBudgetBytes = bodyBudgetMib << 20
        limits.spaceBodyBytes = spaceBodyMib > 0 ? spaceBodyMib << 20 : nil
        limits.minimumBodyRate = minBodyRate
        limits.spaceQuotaBytes = spaceQuotaMib > 0 ? Int64(spaceQuotaMib) << 20 : nil
        var logger = Logger(label: "vecsync-server")
        logger.logLevel = Logger.Level(rawValue: logLevel.lowercased()) ?? .info
        let server = SyncServer(store: store, limits: limits, logger: logger, metricsToken: metricsToken)
        let backEnd = self.store.postgres.map { _ in "PostgreSQL" } ?? "SQLite in \(self.store.data)"
        try await server.run(host: host, port: port, handleSignals: true) { [host] bound in
            // Unbuffered, so a supervisor reading a pipe sees it at once.
            let line = "vecsync-server \(SyncServer.version) listening on http://\(host):\(bound) (\(backEnd))\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
    }
}
