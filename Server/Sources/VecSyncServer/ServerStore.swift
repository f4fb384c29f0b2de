import Foundation
import VecSyncReplication

/// Where a sync server keeps its spaces, tokens, devices and change sets.
///
/// Two back ends implement it — ``SQLiteServerStore`` (one file, the default) and
/// ``PostgresServerStore`` (for several server instances on one database) — and pass the
/// same test suite. A store never interprets a change set beyond the header fields the
/// server hands it: the application schema stays unknown to the server.
///
/// Every method is one transaction. Times are milliseconds since 1970.
public protocol ServerStore: Sendable {
    /// Creates the tables when missing. Safe to call on every start.
    func prepare() async throws

    /// The store's identity: a random id made when its tables were created, the same for
    /// every server instance on it and under every URL. Clients key their cursors by it.
    func storeID() async throws -> String

    /// The store's generation: a random positive number made with the store, made again by
    /// ``newEpoch()`` and in every copy `vecsync-server backup` writes. Status and pull
    /// answers carry it; a client that knew another one rewinds its pull cursor and pulls
    /// again (merging is idempotent), and pushes again what the restored store lacks.
    func epoch() async throws -> Int64
    /// Gives the store a new generation: what to run after restoring it from a backup made
    /// by other means (`pg_dump`, a file system snapshot). Returns it.
    func newEpoch() async throws -> Int64
    /// The last sequence number assigned in a space (0 with none).
    func lastSequence(inSpace spaceID: Int64) async throws -> Int64

    /// Creates a space; throws ``ServerStoreError/spaceExists(_:)`` when the name is taken.
    func createSpace(named name: String, at time: Int64) async throws -> SpaceRecord
    /// Every space, by name.
    func spaces() async throws -> [SpaceRecord]
    /// Stores a token's hash for the space `space` (never the token itself).
    func addToken(_ token: TokenRecord, toSpaceNamed space: String) async throws
    /// Marks a token revoked; returns false when no token has that id.
    func revokeToken(id: String, at time: Int64) async throws -> Bool
    /// The tokens of a space (revoked ones included), oldest first.
    func tokens(ofSpaceNamed space: String) async throws -> [TokenRecord]
    /// The space a live token opens (and the device it is bound to, if any), looked up by
    /// the token's SHA-256; nil for an unknown or revoked token.
    func grant(forTokenHash hash: String) async throws -> TokenGrant?
    /// Takes one request from the rate-limit bucket `key`: `burst` requests at once, refilled
    /// at `perSecond`. False when the bucket is empty (nothing is taken then). PostgreSQL
    /// keeps the buckets in the database, so every server instance on it draws from the
    /// same one; SQLite keeps them in the store object's memory (see ``SQLiteServerStore``).
    func takeRequest(fromBucket key: String, perSecond: Double, burst: Int) async throws -> Bool

    /// Registers a device (its sync site id) in a space, or updates its name and platform.
    /// With `claimant`, the device becomes that token's (``DeviceOwner``) unless another live
    /// token owns it and the claimant is not a device token issued for it: then nothing
    /// changes and the answer is nil. Without, the owner is left as it is.
    func registerDevice(
        _ registration: DeviceRegistration, inSpace spaceID: Int64, claimedBy claimant: TokenGrant?, at time: Int64
    ) async throws -> DeviceRecord?
    /// The token that owns a registered device; nil when the space has no such device.
    func owner(ofDevice site: String, inSpace spaceID: Int64) async throws -> DeviceOwner?
    /// Stores a change set unless ``PushRule`` says otherwise; the sequence number is the
    /// space's next one, assigned in commit order.
    func push(_ changeSet: IncomingChangeSet, inSpace spaceID: Int64, at time: Int64) async throws -> PushOutcome
    /// Up to `limit` change sets with sequence numbers after `cursor`, in order.
    func changeSets(inSpace spaceID: Int64, after cursor: Int64, limit: Int) async throws -> [ChangeSetEntry]
    /// One change set's bytes and entry; nil when the space has no such sequence number.
    func changeSet(inSpace spaceID: Int64, seq: Int64) async throws -> (entry: ChangeSetEntry, body: Data)?
    /// The bytes `range` of change set `seq`'s body (a range within its size), without the
    /// rest of it reaching the server; nil when the space has no such sequence number.
    func changeSetBytes(inSpace spaceID: Int64, seq: Int64, range: Range<Int>) async throws -> Data?
    /// Marks change set `seq` damaged — its stored bytes do not match `sha256`, the SHA-256
    /// stored with them — unless it has been repaired since (its SHA-256 is another one by
    /// then). The mark stays until its origin pushes the same range again (``PushRule``).
    func markDamaged(inSpace spaceID: Int64, seq: Int64, sha256: String) async throws
    /// Records that `site` pulled at `time`, asking for the change sets after `cursor`: it
    /// holds everything up to there (its pull point, which only moves forward and never past
    /// the space's last sequence number; the safe compaction point is the smallest). A no-op
    /// for an unregistered site.
    func recordPull(bySite site: String, inSpace spaceID: Int64, after cursor: Int64, at time: Int64) async throws
    /// The devices of a space with their counts, by site, each with its own change sets that
    /// are marked damaged (``ServerDevice/damaged``, nil when none).
    func devices(inSpace spaceID: Int64) async throws -> [DeviceRecord]

