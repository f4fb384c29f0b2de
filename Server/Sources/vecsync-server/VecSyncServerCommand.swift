import ArgumentParser
import Foundation
import Logging
import VecSyncServer

/// `vecsync-server`: the sync relay and its admin commands.
@main
struct VecSyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vecsync-server",
        abstract: "Relay change sets between the devices of each space, over HTTP.",
        discussion: """
            Quick start (SQLite in ./server-data):
              vecsync-server space create family
              vecsync-server token issue --space family --label "Ana's phone"
              vecsync-server serve --port 8080
            then, on each device:
              VECSYNC_TOKEN=vst_… vecsync-cli sync --db photos.db --server http://HOST:8080 --space family

            The server speaks plain HTTP: put it behind a reverse proxy that terminates TLS \
            (or keep it on loopback). With --postgres every command uses that database \
            instead, and several `serve` instances may share it.
            """,
        version: SyncServer.version,
        subcommands: [
            ServeCommand.self, SpaceCommand.self, TokenCommand.self, BackupCommand.self, NewEpochCommand.self,
        ])
}

/// Where the server keeps its data: `--data DIR` (SQLite, the default) or `--postgres URL`.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The folder of the SQLite store (created when missing; env VECSYNC_DATA).")
    var data: String = ServerEnvironment.value("VECSYNC_DATA") ?? "./server-data"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A PostgreSQL URL, postgres://user@host:port/database; used instead of --data (env VECSYNC_POSTGRES_URL; the password from VECSYNC_POSTGRES_PASSWORD or the file VECSYNC_POSTGRES_PASSWORD_FILE names).",
            valueName: "url"))
    var postgres: String? = ServerEnvironment.value("VECSYNC_POSTGRES_URL")

    func validate() throws {
        if data.isEmpty { throw ValidationError("--data cannot be empty") }
        try ServerEnvironment.check()
    }

    /// The store, prepared (tables created when missing).
    func open() async throws -> any ServerStore {
        let store: any ServerStore
        if let postgres {
            store = try PostgresServerStore(url: try ServerEnvironment.postgresURL(postgres))
        } else {
            store = try SQLiteServerStore(directory: URL(fileURLWithPath: data))
        }
        do {
            try await store.prepare()
        } catch {
            await store.close()
            throw error
        }
        return store
    }
}

