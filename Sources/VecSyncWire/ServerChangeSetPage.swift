/// One page of a space's change sets (`GET /v1/spaces/{space}/changesets`, schema
/// `ServerChangeSetPage`); ``ChangeSetPaging`` names its query parameters and bounds.
public struct ServerChangeSetPage: WireBody, Hashable {
    /// The change sets after the cursor, in order.
    public var changeSets: [ServerChangeSet]
    /// The cursor of the next page: the last `seq` listed (the request's cursor when none).
    public var nextCursor: Int64
    /// Whether more change sets follow.
    public var hasMore: Bool
    /// The store's generation when the page was listed (``ServerStatus/epoch``; nil from
    /// older servers): a client whose cursor was made under another one lists again from
    /// the start.
    public var epoch: Int64?

    /// A page.
    public init(changeSets: [ServerChangeSet], nextCursor: Int64, hasMore: Bool, epoch: Int64?) {
        self.changeSets = changeSets
        self.nextCursor = nextCursor
        self.hasMore = hasMore
        self.epoch = epoch
    }

    /// Every current server sends it; a client still reads pages of older servers without it.
    public static let optionalForOlderServers: Set<String> = ["epoch"]

    /// A first page with more to come.
    public static let example = ServerChangeSetPage(changeSets: [.example], nextCursor: 1, hasMore: true, epoch: 7)
}
