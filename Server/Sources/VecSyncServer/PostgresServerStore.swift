import Foundation
import PostgresNIO
import VecSyncReplication
import VecSyncWire

/// The store for scale: PostgreSQL through PostgresNIO's connection pool. Several server
/// instances may share one database; the server keeps nothing else.
///
/// A push reads the origin's head, decides (``PushRule``), then writes in one statement: the
/// device's head (only if it is still the one read), the space's counter
/// (`UPDATE spaces … RETURNING last_seq`) and the change set. That statement holds the
/// counter's row lock until it commits, so the pushes of one space commit in the order of
/// their sequence numbers and a pull, reading committed rows after its cursor, never passes
/// over one that commits later — and the lock is held for one round trip, not five. Spaces
/// do not wait for each other.
public final class PostgresServerStore: ServerStore {
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let logger = Logger(label: "vecsync-server.postgres")
    /// The same settings for one connection of its own: ``prepare()`` tries it first.
    private let probeConfiguration: PostgresConnection.Configuration
    /// Where the database is, for messages: `user@host:port/database`.
    private let endpoint: String

    /// How long a connection attempt may take.
    static let connectTimeout: Duration = .seconds(10)

    /// Connects to the database of a `postgres://user:password@host:port/database` URL
    /// (`?sslmode=require` for TLS; without it the connection is plain, for a database on
    /// the same host or private network). Each statement is cut by the server after
    /// `statementTimeout`; connections dropped by a restart of the database are replaced.
    public init(url: String, statementTimeout: Duration = .seconds(30)) throws {
        var configuration = try Self.configuration(url)
        let milliseconds =
            statementTimeout.components.seconds * 1000 + statementTimeout.components.attoseconds / 1_000_000_000_000_000
        configuration.options.additionalStartupParameters = [("statement_timeout", String(max(1, milliseconds)))]
        configuration.options.connectTimeout = Self.connectTimeout
        client = PostgresClient(configuration: configuration)
        var probe = PostgresConnection.Configuration(
            host: configuration.host ?? "localhost", port: configuration.port ?? 5432,
            username: configuration.username, password: configuration.password, database: configuration.database,
            tls: .disable)
        switch URLComponents(string: url)?.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "disable" {
        case "prefer": probe.tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case "require": probe.tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        default: break
        }
        probe.options.connectTimeout = .seconds(Self.connectTimeout.components.seconds)
        probeConfiguration = probe
        endpoint =
            "\(configuration.username)@\(configuration.host ?? "localhost"):\(configuration.port ?? 5432)/\(configuration.database ?? configuration.username)"
        let client = self.client
        runner = Task { await client.run() }
    }

