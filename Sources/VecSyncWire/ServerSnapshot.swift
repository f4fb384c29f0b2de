/// A space's snapshot on a sync server (`GET /v1/spaces/{space}/snapshot`, schema
/// `ServerSnapshot`): its history through `seq` folded into each row's winning state, from
/// which a new device bootstraps before pulling the change sets after `seq`. The server's
/// stores keep it as this record beside the bytes.
///
/// A small snapshot is one change set (`GET …/snapshot/{seq}`). A large one is made in
/// ``parts``: each a change set of its own holding the rows whose key falls in it
/// (`GET …/snapshot/{seq}/parts/{part}`), so neither the server nor a device holds more than
/// one part at a time; `size` and `sha256` then describe the parts' bytes one after another.
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
    /// Its parts, in order, when it was made in more than one; nil when it is one change set.
    public var parts: [ServerSnapshotPart]?

    /// A snapshot entry.
    public init(
        seq: Int64, heads: [String: Int64], rows: Int64, size: Int64, sha256: String, createdAt: Int64,
        compactedThrough: Int64 = 0, parts: [ServerSnapshotPart]? = nil
    ) {
        self.seq = seq
        self.heads = heads
        self.rows = rows
        self.size = size
        self.sha256 = sha256
        self.createdAt = createdAt
        self.compactedThrough = compactedThrough
        self.parts = parts
    }

    /// A snapshot of two origins in two parts, with the history before it compacted.
    public static let example = ServerSnapshot(
        seq: 3, heads: ["phone-1": 42, "laptop": 17], rows: 80, size: 32_768,
        sha256: String(repeating: "ab", count: 32),
        createdAt: 1_700_000_300_000, compactedThrough: 2,
        parts: [ServerSnapshotPart.example, ServerSnapshotPart(rows: 39, size: 16_384, sha256: String(repeating: "cd", count: 32))])
}

/// One part of a snapshot made in parts (schema `ServerSnapshotPart`): a change set holding
/// some of the snapshot's rows, each row in exactly one part.
public struct ServerSnapshotPart: WireBody, Hashable {
    /// Rows in it.
    public var rows: Int64
    /// Its size in bytes.
    public var size: Int64
    /// Hex SHA-256 of its bytes.
    public var sha256: String

    /// A part's entry.
    public init(rows: Int64, size: Int64, sha256: String) {
        self.rows = rows
        self.size = size
        self.sha256 = sha256
    }

    /// The first half of ``ServerSnapshot/example``.
    public static let example = ServerSnapshotPart(rows: 41, size: 16_384, sha256: String(repeating: "ef", count: 32))
}
