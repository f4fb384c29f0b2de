/// A space's snapshot on a sync server (`GET /v1/spaces/{space}/snapshot`, schema
/// `ServerSnapshot`): its history through `seq` folded into one change set, each row's
/// winning state, from which a new device bootstraps before pulling the change sets after
/// `seq`. The server's stores keep it as this record beside the bytes.
public struct ServerSnapshot: WireBody, Hashable {
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
    /// When it was made, in milliseconds since 1970.
    public var createdAt: Int64
    /// The change sets through this sequence number were dropped (0: none): a cursor behind
    /// it must bootstrap again.
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

    /// A snapshot of two origins, with the history before it compacted.
    public static let example = ServerSnapshot(
        seq: 3, heads: ["phone-1": 42, "laptop": 17], rows: 80, size: 32_768,
        sha256: String(repeating: "ab", count: 32),
        createdAt: 1_700_000_300_000, compactedThrough: 2)
}