    /// The smallest pull point of the space's registered devices (0 with none): every
    /// device holds the change sets up to there.
    func slowestPullPoint(inSpace spaceID: Int64) async throws -> Int64

    /// The space's snapshot without its bytes; nil when none was made.
    func snapshotEntry(inSpace spaceID: Int64) async throws -> SnapshotEntry?
    /// The space's snapshot with its bytes.
    func snapshot(inSpace spaceID: Int64) async throws -> (entry: SnapshotEntry, body: Data)?
    /// Stores a snapshot in place of the space's current one when it covers more (a larger
    /// `seq`); returns whether it did. The compaction point is kept.
    func saveSnapshot(_ entry: SnapshotEntry, body: Data, inSpace spaceID: Int64) async throws -> Bool
    /// Drops the change sets with sequence numbers up to `through`, which must not pass the
    /// snapshot's `seq`, and records the new compaction point; returns how many were dropped.
    func compact(inSpace spaceID: Int64, through: Int64) async throws -> Int

    /// Releases connections.
    func close() async
}

extension ServerStore {
    /// A new generation number: random, positive.
    static func makeEpoch() -> Int64 { Int64.random(in: 1...Int64.max) }

    /// Registers a device without claiming it for a token (what an administrator does).
    public func registerDevice(_ registration: DeviceRegistration, inSpace spaceID: Int64, at time: Int64)
        async throws -> DeviceRecord
    {
        guard let device = try await registerDevice(registration, inSpace: spaceID, claimedBy: nil, at: time) else {
            throw ServerStoreError.noSuchSpace("#\(spaceID)")
        }
        return device
    }
}

/// A space: one user's library, the unit of isolation.
public struct SpaceRecord: Sendable, Hashable, Codable {
    /// Internal id, used by the other tables.
    public var id: Int64
    /// The name in URLs (`/v1/spaces/{name}/…`).
    public var name: String
    /// When it was created.
    public var createdAt: Int64
}

/// A stored token: its id (printed at issue, used to revoke) and SHA-256, never the secret.
/// A space token opens the whole space; a device token (``device`` set) is bound to one
/// device id: it registers and pushes as that device only.
public struct TokenRecord: Sendable, Hashable, Codable {
    /// A short public id.
    public var id: String
    /// Hex SHA-256 of the token.
    public var hash: String
    /// Free text: whom or what it was issued to.
    public var label: String
    /// When it was issued.
    public var createdAt: Int64
    /// When it was revoked; nil while live.
    public var revokedAt: Int64?
    /// The device id (sync site id) a device token is bound to; nil for a space token.
    public var device: String?

    /// Creates a token record.
    public init(
        id: String, hash: String, label: String, createdAt: Int64, revokedAt: Int64? = nil, device: String? = nil
    ) {
        self.id = id
        self.hash = hash
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.device = device
    }
}

/// What a live token opens: one space, as any device or as one.
public struct TokenGrant: Sendable, Hashable {
    /// The token's public id (the key of its rate limit).
    public var tokenID: String
    /// The space's internal id.
    public var spaceID: Int64
    /// The space's name.
    public var spaceName: String
    /// The one device id the token may register and push as; nil: any.
    public var device: String?

    /// A grant.
    public init(tokenID: String, spaceID: Int64, spaceName: String, device: String? = nil) {
        self.tokenID = tokenID
        self.spaceID = spaceID
        self.spaceName = spaceName
        self.device = device
    }

    /// Whether the token may act as device `site`.
    public func allows(site: String) -> Bool {
        device == nil || device == site
    }
}

/// A device announcing itself.
public struct DeviceRegistration: Sendable, Hashable, Codable {
    /// The device's sync site id: the origin of every change set it pushes.
    public var site: String
    /// A name for people ("Ana's iPhone").
    public var name: String
    /// The platform ("iOS", "macOS", "Linux", …).
    public var platform: String

    /// A registration.
    public init(site: String, name: String, platform: String) {
        self.site = site
        self.name = name
        self.platform = platform
    }
}

/// A device and what it did: the same record the client reads (``ServerDevice``). Its `head`
/// is the end of its change sets held here, contiguous from 0: the next push starts at or
/// before it.
public typealias DeviceRecord = ServerDevice

/// A change set a device pushed, with the header fields the server read from it.
public struct IncomingChangeSet: Sendable, Hashable {
    /// Its origin site.
    public var origin: String
    /// The origin sequence it starts after.
    public var since: Int64
    /// The origin sequence it runs through.
    public var through: Int64
    /// Its row count.
    public var rows: Int64
    /// Hex SHA-256 of `body`.
    public var sha256: String
    /// The serialized change set.
    public var body: Data
    /// Its writes, checked and recorded by the store when it would store the change set
    /// (``WriteAttestation``); nil: not checked (an administrator's or a test's push).
    public var writes: WriteAttestation?
    /// The most bytes of change sets the space may hold with this one stored (the server's
    /// per-space quota); past it the push is ``PushOutcome/overQuota(held:quota:)`` and
    /// nothing is stored. nil: no quota.
    public var quotaBytes: Int64?