/// Milliseconds since 1970.
func nowMilliseconds() -> Int64 {
    Int64((Date().timeIntervalSince1970 * 1000).rounded())
}

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
        help: "Seconds one store call may take before the request is answered 503 (env VECSYNC_STORE_TIMEOUT).")
    var storeTimeout = ServerEnvironment.number("VECSYNC_STORE_TIMEOUT", 30)

    @Option(name: .long, help: "The most connections served at once; more are closed (env VECSYNC_MAX_CONNECTIONS).")
    var maxConnections = ServerEnvironment.number("VECSYNC_MAX_CONNECTIONS", 1000)

    @Option(
        name: .long,
        help:
            "Requests a second without a valid token one client address may make, on average; past it the address gets 429 (0: no limit; env VECSYNC_AUTH_FAILURE_RATE)."
    )
    var authFailureRate: Double = ServerEnvironment.number("VECSYNC_AUTH_FAILURE_RATE", 1.0)

    @Option(
        name: .long,
        help: "Requests without a valid token one address may make at once (env VECSYNC_AUTH_FAILURE_BURST).")
    var authFailureBurst = ServerEnvironment.number("VECSYNC_AUTH_FAILURE_BURST", 30)

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
        help: ArgumentHelp(
            "The bearer token GET /metrics needs; without one metrics are not served (env VECSYNC_METRICS_TOKEN, which keeps it out of ps).",
            valueName: "token"))
    var metricsToken: String? = ServerEnvironment.value("VECSYNC_METRICS_TOKEN")

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
        if bodyBudgetMib < 1 { throw ValidationError("--body-budget-mib must be at least 1") }
        if maxBodyMib < 1 { throw ValidationError("--max-body-mib must be at least 1") }
        if rate < 0 { throw ValidationError("--rate cannot be negative") }
        if burst < 1 { throw ValidationError("--burst must be at least 1") }
        if idleTimeout < 1 { throw ValidationError("--idle-timeout must be at least 1") }
        if storeTimeout < 1 { throw ValidationError("--store-timeout must be at least 1") }
        if maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
    }

    func run() async throws {
        let store = try await store.open()
        var limits = SyncServer.Limits(maximumBodyBytes: maxBodyMib << 20, requestsPerSecond: rate, burst: burst)
        limits.idleTimeout = .seconds(idleTimeout)
        limits.storeTimeout = .seconds(storeTimeout)
        limits.maximumConnections = maxConnections
        limits.authFailuresPerSecond = authFailureRate
        limits.authFailureBurst = authFailureBurst
        limits.trustForwardedFor = trustForwardedFor
        limits.bodyBudgetBytes = bodyBudgetMib << 20
        limits.spaceQuotaBytes = spaceQuotaMib > 0 ? Int64(spaceQuotaMib) << 20 : nil
        var logger = Logger(label: "vecsync-server")
        logger.logLevel = Logger.Level(rawValue: logLevel.lowercased()) ?? .info
        let server = SyncServer(store: store, limits: limits, logger: logger, metricsToken: metricsToken)
        let backEnd = self.store.postgres.map { _ in "PostgreSQL" } ?? "SQLite in \(self.store.data)"
        do {
            try await server.run(host: host, port: port, handleSignals: true) { [host] bound in
                // Unbuffered, so a supervisor reading a pipe sees it at once.
                let line = "vecsync-server \(SyncServer.version) listening on http://\(host):\(bound) (\(backEnd))\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            }
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }
}

/// `vecsync-server space …`.
struct SpaceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "space", abstract: "Create, list and compact spaces.",
        subcommands: [Create.self, List.self, Compact.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a space: one user's library.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "Its name: 1 to 64 letters, digits, '-' or '_'.")
        var name: String

        func validate() throws {
            let allowed = name.utf8.allSatisfy {
                (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 45 || $0 == 95
            }
            guard (1...64).contains(name.utf8.count), allowed else {
                throw ValidationError("a space name has 1 to 64 letters, digits, '-' or '_'")
            }
        }

        func run() async throws {
            let store = try await store.open()
            let space: SpaceRecord
            do {
                space = try await store.createSpace(named: name, at: nowMilliseconds())
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            print("created space '\(space.name)'")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the spaces.")
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let store = try await store.open()
            for space in try await store.spaces() { print(space.name) }
            await store.close()
        }
    }
}

extension SpaceCommand {
    struct Compact: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a space's bootstrap snapshot, then drop the history it holds when safe.",
            discussion: """
                Folds the change sets after the last snapshot into a new one (each row's \
                winning state, vectors as raw bytes), from which new devices bootstrap instead \
                of replaying the history. Then drops the change sets up to the slowest \
                registered device's pull point, which every device already holds. With \
                --force it drops everything the snapshot holds: a device behind is told to \
                bootstrap again (its unpushed changes are kept and pushed). With \
                --snapshot-only nothing is dropped. Safe to run while the server serves.
                """)
        @OptionGroup var store: StoreOptions
        @Argument(help: "The space.")
        var name: String
        @Flag(name: .long, help: "Drop everything the snapshot holds, even history a device has not pulled.")
        var force = false
        @Flag(name: .long, help: "Make the snapshot, drop nothing.")
        var snapshotOnly = false

        func run() async throws {
            let store = try await store.open()
            do {
                guard let space = try await store.spaces().first(where: { $0.name == name }) else {
                    throw ServerStoreError.noSuchSpace(name)
                }
                let compactor = SpaceCompactor(store: store)
                guard let snapshot = try await compactor.makeSnapshot(spaceID: space.id, at: nowMilliseconds()) else {
                    print("space '\(name)' has no change set: no snapshot made")
                    await store.close()
                    return
                }
                print(
                    "snapshot of '\(name)' through change set \(snapshot.seq): \(snapshot.rows) rows, \(snapshot.size) bytes"
                )
                if !snapshotOnly {
                    let (through, dropped) = try await compactor.compact(spaceID: space.id, force: force)
                    print("compacted through change set \(through): \(dropped) change sets dropped")
                }
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }
}

/// `vecsync-server token …`.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Issue, list and revoke space and device tokens.",
        subcommands: [Issue.self, List.self, Revoke.self])

    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a token for one space, or for one device of a space.",
            discussion: """
                The token is printed once and stored only as its SHA-256: copy it now. Issue one \
                per device, so one can be revoked alone. With --device the token is bound to that \
                device id (the replica's sync site id): it reads the space, but registers and \
                pushes only as that device, so a leaked token cannot write as another.
                """
        )
        @OptionGroup var store: StoreOptions
        @Option(name: .long, help: "The space the token opens.")
        var space: String
        @Option(name: .long, help: "Whom or what it is for.")
        var label = ""
        @Option(name: .long, help: "Bind the token to this device id (its sync site id).")
        var device: String?

        func validate() throws {
            if let device, !(1...200).contains(device.utf8.count) {
                throw ValidationError("--device must have 1 to 200 bytes")
            }
        }

        func run() async throws {
            let store = try await store.open()
            let (token, record) = AccessToken.issue(label: label, device: device, at: nowMilliseconds())
            do {
                try await store.addToken(record, toSpaceNamed: space)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            let scope = device.map { "device '\($0)' of space '\(space)'" } ?? "space '\(space)'"
            print("token id \(record.id) for \(scope) (revoke with: vecsync-server token revoke \(record.id))")
            print(token)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a space's tokens (ids and labels, never the tokens).")
        @OptionGroup var store: StoreOptions
        @Option(name: .long, help: "The space.")
        var space: String

        func run() async throws {
            let store = try await store.open()
            let tokens: [TokenRecord]
            do {
                tokens = try await store.tokens(ofSpaceNamed: space)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            for token in tokens {
                let scope = token.device.map { "device \($0)" } ?? "space"
                print("\(token.id)\t\(token.revokedAt == nil ? "live" : "revoked")\t\(scope)\t\(token.label)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token: its next request is refused.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The token id printed when it was issued.")
        var id: String

        func run() async throws {
            let store = try await store.open()
            let revoked = try await store.revokeToken(id: id, at: nowMilliseconds())
            await store.close()
            guard revoked else { throw ValidationError("no token has id '\(id)'") }
            print("revoked token \(id)")
        }
    }
}
