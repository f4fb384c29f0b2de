/// A space's status on a sync server (`GET /v1/spaces/{space}/status`, schema `ServerStatus`).
public struct ServerStatus: WireBody, Hashable {
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

    /// A status, as the server answers it.
    public init(
        serverVersion: String, storeID: String, epoch: Int64?, lastSeq: Int64?, space: String, changeSets: Int64,
        bytes: Int64, devices: [ServerDevice], snapshot: ServerSnapshot?
    ) {
        self.serverVersion = serverVersion
        self.storeID = storeID
        self.epoch = epoch
        self.lastSeq = lastSeq
        self.space = space
        self.changeSets = changeSets
        self.bytes = bytes
        self.devices = devices
        self.snapshot = snapshot
    }

    /// Every current server sends them; a client still reads answers of older servers
    /// without them.
    public static let optionalForOlderServers: Set<String> = ["epoch", "lastSeq"]

    /// A space with one device and a snapshot.
    public static let example = ServerStatus(
        serverVersion: "1.0.0", storeID: "3f6c0a9e", epoch: 7, lastSeq: 3, space: "family", changeSets: 3,
        bytes: 65_536, devices: [.example], snapshot: .example)
}
