/// A device of a space, as a sync server reports it (schema `ServerDevice` of
/// `docs/openapi.yaml`): what `POST …/devices` answers and what `GET …/status` lists. The
/// server's stores return it too; its `head` is the end of the device's change sets held
/// there, contiguous from 0: the next push starts at or before it.
public struct ServerDevice: WireBody, Hashable {
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

    /// A device that pushed and pulled, with one damaged change set.
    public static let example = ServerDevice(
        site: "phone-1", name: "Ana's iPhone", platform: "iOS", registeredAt: 1_700_000_000_000,
        lastPushAt: 1_700_000_100_000, lastPullAt: 1_700_000_200_000, head: 42, changeSets: 3, rows: 120,
        bytes: 65_536, damaged: [.example])
}
