import Foundation

/// A device of a space, as a sync server reports it.
public struct ServerDevice: Sendable, Hashable, Codable {
    /// Its site id.
    public var site: String
    /// Its name.
    public var name: String
    /// Its platform.
    public var platform: String
    /// When it registered, in milliseconds since 1970.
    public var registeredAt: Int64
    /// When it last pushed a change set the server stored.
    public var lastPushAt: Int64?
    /// When it last pulled.
    public var lastPullAt: Int64?
    /// How far the server holds its changes, without a gap from the start.
    public var head: Int64
    /// Change sets stored from it.
    public var changeSets: Int64
    /// Rows in them.
    public var rows: Int64
    /// Bytes in them.
    public var bytes: Int64
    /// Its change sets whose stored bytes the server found damaged: it re-publishes each on
    /// its next push. Nil when none (and from servers that do not report them).
    public var damaged: [ServerDamagedChangeSet]?

    /// A device record.
    public init(
        site: String, name: String, platform: String, registeredAt: Int64,
        lastPushAt: Int64?, lastPullAt: Int64?, head: Int64, changeSets: Int64,
        rows: Int64, bytes: Int64, damaged: [ServerDamagedChangeSet]? = nil
    ) {
        self.site = site
        self.name = name
        self.platform = platform
        self.registeredAt = registeredAt
        self.lastPushAt = lastPushAt
        self.lastPullAt = lastPullAt
        self.head = head
        self.changeSets = changeSets
        self.rows = rows
        self.bytes = bytes
        self.damaged = damaged
    }
}

/// A change set a sync server holds with bytes that no longer match their SHA-256: it
/// answers downloads of it with 409 `damaged` until its origin pushes the same range again.
public struct ServerDamagedChangeSet: Sendable, Hashable, Codable {
    /// Its sequence number in the space.
    public var seq: Int64
    /// The origin sequence it starts after.
    public var since: Int64
    /// The origin sequence it runs through.
    public var through: Int64

    /// A damaged change set's place.
    public init(seq: Int64, since: Int64, through: Int64) {
        self.seq = seq
        self.since = since
        self.through = through
    }
}

/// A space's status on a sync server (`GET /v1/spaces/{space}/status`).
public struct ServerStatus: Sendable, Hashable, Codable {
    /// The server's version.
    public var serverVersion: String
    /// The identity of the server's database, the same under every URL and instance.
    public var storeID: String
    /// The generation of the server's database, new after it was restored from a backup
    /// (nil from servers before generations): a replica that pulled under another one pulls
    /// again from the start.
    public var epoch: Int64?
    /// The last sequence number of the space (nil from servers before it was reported): a
    /// pull cursor past it was made before the server's database went back in time.
    public var lastSeq: Int64?
    /// The space.
    public var space: String
    /// Change sets stored in the space.
    public var changeSets: Int64
    /// Their bytes.
    public var bytes: Int64
    /// Its devices, by site id.
    public var devices: [ServerDevice]
    /// Its bootstrap snapshot, when the server made one.
    public var snapshot: ServerSnapshot?
}

/// A space's snapshot on a sync server (`GET /v1/spaces/{space}/snapshot`): its history
/// through `seq` folded into one change set, each row's winning state.
public struct ServerSnapshot: Sendable, Hashable, Codable {
    /// The last sequence number folded in: the pull cursor after bootstrapping.
    public var seq: Int64
    /// How far each origin's changes are folded in.
    public var heads: [String: Int64]
    /// Rows in it.
    public var rows: Int64
    /// Its size in bytes.
    public var size: Int64
    /// Hex SHA-256 of its bytes.
    public var sha256: String
    /// When it was made, in milliseconds since 1970.
    public var createdAt: Int64
    /// The change sets through this sequence number were dropped: a cursor behind it must
    /// bootstrap again.
    public var compactedThrough: Int64
}

/// One listed change set.
struct ServerChangeSet: Sendable, Hashable, Codable {
    var seq: Int64
    var origin: String
    var since: Int64
    var through: Int64
    var rows: Int64
    var size: Int64
    var sha256: String
    var receivedAt: Int64
}

/// One page of the list.
struct ServerChangeSetPage: Sendable, Hashable, Codable {
    var changeSets: [ServerChangeSet]
    var nextCursor: Int64
    var hasMore: Bool
    /// The store's generation when the page was listed (nil from older servers).
    var epoch: Int64?
}

/// A server's error body.
struct ServerErrorBody: Decodable {
    var error: String
    var message: String
}

/// What a push answers.
struct PushResult: Sendable, Hashable, Codable {
    var result: String
    var seq: Int64?
    var head: Int64
}
