import Foundation
// The store's records that are also the API's bodies (`ServerDevice`, `ServerChangeSet`,
// `ServerSnapshot`, `DeviceRegistration`, …) live in VecSyncWire, with `sha256Hex`: every
// module that uses the server's API sees them.
@_exported import VecSyncWire

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
    ) async throws -> ServerDevice?
    /// The token that owns a registered device; nil when the space has no such device.
    func owner(ofDevice site: String, inSpace spaceID: Int64) async throws -> DeviceOwner?
    /// Stores a change set unless ``PushRule`` says otherwise; the sequence number is the
    /// space's next one, assigned in commit order.
    func push(_ changeSet: IncomingChangeSet, inSpace spaceID: Int64, at time: Int64) async throws -> PushOutcome
    /// Up to `limit` change sets with sequence numbers after `cursor`, in order.
    func changeSets(inSpace spaceID: Int64, after cursor: Int64, limit: Int) async throws -> [ServerChangeSet]
    /// One change set's bytes and entry; nil when the space has no such sequence number.
    func changeSet(inSpace spaceID: Int64, seq: Int64) async throws -> (entry: ServerChangeSet, body: Data)?
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
    func devices(inSpace spaceID: Int64) async throws -> [ServerDevice]

    /// The smallest pull point of the space's registered devices (0 with none): every
    /// device holds the change sets up to there.
    func slowestPullPoint(inSpace spaceID: Int64) async throws -> Int64

    /// The space's snapshot without its bytes; nil when none was made.
    func snapshotEntry(inSpace spaceID: Int64) async throws -> ServerSnapshot?
    /// The bytes `range` (within its size) of the space's snapshot through `seq`: of its body
    /// when `part` is nil (a snapshot in one piece), else of that part of a snapshot made in
    /// parts; without the rest of it reaching the server. Nil when the space's snapshot is
    /// not that one, or has no such part.
    func snapshotBytes(inSpace spaceID: Int64, seq: Int64, part: Int?, range: Range<Int>) async throws -> Data?
    /// Stores one part of a snapshot through `seq` being made in parts, before its entry
    /// (replacing one stored under the same numbers); returns false, storing nothing, when the
    /// space already has a snapshot through `seq` or later. Parts no entry comes to name are
    /// dropped by a later ``saveSnapshot(_:body:inSpace:)``.
    func saveSnapshotPart(_ body: Data, part: Int, seq: Int64, inSpace spaceID: Int64) async throws -> Bool
    /// Stores a snapshot in place of the space's current one when it covers more (a larger
    /// `seq`); returns whether it did. The compaction point is kept. A snapshot in parts
    /// (`entry.parts`) has an empty `body`, its parts stored before. Drops the parts of the
    /// snapshot replaced.
    func saveSnapshot(_ entry: ServerSnapshot, body: Data, inSpace spaceID: Int64) async throws -> Bool
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
        async throws -> ServerDevice
    {
        guard let device = try await registerDevice(registration, inSpace: spaceID, claimedBy: nil, at: time) else {
            throw ServerStoreError.noSuchSpace("#\(spaceID)")
        }
        return device
    }
}
