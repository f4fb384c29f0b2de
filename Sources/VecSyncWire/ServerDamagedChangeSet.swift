/// A change set a sync server holds with bytes that no longer match their SHA-256 (schema
/// `ServerDamagedChangeSet`): it answers downloads of it with 409 `damaged` until its origin
/// pushes the same range again.
public struct ServerDamagedChangeSet: WireBody, Hashable {
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

    /// The second change set of a space, damaged.
    public static let example = ServerDamagedChangeSet(seq: 2, since: 10, through: 20)
}
