import Foundation
import GRDB
import GRDBSQLite
import VecSyncReplication
import VecSyncWire

/// The default store: one SQLite file in WAL mode (`<data>/vecsync-server.sqlite`), through GRDB.
///
/// Writes are serialized by SQLite, so a space's sequence numbers are assigned in commit
/// order and a pull never passes over a change set committed later with a smaller number.
///
/// The rate limits are counted in this object's memory, not in the file: a SQLite store is
/// served by one process, and a write per request (with its fsync) would double the cost of
/// every read. Two processes opening the same file would each count on their own; use
/// PostgreSQL to run several instances.
public final class SQLiteServerStore: ServerStore {
    /// The database file.
    public let path: String
    private let pool: DatabasePool
    private let limiter = RateLimiter()

    /// Opens (creating when missing) the store in the folder `directory`.
    public init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("vecsync-server.sqlite").path
        let isNew = !FileManager.default.fileExists(atPath: path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        pool = try DatabasePool(path: path, configuration: configuration)
        // A push is answered once its commit is on disk: GRDB opens WAL databases with
        // synchronous NORMAL (a power loss may drop the last commits, which devices were told
        // are stored, and would not push again); FULL syncs the WAL at every commit.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        // Tokens' hashes and every space's data: readable by the server's user only (SQLite
        // gives the WAL and shared-memory files the database file's permissions).
        if isNew { try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path) }
    }

    /// The writer connection's `PRAGMA synchronous` (2: FULL, every commit synced).
    func writerSynchronous() async throws -> Int {
        try await pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    public func prepare() async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS store (
                      key TEXT PRIMARY KEY,
                      value TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS spaces (
                      id INTEGER PRIMARY KEY,
                      name TEXT NOT NULL UNIQUE,
                      created_at INTEGER NOT NULL,
                      last_seq INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE IF NOT EXISTS tokens (
                      id TEXT PRIMARY KEY,
                      space_id INTEGER NOT NULL REFERENCES spaces(id),
                      hash TEXT NOT NULL UNIQUE,
                      label TEXT NOT NULL,
                      created_at INTEGER NOT NULL,
                      revoked_at INTEGER,
                      device TEXT);
                    CREATE TABLE IF NOT EXISTS devices (
                      space_id INTEGER NOT NULL REFERENCES spaces(id),
                      site TEXT NOT NULL,
                      name TEXT NOT NULL,
                      platform TEXT NOT NULL,
                      registered_at INTEGER NOT NULL,
                      last_push_at INTEGER,
                      last_pull_at INTEGER,
                      head INTEGER NOT NULL DEFAULT 0,
                      change_sets INTEGER NOT NULL DEFAULT 0,
                      rows INTEGER NOT NULL DEFAULT 0,
                      bytes INTEGER NOT NULL DEFAULT 0,
                      PRIMARY KEY (space_id, site));
                    CREATE TABLE IF NOT EXISTS change_sets (
                      space_id INTEGER NOT NULL REFERENCES spaces(id),
                      seq INTEGER NOT NULL,
                      origin TEXT NOT NULL,
                      since INTEGER NOT NULL,
                      through INTEGER NOT NULL,
                      rows INTEGER NOT NULL,
                      size INTEGER NOT NULL,
                      sha256 TEXT NOT NULL,
                      received_at INTEGER NOT NULL,
                      body BLOB NOT NULL,
                      PRIMARY KEY (space_id, seq),
                      UNIQUE (space_id, origin, since, through));
                    CREATE TABLE IF NOT EXISTS snapshots (
                      space_id INTEGER PRIMARY KEY REFERENCES spaces(id),
                      seq INTEGER NOT NULL,
                      heads TEXT NOT NULL,
                      rows INTEGER NOT NULL,
                      size INTEGER NOT NULL,
                      sha256 TEXT NOT NULL,
                      created_at INTEGER NOT NULL,
                      compacted_through INTEGER NOT NULL DEFAULT 0,
                      body BLOB NOT NULL,
                      parts TEXT);
                    CREATE TABLE IF NOT EXISTS snapshot_parts (
                      space_id INTEGER NOT NULL REFERENCES spaces(id),
                      seq INTEGER NOT NULL,
                      part INTEGER NOT NULL,
                      body BLOB NOT NULL,
                      PRIMARY KEY (space_id, seq, part));
                    """)
            // Stores made before snapshots in parts lack the column.
            if try !db.columns(in: "snapshots").contains(where: { $0.name == "parts" }) {
                try db.execute(sql: "ALTER TABLE snapshots ADD COLUMN parts TEXT")
            }
            // Stores made before device tokens lack the column.
            if try !db.columns(in: "tokens").contains(where: { $0.name == "device" }) {
                try db.execute(sql: "ALTER TABLE tokens ADD COLUMN device TEXT")
            }
            // … and before compaction, the devices' pull points.
            if try !db.columns(in: "devices").contains(where: { $0.name == "pulled_through" }) {
                try db.execute(sql: "ALTER TABLE devices ADD COLUMN pulled_through INTEGER NOT NULL DEFAULT 0")
            }
            // … and before devices had an owning token.
            if try !db.columns(in: "devices").contains(where: { $0.name == "owner_token" }) {
                try db.execute(sql: "ALTER TABLE devices ADD COLUMN owner_token TEXT")
            }
            // … and before damaged change sets were recorded, their mark (with an index of
            // the marked ones, which every status request lists).
            if try !db.columns(in: "change_sets").contains(where: { $0.name == "damaged" }) {
                try db.execute(sql: "ALTER TABLE change_sets ADD COLUMN damaged INTEGER NOT NULL DEFAULT 0")
            }
            try db.execute(
                sql:
                    "CREATE INDEX IF NOT EXISTS change_sets_damaged ON change_sets (space_id, seq) WHERE damaged = 1")
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS attested_writes (
                      space_id INTEGER NOT NULL REFERENCES spaces(id),
                      digest TEXT NOT NULL,
                      PRIMARY KEY (space_id, digest)) WITHOUT ROWID;
                    CREATE TABLE IF NOT EXISTS authority_counts (
                      space_id INTEGER NOT NULL REFERENCES spaces(id),
                      cell TEXT NOT NULL,
                      count INTEGER NOT NULL,
                      PRIMARY KEY (space_id, cell)) WITHOUT ROWID;
                    """)
            try db.execute(
                sql: "INSERT OR IGNORE INTO store (key, value) VALUES ('id', ?)",
                arguments: [UUID().uuidString.lowercased()])
            try db.execute(
                sql: "INSERT OR IGNORE INTO store (key, value) VALUES ('epoch', ?)",
                arguments: [String(Self.makeEpoch())])
            // Stores made before writes were attested: attest what they hold, once.
            if try String.fetchOne(db, sql: "SELECT value FROM store WHERE key = 'writes-attested'") == nil {
                try Self.attestStoredWrites(db)
                try db.execute(sql: "INSERT INTO store (key, value) VALUES ('writes-attested', '1')")
            }
        }
    }

    /// Records the writes of every stored change set (its origin's own) and snapshot (all of
    /// them: the server folded them from change sets) as attested.
    private static func attestStoredWrites(_ db: Database) throws {
        let bodies = try Row.fetchCursor(
            db,
            sql: """
                SELECT space_id, body, 0 FROM change_sets
                UNION ALL SELECT space_id, body, 1 FROM snapshots
                """)
        while let row = try bodies.next() {
            guard let changeSet = try? ChangeSet(serialized: row[1] as Data) else { continue }
            var writes = WriteAttestation(changeSet)
            if (row[2] as Int64) == 1 {
                writes.own += writes.relayed.map(\.digest)
                writes.raised += writes.bounded
            }
            try record(writes, db, spaceID: row[0])
        }
    }

    /// Records a change set's own writes as attested, and the counts its authority raised.
    private static func record(_ writes: WriteAttestation, _ db: Database, spaceID: Int64) throws {
        let attest = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO attested_writes (space_id, digest) VALUES (?, ?)")
        for digest in writes.own { try attest.execute(arguments: [spaceID, digest]) }
        let raise = try db.cachedStatement(
            sql: """
                INSERT INTO authority_counts (space_id, cell, count) VALUES (?, ?, ?)
                ON CONFLICT (space_id, cell) DO UPDATE SET count = max(count, excluded.count)
                """)
        for (cell, count) in writes.raisedCounts { try raise.execute(arguments: [spaceID, cell, count]) }
    }

    /// Why a change set's writes are refused (``WriteAttestation``), read in the push's transaction.
    private static func refusal(of writes: WriteAttestation, _ db: Database, spaceID: Int64) throws -> String? {
        let attested = try db.cachedStatement(
            sql: "SELECT 1 FROM attested_writes WHERE space_id = ? AND digest = ?")
        let counts = try db.cachedStatement(
            sql: "SELECT count FROM authority_counts WHERE space_id = ? AND cell = ?")
        return try writes.refusal(
            isAttested: { try Int64.fetchOne(attested, arguments: [spaceID, $0]) != nil },
            recordedCount: { try Int64.fetchOne(counts, arguments: [spaceID, $0]) ?? 0 })
    }

    public func storeID() async throws -> String {
        try await pool.read { db in
            guard let id = try String.fetchOne(db, sql: "SELECT value FROM store WHERE key = 'id'") else {
                throw ServerConfigurationError("the store has no id: run prepare() first")
            }
            return id
        }
    }

    public func epoch() async throws -> Int64 {
        try await pool.read { db in
            guard let text = try String.fetchOne(db, sql: "SELECT value FROM store WHERE key = 'epoch'"),
                let epoch = Int64(text)
            else {
                throw ServerConfigurationError("the store has no epoch: run prepare() first")
            }
            return epoch
        }
    }

    public func newEpoch() async throws -> Int64 {
        let epoch = Self.makeEpoch()
        try await pool.write { db in
            try db.execute(
                sql:
                    "INSERT INTO store (key, value) VALUES ('epoch', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                arguments: [String(epoch)])
        }
        return epoch
    }

    public func lastSequence(inSpace spaceID: Int64) async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT last_seq FROM spaces WHERE id = ?", arguments: [spaceID]) ?? 0
        }
    }

    /// Writes a consistent copy of the store to a new file at `path` while it serves
    /// (`VACUUM INTO`, from a read snapshot: pushes go on meanwhile), then gives the copy a
    /// new generation (``epoch()``), so that clients detect a restore from it. Returns the
    /// copy's epoch. The file must not exist.
    public func backup(to path: String) async throws -> Int64 {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw ServerConfigurationError("'\(path)' exists: a backup is written to a new file")
        }
        // A connection of its own, outside any transaction: VACUUM INTO reads one snapshot of
        // the WAL database and takes no lock that would stop the server's writer.
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let source = try DatabaseQueue(path: self.path, configuration: configuration)
        try await source.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM INTO ?", arguments: [path])
        }
        try source.close()
        let epoch = Self.makeEpoch()
        let copy = try DatabaseQueue(path: path)
        try await copy.write { db in
            try db.execute(
                sql: "UPDATE store SET value = ? WHERE key = 'epoch'", arguments: [String(epoch)])
        }
        try copy.close()
        return epoch
    }

    public func createSpace(named name: String, at time: Int64) async throws -> SpaceRecord {
        try await pool.write { db in
            if try Int64.fetchOne(db, sql: "SELECT id FROM spaces WHERE name = ?", arguments: [name]) != nil {
                throw ServerStoreError.spaceExists(name)
            }
            try db.execute(sql: "INSERT INTO spaces (name, created_at) VALUES (?, ?)", arguments: [name, time])
            return SpaceRecord(id: db.lastInsertedRowID, name: name, createdAt: time)
        }
    }

    public func spaces() async throws -> [SpaceRecord] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, created_at FROM spaces ORDER BY name").map {
                SpaceRecord(id: $0[0], name: $0[1], createdAt: $0[2])
            }
        }
    }

    public func addToken(_ token: TokenRecord, toSpaceNamed space: String) async throws {
        try await pool.write { db in
            guard let spaceID = try Int64.fetchOne(db, sql: "SELECT id FROM spaces WHERE name = ?", arguments: [space])
            else {
                throw ServerStoreError.noSuchSpace(space)
            }
            try db.execute(
                sql: "INSERT INTO tokens (id, space_id, hash, label, created_at, device) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [token.id, spaceID, token.hash, token.label, token.createdAt, token.device])
        }
    }

    public func revokeToken(id: String, at time: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?", arguments: [time, id])
            return db.changesCount > 0
        }
    }

    public func tokens(ofSpaceNamed space: String) async throws -> [TokenRecord] {
        try await pool.read { db in
            guard let spaceID = try Int64.fetchOne(db, sql: "SELECT id FROM spaces WHERE name = ?", arguments: [space])
            else {
                throw ServerStoreError.noSuchSpace(space)
            }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT id, hash, label, created_at, revoked_at, device FROM tokens WHERE space_id = ?
                    ORDER BY created_at, id
                    """, arguments: [spaceID]
            ).map {
                TokenRecord(
                    id: $0[0], hash: $0[1], label: $0[2], createdAt: $0[3], revokedAt: $0[4], device: $0[5])
            }
        }
    }

    public func grant(forTokenHash hash: String) async throws -> TokenGrant? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT t.id, s.id, s.name, t.device FROM tokens t JOIN spaces s ON s.id = t.space_id
                    WHERE t.hash = ? AND t.revoked_at IS NULL
                    """, arguments: [hash]
            ).map { TokenGrant(tokenID: $0[0], spaceID: $0[1], spaceName: $0[2], device: $0[3]) }
        }
    }

    public func takeRequest(fromBucket key: String, perSecond: Double, burst: Int) async throws -> Bool {
        await limiter.allow(key, perSecond: perSecond, burst: burst)
    }

    public func registerDevice(
        _ registration: DeviceRegistration, inSpace spaceID: Int64, claimedBy claimant: TokenGrant?, at time: Int64
    ) async throws -> ServerDevice? {
        try await pool.write { db in
            // The update (and the claim) holds only for a token that may act as the device.
            try db.execute(
                sql: """
                    INSERT INTO devices (space_id, site, name, platform, registered_at, owner_token)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (space_id, site) DO UPDATE SET name = excluded.name, platform = excluded.platform,
                      owner_token = coalesce(excluded.owner_token, devices.owner_token)
                    WHERE excluded.owner_token IS NULL OR devices.owner_token IS NULL
                      OR devices.owner_token = excluded.owner_token OR ?
                      OR NOT EXISTS (SELECT 1 FROM tokens t WHERE t.id = devices.owner_token AND t.revoked_at IS NULL)
                    """,
                arguments: [
                    spaceID, registration.site, registration.name, registration.platform, time, claimant?.tokenID,
                    claimant?.device != nil,
                ])
            guard db.changesCount > 0 else { return nil }
            guard let device = try Self.devices(db, spaceID: spaceID, site: registration.site).first else {
                throw ServerStoreError.noSuchSpace("#\(spaceID)")
            }
            return device
        }
    }

    public func owner(ofDevice site: String, inSpace spaceID: Int64) async throws -> DeviceOwner? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT d.owner_token, t.id IS NOT NULL AND t.revoked_at IS NULL
                    FROM devices d LEFT JOIN tokens t ON t.id = d.owner_token
                    WHERE d.space_id = ? AND d.site = ?
                    """, arguments: [spaceID, site]
            ).map { DeviceOwner(tokenID: $0[0], isLive: $0[1]) }
        }
    }

    public func push(_ changeSet: IncomingChangeSet, inSpace spaceID: Int64, at time: Int64) async throws -> PushOutcome
    {
        try await pool.write { db in
            guard
                let head = try Int64.fetchOne(
                    db, sql: "SELECT head FROM devices WHERE space_id = ? AND site = ?",
                    arguments: [spaceID, changeSet.origin])
            else {
                return .unregisteredOrigin
            }
            let sameRow = try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.entryColumns), damaged FROM change_sets
                    WHERE space_id = ? AND origin = ? AND since = ? AND through = ?
                    """,
                arguments: [spaceID, changeSet.origin, changeSet.since, changeSet.through])
            let sameRange = sameRow.map(Self.entry)
            let damaged = sameRow.map { ($0[8] as Int64) != 0 } ?? false
            let decision = PushRule.decide(changeSet, head: head, sameRange: sameRange, sameRangeIsDamaged: damaged)
            switch decision {
            case .repaired?, nil: break
            case let outcome?: return outcome
            }
            if let writes = changeSet.writes {
                if let reason = try Self.refusal(of: writes, db, spaceID: spaceID) { return .forged(reason) }
                try Self.record(writes, db, spaceID: spaceID)
            }
            if case .repaired(let stored)? = decision {
                return try Self.repair(db, stored, with: changeSet, inSpace: spaceID)
            }
            if let quota = changeSet.quotaBytes {
                let held =
                    try Int64.fetchOne(
                        db, sql: "SELECT COALESCE(SUM(size), 0) FROM change_sets WHERE space_id = ?",
                        arguments: [spaceID]) ?? 0
                if held + Int64(changeSet.body.count) > quota { return .overQuota(held: held, quota: quota) }
            }
            try db.execute(sql: "UPDATE spaces SET last_seq = last_seq + 1 WHERE id = ?", arguments: [spaceID])
            guard
                let seq = try Int64.fetchOne(db, sql: "SELECT last_seq FROM spaces WHERE id = ?", arguments: [spaceID])
            else {
                throw ServerStoreError.noSuchSpace("#\(spaceID)")
            }
            let entry = ServerChangeSet(
                seq: seq, origin: changeSet.origin, since: changeSet.since, through: changeSet.through,
                rows: changeSet.rows, size: Int64(changeSet.body.count), sha256: changeSet.sha256,
                receivedAt: time)
            try db.execute(
                sql: """
                    INSERT INTO change_sets (space_id, seq, origin, since, through, rows, size, sha256, received_at, body)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    spaceID, seq, entry.origin, entry.since, entry.through, entry.rows, entry.size,
                    entry.sha256, entry.receivedAt, changeSet.body,
                ])
            try db.execute(
                sql: """
                    UPDATE devices SET head = ?, last_push_at = ?, change_sets = change_sets + 1, rows = rows + ?, bytes = bytes + ?
                    WHERE space_id = ? AND site = ?
                    """, arguments: [entry.through, time, entry.rows, entry.size, spaceID, entry.origin])
            return .stored(entry)
        }
    }

    /// Replaces a damaged entry's body, SHA-256, row count and size with a push of its range,
    /// clears its mark, and corrects its origin's counts, inside the push's transaction.
    private static func repair(
        _ db: Database, _ stored: ServerChangeSet, with changeSet: IncomingChangeSet, inSpace spaceID: Int64
    ) throws -> PushOutcome {
        let size = Int64(changeSet.body.count)
        try db.execute(
            sql: """
                UPDATE change_sets SET body = ?, sha256 = ?, rows = ?, size = ?, damaged = 0
                WHERE space_id = ? AND seq = ? AND damaged = 1
                """,
            arguments: [changeSet.body, changeSet.sha256, changeSet.rows, size, spaceID, stored.seq])
        try db.execute(
            sql: "UPDATE devices SET rows = rows + ?, bytes = bytes + ? WHERE space_id = ? AND site = ?",
            arguments: [changeSet.rows - stored.rows, size - stored.size, spaceID, stored.origin])
        var entry = stored
        (entry.rows, entry.size, entry.sha256) = (changeSet.rows, size, changeSet.sha256)
        return .repaired(entry)
    }

    public func markDamaged(inSpace spaceID: Int64, seq: Int64, sha256: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE change_sets SET damaged = 1 WHERE space_id = ? AND seq = ? AND sha256 = ?",
                arguments: [spaceID, seq, sha256])
        }
    }

    public func changeSets(inSpace spaceID: Int64, after cursor: Int64, limit: Int) async throws -> [ServerChangeSet] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT \(Self.entryColumns) FROM change_sets WHERE space_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                arguments: [spaceID, cursor, limit]
            ).map(Self.entry)
        }
    }

    public func changeSet(inSpace spaceID: Int64, seq: Int64) async throws -> (entry: ServerChangeSet, body: Data)? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Self.entryColumns), body FROM change_sets WHERE space_id = ? AND seq = ?",
                arguments: [spaceID, seq]
            ).map { (Self.entry($0), $0[8] as Data) }
        }
    }

    /// Through SQLite's incremental blob I/O, which reads only the pages of the range
    /// (`substr(body, …)` would load the whole value first).
    public func changeSetBytes(inSpace spaceID: Int64, seq: Int64, range: Range<Int>) async throws -> Data? {
        try await bodyBytes(of: "change_sets", inSpace: spaceID, seq: seq, range: range, "change set \(seq)")
    }

    /// Through incremental blob I/O, as ``changeSetBytes(inSpace:seq:range:)``.
    public func snapshotBytes(inSpace spaceID: Int64, seq: Int64, part: Int?, range: Range<Int>) async throws
        -> Data?
    {
        guard let part else {
            return try await bodyBytes(
                of: "snapshots", inSpace: spaceID, seq: seq, range: range, "the snapshot through \(seq)")
        }
        return try await bodyBytes(
            of: "snapshot_parts", inSpace: spaceID, seq: seq, part: part, range: range,
            "part \(part) of the snapshot through \(seq)")
    }

    /// The bytes `range` of the body of the row of `table` with `seq` (and `part`) in the
    /// space, read alone; nil when there is no such row.
    private func bodyBytes(
        of table: String, inSpace spaceID: Int64, seq: Int64, part: Int? = nil, range: Range<Int>, _ what: String
    ) async throws -> Data? {
        try await pool.read { db in
            let sql = "SELECT rowid FROM \(table) WHERE space_id = ? AND seq = ?" + (part == nil ? "" : " AND part = ?")
            guard
                let rowid = try Int64.fetchOne(
                    db, sql: sql, arguments: StatementArguments([spaceID, seq] + (part.map { [Int64($0)] } ?? [])))
            else { return nil }
            return try Self.blobBytes(db, table: table, rowid: rowid, range: range, of: what)
        }
    }

    /// The bytes `range` of the `body` of row `rowid` of `table`, read alone.
    private static func blobBytes(_ db: Database, table: String, rowid: Int64, range: Range<Int>, of what: String)
        throws -> Data
    {
        var blob: OpaquePointer?
        defer { sqlite3_blob_close(blob) }
        let opened = sqlite3_blob_open(db.sqliteConnection, "main", table, "body", rowid, 0, &blob)
        guard opened == SQLITE_OK, let blob else {
            throw DatabaseError(resultCode: ResultCode(rawValue: opened), message: "cannot open the body of \(what)")
        }
        guard range.lowerBound >= 0, range.upperBound <= Int(sqlite3_blob_bytes(blob)) else {
            throw DatabaseError(
                resultCode: .SQLITE_RANGE, message: "bytes \(range) are not within the body of \(what)")
        }
        var bytes = Data(count: range.count)
        let read = bytes.withUnsafeMutableBytes { buffer in
            sqlite3_blob_read(blob, buffer.baseAddress, Int32(clamping: range.count), Int32(clamping: range.lowerBound))
        }
        guard read == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: read), message: "cannot read bytes \(range) of \(what)")
        }
        return bytes
    }

    public func recordPull(bySite site: String, inSpace spaceID: Int64, after cursor: Int64, at time: Int64)
        async throws
    {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE devices SET last_pull_at = ?,
                      pulled_through = max(pulled_through, min(?, (SELECT last_seq FROM spaces WHERE id = ?)))
                    WHERE space_id = ? AND site = ?
                    """,
                arguments: [time, cursor, spaceID, spaceID, site])
        }
    }

    public func devices(inSpace spaceID: Int64) async throws -> [ServerDevice] {
        try await pool.read { db in try Self.devices(db, spaceID: spaceID, site: nil) }
    }

    public func slowestPullPoint(inSpace spaceID: Int64) async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(
                db, sql: "SELECT coalesce(min(pulled_through), 0) FROM devices WHERE space_id = ?",
                arguments: [spaceID]) ?? 0
        }
    }

    public func snapshotEntry(inSpace spaceID: Int64) async throws -> ServerSnapshot? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Self.snapshotColumns) FROM snapshots WHERE space_id = ?", arguments: [spaceID]
            ).map(Self.snapshotEntry)
        }
    }

    public func saveSnapshotPart(_ body: Data, part: Int, seq: Int64, inSpace spaceID: Int64) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO snapshot_parts (space_id, seq, part, body)
                    SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM snapshots WHERE space_id = ? AND seq >= ?)
                    ON CONFLICT (space_id, seq, part) DO UPDATE SET body = excluded.body
                    """,
                arguments: [spaceID, seq, part, body, spaceID, seq])
            return db.changesCount > 0
        }
    }

    public func saveSnapshot(_ entry: ServerSnapshot, body: Data, inSpace spaceID: Int64) async throws -> Bool {
        let heads = try SnapshotJSON.encode(entry.heads)
        let parts = try entry.parts.map(SnapshotJSON.encodeParts)
        return try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO snapshots (space_id, seq, heads, rows, size, sha256, created_at, body, parts)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (space_id) DO UPDATE SET seq = excluded.seq, heads = excluded.heads,
                      rows = excluded.rows, size = excluded.size, sha256 = excluded.sha256,
                      created_at = excluded.created_at, body = excluded.body, parts = excluded.parts
                    WHERE excluded.seq > snapshots.seq
                    """,
                arguments: [
                    spaceID, entry.seq, heads, entry.rows, entry.size, entry.sha256, entry.createdAt, body, parts,
                ])
            let saved = db.changesCount > 0
            try db.execute(sql: Self.dropUnusedSnapshotParts, arguments: [spaceID, spaceID])
            return saved
        }
    }

    /// Drops the parts no snapshot entry names: those of snapshots replaced, and those left
    /// by a compaction that stopped. Parts past the space's snapshot are being made: kept.
    private static let dropUnusedSnapshotParts = """
        DELETE FROM snapshot_parts
        WHERE space_id = ? AND seq <= (SELECT seq FROM snapshots WHERE space_id = snapshot_parts.space_id)
          AND NOT EXISTS (
            SELECT 1 FROM snapshots s
            WHERE s.space_id = ? AND s.seq = snapshot_parts.seq AND s.parts IS NOT NULL
              AND snapshot_parts.part < json_array_length(s.parts))
        """

    public func compact(inSpace spaceID: Int64, through: Int64) async throws -> Int {
        try await pool.write { db in
            let snapshot =
                try Int64.fetchOne(db, sql: "SELECT seq FROM snapshots WHERE space_id = ?", arguments: [spaceID]) ?? 0
            guard through <= snapshot else {
                throw ServerStoreError.compactionPastSnapshot(requested: through, snapshot: snapshot)
            }
            try db.execute(
                sql: "DELETE FROM change_sets WHERE space_id = ? AND seq <= ?", arguments: [spaceID, through])
            let dropped = db.changesCount
            try db.execute(
                sql: "UPDATE snapshots SET compacted_through = max(compacted_through, ?) WHERE space_id = ?",
                arguments: [through, spaceID])
            return dropped
        }
    }

    public func close() async {
        try? pool.close()
    }

    private static let snapshotColumns = "seq, heads, rows, size, sha256, created_at, compacted_through, parts"

    private static func snapshotEntry(_ row: Row) throws -> ServerSnapshot {
        ServerSnapshot(
            seq: row[0], heads: try SnapshotJSON.decode(row[1]), rows: row[2], size: row[3], sha256: row[4],
            createdAt: row[5], compactedThrough: row[6], parts: try (row[7] as String?).map(SnapshotJSON.decodeParts))
    }

    private static let entryColumns = "seq, origin, since, through, rows, size, sha256, received_at"

    private static func entry(_ row: Row) -> ServerChangeSet {
        ServerChangeSet(
            seq: row[0], origin: row[1], since: row[2], through: row[3], rows: row[4], size: row[5],
            sha256: row[6], receivedAt: row[7])
    }

    private static func devices(_ db: Database, spaceID: Int64, site: String?) throws -> [ServerDevice] {
        var sql = """
            SELECT site, name, platform, registered_at, last_push_at, last_pull_at, head, change_sets, rows, bytes
            FROM devices WHERE space_id = ?
            """
        var arguments: StatementArguments = [spaceID]
        if let site {
            sql += " AND site = ?"
            arguments += [site]
        }
        var damaged: [String: [ServerDamagedChangeSet]] = [:]
        for row in try Row.fetchAll(
            db,
            sql: "SELECT origin, seq, since, through FROM change_sets WHERE space_id = ? AND damaged = 1 ORDER BY seq",
            arguments: [spaceID])
        {
            damaged[row[0], default: []].append(ServerDamagedChangeSet(seq: row[1], since: row[2], through: row[3]))
        }
        return try Row.fetchAll(db, sql: sql + " ORDER BY site", arguments: arguments).map {
            ServerDevice(
                site: $0[0], name: $0[1], platform: $0[2], registeredAt: $0[3], lastPushAt: $0[4],
                lastPullAt: $0[5], head: $0[6], changeSets: $0[7], rows: $0[8], bytes: $0[9],
                damaged: damaged[$0[0]])
        }
    }
}
