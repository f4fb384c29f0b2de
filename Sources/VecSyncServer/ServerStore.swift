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
    /// The space a live token opens, looked up by the token's SHA-256; nil for an unknown
    /// or revoked token.
    func grant(forTokenHash hash: String) async throws -> TokenGrant?

    /// Registers a device (its sync site id) in a space, or updates its name and platform.
    func registerDevice(_ registration: DeviceRegistration, inSpace spaceID: Int64, at time: Int64) async throws
        -> DeviceRecord
    /// Stores a change set unless ``PushRule`` says otherwise; the sequence number is the
    /// space's next one, assigned in commit order.
    func push(_ changeSet: IncomingChangeSet, inSpace spaceID: Int64, at time: Int64) async throws -> PushOutcome
    /// Up to `limit` change sets with sequence numbers after `cursor`, in order.
    func changeSets(inSpace spaceID: Int64, after cursor: Int64, limit: Int) async throws -> [ChangeSetEntry]
    /// One change set's bytes and entry; nil when the space has no such sequence number.
    func changeSet(inSpace spaceID: Int64, seq: Int64) async throws -> (entry: ChangeSetEntry, body: Data)?
    /// Records that `site` pulled at `time` (a no-op for an unregistered site).
    func recordPull(bySite site: String, inSpace spaceID: Int64, at time: Int64) async throws
    /// The devices of a space with their counts, by site.
    func devices(inSpace spaceID: Int64) async throws -> [DeviceRecord]

    /// Releases connections.
    func close() async
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

    /// Creates a token record.
    public init(id: String, hash: String, label: String, createdAt: Int64, revokedAt: Int64? = nil) {
        self.id = id
        self.hash = hash
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// What a live token opens: one space.
public struct TokenGrant: Sendable, Hashable {
    /// The token's public id (the key of its rate limit).
    public var tokenID: String
    /// The space's internal id.
    public var spaceID: Int64
    /// The space's name.
    public var spaceName: String
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

    /// A change set with its header fields.
    public init(origin: String, since: Int64, through: Int64, rows: Int64, sha256: String, body: Data) {
        self.origin = origin
        self.since = since
        self.through = through
        self.rows = rows
        self.sha256 = sha256
        self.body = body
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
    /// The origin has not registered in this space.
    case unregisteredOrigin
}

/// Failures of a store that a person must act on.
public enum ServerStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A space of that name exists.
    case spaceExists(String)
    /// No space of that name.
    case noSuchSpace(String)

    /// One line.
    public var description: String {
        switch self {
        case .spaceExists(let name): "space '\(name)' already exists"
        case .noSuchSpace(let name): "no space named '\(name)'"
        }
    }
}