    /// A change set with its header fields.
    public init(
        origin: String, since: Int64, through: Int64, rows: Int64, sha256: String, body: Data,
        writes: WriteAttestation? = nil
    ) {
        self.origin = origin
        self.since = since
        self.through = through
        self.rows = rows
        self.sha256 = sha256
        self.body = body
        self.writes = writes
    }
}

/// A space's snapshot: its history up to `seq` folded into one change set, from which a new
/// device bootstraps before pulling the change sets after `seq`.
public struct SnapshotEntry: Sendable, Hashable, Codable {
    /// The last sequence number folded in: the pull cursor after bootstrapping.
    public var seq: Int64
    /// How far each origin's changes are folded in (its head among the change sets up to `seq`).
    public var heads: [String: Int64]
    /// Rows in it.
    public var rows: Int64
    /// Its size in bytes.
    public var size: Int64
    /// Hex SHA-256 of its bytes.
    public var sha256: String
    /// When it was made.
    public var createdAt: Int64
    /// The change sets up to this sequence number were dropped (0: none); a device whose
    /// cursor is behind it must bootstrap again.
    public var compactedThrough: Int64

    /// A snapshot entry.
    public init(
        seq: Int64, heads: [String: Int64], rows: Int64, size: Int64, sha256: String, createdAt: Int64,
        compactedThrough: Int64 = 0
    ) {
        self.seq = seq
        self.heads = heads
        self.rows = rows
        self.size = size
        self.sha256 = sha256
        self.createdAt = createdAt
        self.compactedThrough = compactedThrough
    }
}

/// A stored change set, as listed to pullers.
public struct ChangeSetEntry: Sendable, Hashable, Codable {
    /// Its place in the space's order: the pull cursor.
    public var seq: Int64
    /// Its origin site.
    public var origin: String
    /// The origin sequence it starts after.
    public var since: Int64
    /// The origin sequence it runs through.
    public var through: Int64
    /// Its row count.
    public var rows: Int64
    /// Its size in bytes.
    public var size: Int64
    /// Hex SHA-256 of its bytes.
    public var sha256: String
    /// When the server stored it.
    public var receivedAt: Int64

    /// A stored change set's entry.
    public init(
        seq: Int64, origin: String, since: Int64, through: Int64, rows: Int64, size: Int64, sha256: String,
        receivedAt: Int64
    ) {
        self.seq = seq
        self.origin = origin
        self.since = since
        self.through = through
        self.rows = rows
        self.size = size
        self.sha256 = sha256
        self.receivedAt = receivedAt
    }
}

/// What a push did.
public enum PushOutcome: Sendable, Hashable {
    /// Stored under this sequence number.
    case stored(ChangeSetEntry)
    /// The same range with the same bytes is already stored (under this entry): nothing stored.
    case duplicate(ChangeSetEntry)
    /// Every row of the range is already held (it ends at or before the origin's head):
    /// nothing stored.
    case covered(head: Int64)
    /// The change set starts after the origin's head: storing it would leave a hole.
    case gap(head: Int64)
    /// The same range is stored with different bytes.
    case conflict(ChangeSetEntry)
    /// The same range was stored and marked damaged: the incoming bytes replaced the stored
    /// ones under the same sequence number (this entry, as it is now) and the mark is cleared.
    case repaired(ChangeSetEntry)
    /// The origin has not registered in this space.
    case unregisteredOrigin
    /// The change set claims more of its origin's range than it carries (``PushRule``): an
    /// empty one that would move the head, or one reaching implausibly far past it.
    case overreach(head: Int64)
    /// A row inside claims a write its origin did not make and the server does not hold
    /// from its author, or an authority count past the authority's (``WriteAttestation``).
    case forged(String)
    /// Storing it would take the space's change sets past ``IncomingChangeSet/quotaBytes``:
    /// they hold `held` bytes now; nothing stored.
    case overQuota(held: Int64, quota: Int64)
}

/// Failures of a store that a person must act on.
public enum ServerStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A space of that name exists.
    case spaceExists(String)
    /// No space of that name.
    case noSuchSpace(String)
    /// Compaction past the snapshot (or with none) would drop history no snapshot holds.
    case compactionPastSnapshot(requested: Int64, snapshot: Int64)
    /// A stored value that cannot be right (a damaged or hand-edited database).
    case corrupt(String)
    /// The store did not answer in time (a database down or unreachable): retry later.
    case unavailable(String)

    /// One line.
    public var description: String {
        switch self {
        case .spaceExists(let name): "space '\(name)' already exists"
        case .noSuchSpace(let name): "no space named '\(name)'"
        case .compactionPastSnapshot(let requested, let snapshot):
            "cannot compact through \(requested): the snapshot holds the change sets through \(snapshot) only"
        case .corrupt(let what): "the store holds a value that cannot be right: \(what)"
        case .unavailable(let what): "the store did not answer: \(what)"
        }
    }
}
