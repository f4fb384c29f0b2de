/// A stored change set, as a sync server lists it to pullers (schema `ServerChangeSet`):
/// an item of ``ServerChangeSetPage``, and what the server's stores return for each.
public struct ServerChangeSet: WireBody, Hashable {
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
    /// When the server stored it, in milliseconds since 1970.
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

    /// The first change set of a space.
    public static let example = ServerChangeSet(
        seq: 1, origin: "phone-1", since: 0, through: 10, rows: 10, size: 4_096,
        sha256: String(repeating: "cd", count: 32), receivedAt: 1_700_000_100_000)
}
