import Foundation

extension SyncStatus {
    /// A push cursor and what lies after it.
    public struct Destination: Sendable, Hashable {
        /// The destination's name in `vecsync_published`.
        public var destination: String
        /// The last local sequence number published there.
        public var publishedThrough: Int64
        /// Rows written here (inserted, updated or deleted on this replica, not merged) after
        /// it: what its next push has to send.
        public var pendingRows: Int
    }

    /// One peer's cursors and gap.
    public struct Peer: Sendable, Hashable {
        /// The peer's site id.
        public var site: SiteID
        /// Its sequence number through which its changes are merged here.
        public var received: Int64
        /// Our sequence number through which it has merged our changes.
        public var acknowledged: Int64
        /// Its changes this replica waits for, if any.
        public var waitingFor: SyncGap?
    }

    /// A peer a forced compaction passed (``Replica/compactTombstones(acknowledgedThrough:force:)``
    /// with `force: true`): tombstones through `horizon` went while it had acknowledged only
    /// `acknowledged`, so it may keep rows deleted here, and no sync will take the deletes there.
    public struct ForcedCompaction: Sendable, Hashable {
        /// The peer.
        public var peer: SiteID
        /// Our sequence number through which it had merged our changes then.
        public var acknowledged: Int64
        /// The sequence number through which tombstones were removed.
        public var horizon: Int64
        /// When.
        public var compacted: Date
    }
}
