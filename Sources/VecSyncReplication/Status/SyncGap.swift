/// Changes of one origin this replica cannot merge in order yet: the range after its cursor
/// that is damaged, refused or absent where it syncs. Later change sets of the origin still
/// merge, but its cursor waits at ``since`` until the range arrives.
///
/// ``FolderTransport`` asks the origin to publish the range again (the origin does on its
/// next push); `HTTPTransport` downloads it again on the next pull.
public struct SyncGap: Sendable, Hashable, CustomStringConvertible {
    /// The site whose changes are missing.
    public var origin: SiteID
    /// The origin's sequence number through which its changes are merged here: the cursor.
    public var since: Int64
    /// The end of the first range after the cursor that could not be merged (the same as
    /// ``since`` when nothing after the cursor is known).
    public var through: Int64
    /// Why it could not be merged: the problem with its change set, or that none holds it.
    public var reason: String

    /// A gap of `origin` after `since`.
    public init(origin: SiteID, since: Int64, through: Int64, reason: String) {
        self.origin = origin
        self.since = since
        self.through = through
        self.reason = reason
    }

    /// `waiting for changes 40-80 of 'phone': <reason>`.
    public var description: String {
        "waiting for changes \(since)-\(through) of '\(origin)': \(reason)"
    }
}
