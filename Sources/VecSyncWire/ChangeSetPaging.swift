/// The paging rules of `GET /v1/spaces/{space}/changesets`: a cursor (`after`, a sequence
/// number, 0 for the start), a page size (`limit`) and, for a device recording its pull,
/// its site id (`site`) and what it holds merged (`merged`, its pull point). The answer is a
/// ``ServerChangeSetPage``; pass its `nextCursor` as `after` until `hasMore` is false.
public enum ChangeSetPaging {
    /// The query parameter of the cursor: the change sets after this sequence number.
    public static let afterParameter = "after"
    /// The query parameter of the page size.
    public static let limitParameter = "limit"
    /// The query parameter naming the pulling device (its site id).
    public static let siteParameter = "site"
    /// The query parameter of the pulling device's pull point: the sequence number through
    /// which it holds every change set merged. A client that lists pages ahead of
    /// downloading sends it; without it, `after` is taken for it (a client that merges each
    /// page before listing the next). Compaction stays behind the smallest pull point, so it
    /// must never name change sets listed but not merged yet.
    public static let mergedParameter = "merged"

    /// The cursor before the first change set of a space.
    public static let firstCursor: Int64 = 0
    /// The page size when `limit` is absent.
    public static let defaultLimit = 100
    /// The largest page size a server answers by default (`SyncServer.Limits.maximumPageSize`).
    public static let maximumLimit = 1000
    /// The cursors a server accepts.
    public static let cursors: ClosedRange<Int64> = firstCursor...Int64.max
}