    /// Opens one connection with the store's settings and closes it: fails within the
    /// connection timeout, saying why (refused, unknown host, wrong user or password,
    /// missing database), where the pool would retry without end.
    private func probe() async throws {
        let configuration = probeConfiguration
        let endpoint = self.endpoint
        let logger = self.logger
        try await Deadline.run(
            within: Self.connectTimeout + .seconds(5),
            failing: ServerConfigurationError(
                "PostgreSQL at \(endpoint) did not answer within \(Self.connectTimeout): is it running, and is the address right?"
            )
        ) {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration, id: 0, logger: logger)
                try await connection.close()
            } catch {
                throw ServerConfigurationError(
                    "cannot connect to PostgreSQL at \(endpoint): \(Self.describe(error))")
            }
        }
    }

    /// A PostgreSQL error in words: the server's message when it sent one.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return String(describing: underlying) }
            return String(reflecting: error)
        }
        return String(describing: error)
    }

    /// The client configuration a `postgres://` URL describes.
    static func configuration(_ url: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url),
            ["postgres", "postgresql"].contains(components.scheme ?? ""),
            let host = components.host, !host.isEmpty,
            let user = components.user, !user.isEmpty
        else {
            throw ServerConfigurationError(
                "not a PostgreSQL URL (postgres://user[:password]@host[:port]/database): \(Self.redacted(url))")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        default: throw ServerConfigurationError("sslmode must be disable, prefer or require, not '\(mode)'")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user,
            password: components.password?.removingPercentEncoding ?? components.password,
            database: database.isEmpty ? nil : database, tls: tls)
        configuration.options.maximumConnections = 16
        return configuration
    }

    /// The URL without its password, for messages.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? "postgres://…"
    }

    public func prepare() async throws {
        try await probe()
        // One statement per query: the extended protocol takes one at a time. A
        // transaction-level advisory lock keeps two instances starting together from
        // racing on CREATE TABLE.
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7261)", logger: logger)
            for statement in Self.schema {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            try await connection.query(
                "INSERT INTO store (key, value) VALUES ('id', \(UUID().uuidString.lowercased())) ON CONFLICT (key) DO NOTHING",
                logger: logger)
            try await connection.query(
                "INSERT INTO store (key, value) VALUES ('epoch', \(String(Self.makeEpoch()))) ON CONFLICT (key) DO NOTHING",
                logger: logger)
        }
        try await prepareAttestations()
    }

    /// In stores made before attested writes, attests what the stored change sets (their
    /// origins' own writes) and snapshots (every write) hold, once.
    private func prepareAttestations() async throws {
        for try await _ in try await client.query(
            "SELECT value FROM store WHERE key = 'writes-attested'", logger: logger
        ).decode(String.self) { return }
        var after: (Int64, Int64) = (0, 0)
        while true {
            var batch: [(Int64, Int64, Data)] = []
            for try await row in try await client.query(
                """
                SELECT space_id, seq, body FROM change_sets WHERE (space_id, seq) > (\(after.0), \(after.1))
                ORDER BY space_id, seq LIMIT 100
                """, logger: logger
            ).decode((Int64, Int64, Data).self) { batch.append(row) }
            guard let last = batch.last else { break }
            after = (last.0, last.1)
            for (spaceID, _, body) in batch {
                guard let changeSet = try? ChangeSet(serialized: body) else { continue }
                try await record(WriteAttestation(changeSet), inSpace: spaceID)
            }
        }
        for try await (spaceID, body) in try await client.query(
            "SELECT space_id, body FROM snapshots", logger: logger
        ).decode((Int64, Data).self) {
            guard let changeSet = try? ChangeSet(serialized: body) else { continue }
            var writes = WriteAttestation(changeSet)
            writes.own += writes.relayed.map(\.digest)
            writes.raised += writes.bounded
            try await record(writes, inSpace: spaceID)
        }
        try await client.query(
            "INSERT INTO store (key, value) VALUES ('writes-attested', '1') ON CONFLICT (key) DO NOTHING",
            logger: logger)
    }

    /// Records a change set's own writes as attested, and the counts its authority raised.
    private func record(_ writes: WriteAttestation, inSpace spaceID: Int64) async throws {
        if !writes.own.isEmpty {
            try await client.query(
                """
                INSERT INTO attested_writes (space_id, digest) SELECT \(spaceID), unnest(\(writes.own)::text[])
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        let counts = writes.raisedCounts
        if !counts.isEmpty {
            try await client.query(
                """
                INSERT INTO authority_counts AS a (space_id, cell, count)
                SELECT \(spaceID), c, n FROM unnest(\(Array(counts.keys))::text[], \(Array(counts.values))::bigint[]) AS u(c, n)
                ON CONFLICT (space_id, cell) DO UPDATE SET count = greatest(a.count, excluded.count)
                """, logger: logger)
        }
    }

    /// Why a change set's writes are refused (``WriteAttestation``).
    private func refusal(of writes: WriteAttestation, inSpace spaceID: Int64) async throws -> String? {
        var attested = Set<String>()
        let relayed = Array(Set(writes.relayed.map(\.digest)))
        if !relayed.isEmpty {
            for try await digest in try await client.query(
                """
                SELECT digest FROM attested_writes WHERE space_id = \(spaceID) AND digest = ANY(\(relayed)::text[])
                """, logger: logger
            ).decode(String.self) { attested.insert(digest) }
        }
        var counts: [String: Int64] = [:]
        let cells = Array(Set(writes.bounded.map(\.digest)))
        if !cells.isEmpty {
            for try await (cell, count) in try await client.query(
                """
                SELECT cell, count FROM authority_counts WHERE space_id = \(spaceID) AND cell = ANY(\(cells)::text[])
                """, logger: logger
            ).decode((String, Int64).self) { counts[cell] = count }
        }
        return writes.refusal(isAttested: attested.contains, recordedCount: { counts[$0] ?? 0 })
    }

    public func storeID() async throws -> String {
        let rows = try await client.query("SELECT value FROM store WHERE key = 'id'", logger: logger)
        for try await id in rows.decode(String.self) { return id }
        throw ServerConfigurationError("the store has no id: run prepare() first")
    }

    public func epoch() async throws -> Int64 {
        let rows = try await client.query("SELECT value FROM store WHERE key = 'epoch'", logger: logger)
        for try await text in rows.decode(String.self) {
            if let epoch = Int64(text) { return epoch }
        }
        throw ServerConfigurationError("the store has no epoch: run prepare() first")
    }

    public func newEpoch() async throws -> Int64 {
        let epoch = Self.makeEpoch()
        try await client.query(
            """
            INSERT INTO store (key, value) VALUES ('epoch', \(String(epoch)))
            ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, logger: logger)
        return epoch
    }

    public func lastSequence(inSpace spaceID: Int64) async throws -> Int64 {
        let rows = try await client.query("SELECT last_seq FROM spaces WHERE id = \(spaceID)", logger: logger)
        for try await seq in rows.decode(Int64.self) { return seq }
        return 0
    }

    public func createSpace(named name: String, at time: Int64) async throws -> SpaceRecord {
        let rows = try await client.query(
            "INSERT INTO spaces (name, created_at) VALUES (\(name), \(time)) ON CONFLICT (name) DO NOTHING RETURNING id",
            logger: logger)
        for try await id in rows.decode(Int64.self) {
            return SpaceRecord(id: id, name: name, createdAt: time)
        }
        throw ServerStoreError.spaceExists(name)
    }

    public func spaces() async throws -> [SpaceRecord] {
        var spaces: [SpaceRecord] = []
        let rows = try await client.query("SELECT id, name, created_at FROM spaces ORDER BY name", logger: logger)
        for try await (id, name, created) in rows.decode((Int64, String, Int64).self) {
            spaces.append(SpaceRecord(id: id, name: name, createdAt: created))
        }
        return spaces
    }

    private func spaceID(named name: String) async throws -> Int64 {
        let rows = try await client.query("SELECT id FROM spaces WHERE name = \(name)", logger: logger)
        for try await id in rows.decode(Int64.self) { return id }
        throw ServerStoreError.noSuchSpace(name)
    }

    public func addToken(_ token: TokenRecord, toSpaceNamed space: String) async throws {
        let spaceID = try await spaceID(named: space)
        try await client.query(
            """
            INSERT INTO tokens (id, space_id, hash, label, created_at, device)
            VALUES (\(token.id), \(spaceID), \(token.hash), \(token.label), \(token.createdAt), \(token.device))
            """, logger: logger)
    }

    public func revokeToken(id: String, at time: Int64) async throws -> Bool {
        let rows = try await client.query(
            "UPDATE tokens SET revoked_at = coalesce(revoked_at, \(time)) WHERE id = \(id) RETURNING id", logger: logger
        )
        for try await _ in rows.decode(String.self) { return true }
        return false
    }

    public func tokens(ofSpaceNamed space: String) async throws -> [TokenRecord] {
        let spaceID = try await spaceID(named: space)
        var tokens: [TokenRecord] = []
        let rows = try await client.query(
            """
            SELECT id, hash, label, created_at, revoked_at, device FROM tokens WHERE space_id = \(spaceID)
            ORDER BY created_at, id
            """, logger: logger)
        for try await (id, hash, label, created, revoked, device)
            in rows.decode((String, String, String, Int64, Int64?, String?).self)
        {
            tokens.append(
                TokenRecord(
                    id: id, hash: hash, label: label, createdAt: created, revokedAt: revoked, device: device))
        }
        return tokens
    }

    public func grant(forTokenHash hash: String) async throws -> TokenGrant? {
        let rows = try await client.query(
            """
            SELECT t.id, s.id, s.name, t.device FROM tokens t JOIN spaces s ON s.id = t.space_id
            WHERE t.hash = \(hash) AND t.revoked_at IS NULL
            """, logger: logger)
        for try await (token, space, name, device) in rows.decode((String, Int64, String, String?).self) {
            return TokenGrant(tokenID: token, spaceID: space, spaceName: name, device: device)
        }
        return nil
    }

    /// One statement, so two instances cannot both take the last request: the row of the
    /// bucket is refilled for the time since its last request and decremented only when a
    /// whole request is left (otherwise nothing is written and no row comes back). The
    /// database's clock is the one clock of every instance.
    public func takeRequest(fromBucket key: String, perSecond: Double, burst: Int) async throws -> Bool {
        guard perSecond > 0 else { return true }
        let capacity = Double(max(1, burst))
        let rows = try await client.query(
            """
            WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)
            INSERT INTO rate_buckets AS b (key, tokens, updated_at)
            SELECT \(key), \(capacity) - 1, now.ms FROM now
            ON CONFLICT (key) DO UPDATE SET
              tokens = least(\(capacity), b.tokens + greatest(0, excluded.updated_at - b.updated_at) * \(perSecond) / 1000.0) - 1,
              updated_at = greatest(b.updated_at, excluded.updated_at)
            WHERE least(\(capacity), b.tokens + greatest(0, excluded.updated_at - b.updated_at) * \(perSecond) / 1000.0) >= 1
            RETURNING b.tokens
            """, logger: logger)
        for try await _ in rows.decode(Double.self) { return true }
        return false
    }

    public func registerDevice(
        _ registration: DeviceRegistration, inSpace spaceID: Int64, claimedBy claimant: TokenGrant?, at time: Int64
    ) async throws -> ServerDevice? {
        // The update (and the claim) holds only for a token that may act as the device.
        let rows = try await client.query(
            """
            INSERT INTO devices AS d (space_id, site, name, platform, registered_at, owner_token)
            VALUES (\(spaceID), \(registration.site), \(registration.name), \(registration.platform), \(time),
                    \(claimant?.tokenID))
            ON CONFLICT (space_id, site) DO UPDATE SET name = excluded.name, platform = excluded.platform,
              owner_token = coalesce(excluded.owner_token, d.owner_token)
            WHERE excluded.owner_token IS NULL OR d.owner_token IS NULL OR d.owner_token = excluded.owner_token
              OR \(claimant?.device != nil)
              OR NOT EXISTS (SELECT 1 FROM tokens t WHERE t.id = d.owner_token AND t.revoked_at IS NULL)
            RETURNING site
            """, logger: logger)
        var changed = false
        for try await _ in rows.decode(String.self) { changed = true }
        guard changed else { return nil }
        guard let device = try await devices(inSpace: spaceID, site: registration.site).first else {
            throw ServerStoreError.noSuchSpace("#\(spaceID)")
        }
        return device
    }

    public func owner(ofDevice site: String, inSpace spaceID: Int64) async throws -> DeviceOwner? {
        let rows = try await client.query(
            """
            SELECT d.owner_token, t.id IS NOT NULL AND t.revoked_at IS NULL
            FROM devices d LEFT JOIN tokens t ON t.id = d.owner_token
            WHERE d.space_id = \(spaceID) AND d.site = \(site)
            """, logger: logger)
        for try await (token, live) in rows.decode((String?, Bool).self) {
            return DeviceOwner(tokenID: token, isLive: live)
        }
        return nil
    }

    public func push(_ changeSet: IncomingChangeSet, inSpace spaceID: Int64, at time: Int64) async throws -> PushOutcome
    {
        // Read, decide, then write in one statement that holds only if the origin's head is
        // still the one read (another push of the same origin may have moved it: decide again).
        // The space's counter row is locked for that one statement only.
        var checked = changeSet.writes == nil
        for _ in 0..<Self.pushAttempts {
            var head: Int64?
            var sameRange: ServerChangeSet?
            var damaged = false
            for try await (deviceHead, seq, origin, since, through, count, size, sha, received, mark)
                in try await client.query(
                    """
                    SELECT d.head, c.seq, c.origin, c.since, c.through, c.rows, c.size, c.sha256, c.received_at,
                      c.damaged
                    FROM devices d LEFT JOIN change_sets c ON c.space_id = d.space_id AND c.origin = d.site
                      AND c.since = \(changeSet.since) AND c.through = \(changeSet.through)
                    WHERE d.space_id = \(spaceID) AND d.site = \(changeSet.origin)
                    """, logger: logger
                ).decode((Int64, Int64?, String?, Int64?, Int64?, Int64?, Int64?, String?, Int64?, Bool?).self)
            {
                head = deviceHead
                if let seq, let origin, let since, let through, let count, let size, let sha, let received {
                    sameRange = ServerChangeSet(
                        seq: seq, origin: origin, since: since, through: through, rows: count, size: size,
                        sha256: sha, receivedAt: received)
                    damaged = mark ?? false
                }
            }
            guard let head else { return .unregisteredOrigin }
            let decision = PushRule.decide(changeSet, head: head, sameRange: sameRange, sameRangeIsDamaged: damaged)
            if !checked, let writes = changeSet.writes, decision == nil || decision.map(Self.isRepair) == true {
                // Recorded before the change set is stored: a write recorded for a push that
                // is then not stored is still its origin's own, which it may push any time.
                if let reason = try await refusal(of: writes, inSpace: spaceID) { return .forged(reason) }
                try await record(writes, inSpace: spaceID)
                checked = true
            }
            switch decision {
            case .repaired(let stored):
                if let repaired = try await repair(stored, with: changeSet, inSpace: spaceID) { return repaired }
                continue  // repaired or replaced meanwhile: decide again
            case let outcome?: return outcome
            case nil: break
            }
            let size = Int64(changeSet.body.count)
            let quota = changeSet.quotaBytes ?? Int64.max
            if changeSet.quotaBytes != nil {
                let held = try await heldBytes(inSpace: spaceID)
                if held + size > quota { return .overQuota(held: held, quota: quota) }
            }
            // The quota is checked again in the statement (a concurrent push may have stored
            // meanwhile); when it no longer holds, nothing is written and the loop decides again.
            let rows = try await client.query(
                """
                WITH device AS (
                  UPDATE devices SET head = \(changeSet.through), last_push_at = \(time), change_sets = change_sets + 1,
                    rows = rows + \(changeSet.rows), bytes = bytes + \(size)
                  WHERE space_id = \(spaceID) AND site = \(changeSet.origin) AND head = \(head)
                    AND (SELECT COALESCE(SUM(size), 0) FROM change_sets WHERE space_id = \(spaceID)) + \(size) <= \(quota)
                  RETURNING 1),
                next AS (
                  UPDATE spaces SET last_seq = last_seq + 1
                  WHERE id = \(spaceID) AND EXISTS (SELECT 1 FROM device)
                  RETURNING last_seq)
                INSERT INTO change_sets (space_id, seq, origin, since, through, rows, size, sha256, received_at, body)
                SELECT \(spaceID), next.last_seq, \(changeSet.origin), \(changeSet.since), \(changeSet.through),
                       \(changeSet.rows), \(size), \(changeSet.sha256), \(time), \(changeSet.body)
                FROM next
                RETURNING seq
                """, logger: logger)
            for try await seq in rows.decode(Int64.self) {
                return .stored(
                    ServerChangeSet(
                        seq: seq, origin: changeSet.origin, since: changeSet.since, through: changeSet.through,
                        rows: changeSet.rows, size: size, sha256: changeSet.sha256, receivedAt: time))
            }
        }
        throw ServerConfigurationError(
            "'\(changeSet.origin)' kept moving while its push was decided (\(Self.pushAttempts) attempts); retry")
    }

    /// The bytes of the change sets a space holds.
    private func heldBytes(inSpace spaceID: Int64) async throws -> Int64 {
        for try await held in try await client.query(
            "SELECT COALESCE(SUM(size), 0)::bigint FROM change_sets WHERE space_id = \(spaceID)", logger: logger
        ).decode(Int64.self) {
            return held
        }
        return 0
    }

    private static func isRepair(_ outcome: PushOutcome) -> Bool {
        if case .repaired = outcome { return true }
        return false
    }

    /// How often a push decides again when a concurrent push of the same origin moved its head.
    private static let pushAttempts = 16

    /// Replaces a damaged entry's body, SHA-256, row count and size with a push of its range,
    /// clears its mark and corrects its origin's counts, in one statement. It holds only while
    /// the entry is still marked with the SHA-256 read; nil when another push repaired it first.
    private func repair(_ stored: ServerChangeSet, with changeSet: IncomingChangeSet, inSpace spaceID: Int64)
        async throws -> PushOutcome?
    {
        let size = Int64(changeSet.body.count)
        let rows = try await client.query(
            """
            WITH fixed AS (
              UPDATE change_sets SET body = \(changeSet.body), sha256 = \(changeSet.sha256), rows = \(changeSet.rows),
                size = \(size), damaged = false
              WHERE space_id = \(spaceID) AND seq = \(stored.seq) AND damaged AND sha256 = \(stored.sha256)
              RETURNING seq),
            counts AS (
              UPDATE devices SET rows = rows + \(changeSet.rows - stored.rows), bytes = bytes + \(size - stored.size)
              WHERE space_id = \(spaceID) AND site = \(stored.origin) AND EXISTS (SELECT 1 FROM fixed)
              RETURNING 1)
            SELECT seq FROM fixed
            """, logger: logger)
        for try await _ in rows.decode(Int64.self) {
            var entry = stored
            (entry.rows, entry.size, entry.sha256) = (changeSet.rows, size, changeSet.sha256)
            return .repaired(entry)
        }
        return nil
    }

    public func markDamaged(inSpace spaceID: Int64, seq: Int64, sha256: String) async throws {
        try await client.query(
            """
            UPDATE change_sets SET damaged = true
            WHERE space_id = \(spaceID) AND seq = \(seq) AND sha256 = \(sha256) AND NOT damaged
            """, logger: logger)
    }

    public func changeSets(inSpace spaceID: Int64, after cursor: Int64, limit: Int) async throws -> [ServerChangeSet] {
        var entries: [ServerChangeSet] = []
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.entryColumns) FROM change_sets WHERE space_id = \(spaceID) AND seq > \(cursor)
            ORDER BY seq LIMIT \(Int64(limit))
            """, logger: logger)
        for try await row in rows.decode(Self.EntryRow.self) { entries.append(Self.entry(row)) }
        return entries
    }

    public func changeSet(inSpace spaceID: Int64, seq: Int64) async throws -> (entry: ServerChangeSet, body: Data)? {
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.entryColumns), body FROM change_sets WHERE space_id = \(spaceID) AND seq = \(seq)
            """, logger: logger)
        for try await (seq, origin, since, through, count, size, sha, received, body)
            in rows.decode((Int64, String, Int64, Int64, Int64, Int64, String, Int64, Data).self)
        {
            return (Self.entry((seq, origin, since, through, count, size, sha, received)), body)
        }
        return nil
    }

    public func changeSetBytes(inSpace spaceID: Int64, seq: Int64, range: Range<Int>) async throws -> Data? {
        try await bodyBytes(of: "change_sets", inSpace: spaceID, seq: seq, range: range)
    }

    public func snapshotBytes(inSpace spaceID: Int64, seq: Int64, part: Int?, range: Range<Int>) async throws
        -> Data?
    {
        guard let part else { return try await bodyBytes(of: "snapshots", inSpace: spaceID, seq: seq, range: range) }
        return try await bodyBytes(of: "snapshot_parts", inSpace: spaceID, seq: seq, part: part, range: range)
    }

    /// The bytes `range` of the body of the row of `table` with `seq` in the space; nil when
    /// there is no such row. `substring` of a body stored out of line uncompressed (change
    /// sets and snapshots are mostly float32 embeddings, which do not compress) fetches only
    /// the TOAST chunks of the range.
    private func bodyBytes(
        of table: String, inSpace spaceID: Int64, seq: Int64, part: Int? = nil, range: Range<Int>
    ) async throws -> Data? {
        let partIs = part.map { " AND part = \($0)" } ?? ""
        let rows = try await client.query(
            """
            SELECT substring(body from \(Int32(clamping: range.lowerBound + 1)) for \(Int32(clamping: range.count)))
            FROM \(unescaped: table) WHERE space_id = \(spaceID) AND seq = \(seq)\(unescaped: partIs)
            """, logger: logger)
        for try await bytes in rows.decode(Data.self) { return bytes }
        return nil
    }

    public func recordPull(bySite site: String, inSpace spaceID: Int64, after cursor: Int64, at time: Int64)
        async throws
    {
        try await client.query(
            """
            UPDATE devices SET last_pull_at = \(time),
              pulled_through = greatest(pulled_through, least(\(cursor), (SELECT last_seq FROM spaces WHERE id = \(spaceID))))
            WHERE space_id = \(spaceID) AND site = \(site)
            """, logger: logger)
    }

    public func slowestPullPoint(inSpace spaceID: Int64) async throws -> Int64 {
        let rows = try await client.query(
            "SELECT coalesce(min(pulled_through), 0)::bigint FROM devices WHERE space_id = \(spaceID)", logger: logger)
        for try await point in rows.decode(Int64.self) { return point }
        return 0
    }

    public func snapshotEntry(inSpace spaceID: Int64) async throws -> ServerSnapshot? {
        let rows = try await client.query(
            "SELECT \(unescaped: Self.snapshotColumns) FROM snapshots WHERE space_id = \(spaceID)", logger: logger)
        for try await row in rows.decode(Self.SnapshotRow.self) { return try Self.snapshotEntry(row) }
        return nil
    }

    public func saveSnapshotPart(_ body: Data, part: Int, seq: Int64, inSpace spaceID: Int64) async throws -> Bool {
        let rows = try await client.query(
            """
            INSERT INTO snapshot_parts AS p (space_id, seq, part, body)
            SELECT \(spaceID), \(seq), \(Int32(clamping: part)), \(body)
            WHERE NOT EXISTS (SELECT 1 FROM snapshots WHERE space_id = \(spaceID) AND seq >= \(seq))
            ON CONFLICT (space_id, seq, part) DO UPDATE SET body = excluded.body
            RETURNING p.part
            """, logger: logger)
        for try await _ in rows.decode(Int32.self) { return true }
        return false
    }

    public func saveSnapshot(_ entry: ServerSnapshot, body: Data, inSpace spaceID: Int64) async throws -> Bool {
        let heads = try SnapshotJSON.encode(entry.heads)
        let parts = try entry.parts.map(SnapshotJSON.encodeParts)
        let rows = try await client.query(
            """
            INSERT INTO snapshots AS s (space_id, seq, heads, rows, size, sha256, created_at, body, parts)
            VALUES (\(spaceID), \(entry.seq), \(heads), \(entry.rows), \(entry.size), \(entry.sha256),
                    \(entry.createdAt), \(body), \(parts))
            ON CONFLICT (space_id) DO UPDATE SET seq = excluded.seq, heads = excluded.heads, rows = excluded.rows,
              size = excluded.size, sha256 = excluded.sha256, created_at = excluded.created_at, body = excluded.body,
              parts = excluded.parts
            WHERE excluded.seq > s.seq
            RETURNING s.seq
            """, logger: logger)
        var saved = false
        for try await _ in rows.decode(Int64.self) { saved = true }
        // The parts no entry names: of snapshots replaced, or left by a compaction that
        // stopped. Parts past the space's snapshot are being made: kept.
        try await client.query(
            """
            DELETE FROM snapshot_parts p
            WHERE p.space_id = \(spaceID) AND p.seq <= (SELECT seq FROM snapshots WHERE space_id = \(spaceID))
              AND NOT EXISTS (
                SELECT 1 FROM snapshots s
                WHERE s.space_id = \(spaceID) AND s.seq = p.seq AND s.parts IS NOT NULL
                  AND p.part < json_array_length(s.parts::json))
            """, logger: logger)
        return saved
    }

    public func compact(inSpace spaceID: Int64, through: Int64) async throws -> Int {
        // A snapshot's seq only grows, so what is checked here still holds when the
        // statement below runs; that statement drops and records in one step.
        let snapshot = try await snapshotEntry(inSpace: spaceID)?.seq ?? 0
        guard through <= snapshot else {
            throw ServerStoreError.compactionPastSnapshot(requested: through, snapshot: snapshot)
        }
        let rows = try await client.query(
            """
            WITH dropped AS (
              DELETE FROM change_sets WHERE space_id = \(spaceID) AND seq <= \(through) RETURNING 1)
            UPDATE snapshots SET compacted_through = greatest(compacted_through, \(through))
            WHERE space_id = \(spaceID)
            RETURNING (SELECT count(*) FROM dropped)::bigint
            """, logger: logger)
        for try await dropped in rows.decode(Int64.self) { return Int(dropped) }
        throw ServerStoreError.compactionPastSnapshot(requested: through, snapshot: 0)
    }

    private typealias SnapshotRow = (Int64, String, Int64, Int64, String, Int64, Int64, String?)

    private static let snapshotColumns = "seq, heads, rows, size, sha256, created_at, compacted_through, parts"

    private static func snapshotEntry(_ row: SnapshotRow) throws -> ServerSnapshot {
        ServerSnapshot(
            seq: row.0, heads: try SnapshotJSON.decode(row.1), rows: row.2, size: row.3, sha256: row.4,
            createdAt: row.5, compactedThrough: row.6, parts: try row.7.map(SnapshotJSON.decodeParts))
    }

    public func devices(inSpace spaceID: Int64) async throws -> [ServerDevice] {
        try await devices(inSpace: spaceID, site: nil)
    }

    private func devices(inSpace spaceID: Int64, site: String?) async throws -> [ServerDevice] {
        var damaged: [String: [ServerDamagedChangeSet]] = [:]
        for try await (origin, seq, since, through) in try await client.query(
            """
            SELECT origin, seq, since, through FROM change_sets WHERE space_id = \(spaceID) AND damaged ORDER BY seq
            """, logger: logger
        ).decode((String, Int64, Int64, Int64).self) {
            damaged[origin, default: []].append(ServerDamagedChangeSet(seq: seq, since: since, through: through))
        }
        var devices: [ServerDevice] = []
        let rows = try await client.query(
            """
            SELECT site, name, platform, registered_at, last_push_at, last_pull_at, head, change_sets, rows, bytes
            FROM devices WHERE space_id = \(spaceID) AND (\(site)::text IS NULL OR site = \(site)) ORDER BY site
            """, logger: logger)
        for try await row in rows.decode(
            (String, String, String, Int64, Int64?, Int64?, Int64, Int64, Int64, Int64).self)
        {
            devices.append(
                ServerDevice(
                    site: row.0, name: row.1, platform: row.2, registeredAt: row.3, lastPushAt: row.4,
                    lastPullAt: row.5, head: row.6, changeSets: row.7, rows: row.8, bytes: row.9,
                    damaged: damaged[row.0]))
        }
        return devices
    }

    public func close() async {
        runner.cancel()
        _ = await runner.value
    }

    private typealias EntryRow = (Int64, String, Int64, Int64, Int64, Int64, String, Int64)

    private static let entryColumns = "seq, origin, since, through, rows, size, sha256, received_at"

    private static func entry(_ row: EntryRow) -> ServerChangeSet {
        ServerChangeSet(
            seq: row.0, origin: row.1, since: row.2, through: row.3, rows: row.4, size: row.5,
            sha256: row.6, receivedAt: row.7)
    }
}

/// A server setting that cannot be used, with what is wrong.
public struct ServerConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}
