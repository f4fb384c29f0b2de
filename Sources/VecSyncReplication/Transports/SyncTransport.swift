import Foundation

/// What carries change sets between replicas: a shared folder (``FolderTransport``), a sync
/// server (`HTTPTransport`), or anything else that can push a replica's changes and pull
/// everyone else's.
///
/// The engine's guarantees hold whatever the transport: a transport pushes from the push
/// cursor kept in the database (``Replica/publishedThrough(to:)``), in bounded batches, and
/// moves it only past what the destination holds; it merges through ``Replica/merge(_:)``,
/// which applies a change set atomically with its cursor, so a transfer cut at any moment
/// loses nothing and the next sync resumes.
public protocol SyncTransport: Sendable {
    /// The name of where the transport syncs (a folder's path, a server space's URL), under
    /// which ``Replica/syncStatus()`` records the last sync.
    var destination: String { get }

    /// Before a push: when the destination holds changes of this replica past its push
    /// cursor that the replica lacks (it published them, then its database was restored from
    /// a backup: its lost future), merges them back (``Replica/recoverLostChanges(_:)``) and
    /// returns where they lie; nil when there are none. ``Replica/sync(through:events:)``
    /// then pulls and renumbers the replica's newer changes above them
    /// (``Replica/moveChanges(after:above:settingCursor:)``) before it pushes.
    func recoverLostChanges(of replica: Replica, events: SyncEventSink) throws -> LostChanges?

    /// Sends the replica's changes after its push cursor, reporting each change set sent to
    /// `events`; returns the change sets and rows sent. Throws
    /// ``VecSyncCore/VecSyncError/lostChangesNotRecovered(destination:published:held:)`` when
    /// the destination holds changes of this replica past the cursor
    /// (``recoverLostChanges(of:events:)`` comes first).
    func push(_ replica: Replica, events: SyncEventSink) throws -> (files: Int, rows: Int)

    /// Fetches and merges other replicas' change sets in bounded transactions (see
    /// ``Replica/Options/maximumMergeRows``), reporting each commit and each origin it waits
    /// for to `events`; returns one report per change set merged, a line for each one
    /// skipped or refused, and how many unknown entries were left alone. It records what it
    /// waits for per origin (``Replica/gaps()``) and asks for it again where it can.
    func pull(into replica: Replica, events: SyncEventSink) throws -> (
        merges: [MergeReport], problems: [String], unknownFiles: Int
    )
}

/// Where a replica's lost future lies at a destination (``SyncTransport/recoverLostChanges(of:events:)``):
/// the destination holds its changes in `(published, claimed]`, made before its database was
/// restored from a backup, and now merged back; `published` is what the destination holds of
/// it and it still has, and `pushCursor` the cursor to move to `claimed` once the newer
/// changes are renumbered above it.
public struct LostChanges: Hashable, Sendable {
    public var published, claimed: Int64
    public var pushCursor: SyncCursor

    public init(published: Int64, claimed: Int64, pushCursor: SyncCursor) {
        (self.published, self.claimed, self.pushCursor) = (published, claimed, pushCursor)
    }
}
