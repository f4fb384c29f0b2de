/// The paging rules of `GET /v1/spaces/{space}/changesets`: a cursor (`after`, a sequence
/// number, 0 for the start), a page size (`limit`) and, for a device recording its pull,
/// its site id (`site`). The answer is a ``ServerChangeSetPage``; pass its `nextCursor` as
/// `after` until `hasMore` is false.
public enum ChangeSetPaging {
    /// The query parameter of the cursor: the change sets after this sequence number.
    public static let afterParameter = "after"
    /// The query parameter of the page size.
    public static let limitParameter = "limit"
    /// The query parameter naming the pulling device (its site id).
    public static let siteParameter = "site"

    /// The cursor before the first change set of a space.
    public static let firstCursor: Int64 = 0
    /// The page size when `limit` is absent.
    public static let defaultLimit = 100
    /// The largest page size a server answers by default (`SyncServer.Limits.maximumPageSize`).
    public static let maximumLimit = 1000
    /// The cursors a server accepts.
    public static let cursors: ClosedRange<Int64> = firstCursor...Int64.max
}
