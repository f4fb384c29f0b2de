import Foundation

/// A position a transport keeps in the replica's database, in `vecsync_published`: how far
/// this replica's changes went out, how far a pull read, and the markers beside them.
///
/// The table has one name column for every kind; each kind owns how its name is written
/// there (a push cursor under the destination itself, the others behind a prefix), and
/// ``init(storedName:)`` reads a stored name back. Nothing else builds those names.
///
/// A folder's cursors are keyed by its standardized path (``FolderTransport/destination``);
/// a server space's by `vecsync-server:<store id>/<space>`, the server's store id and the
/// space's name, so another URL of the same server goes on where the last sync stopped:
///
/// ```swift
/// let published = try replica.cursor(.push(folder.destination))
/// let pulled = try replica.cursor(server.pullCursor(storeID: status.storeID))
/// ```
public enum SyncCursor: Hashable, Sendable {
    /// The last local sequence number published to a destination (a folder's standardized
    /// path, or a server space's `vecsync-server:<store id>/<space>`): the push cursor,
    /// stored under that name as it is.
    case push(String)
    /// How far a pull read a server space's listing: the associated value is the space's
    /// `vecsync-server:<store id>/<space>` (`HTTPTransport/pullCursor(storeID:)`), stored
    /// as `pull:vecsync-server:<store id>/<space>`.
    case pull(String)
    /// The generation of a server space's store the pull cursor was made under, for the same
    /// `vecsync-server:<store id>/<space>`, stored as `pull:epoch:vecsync-server:<store id>/<space>`.
    case pullEpoch(String)
    /// What the change set at the pull cursor was (`HTTPTransport/mark(of:)`), for the
    /// same `vecsync-server:<store id>/<space>`, stored as `pull:mark:vecsync-server:<store id>/<space>`:
    /// a store that went back in time without a new generation (a file copy put back) is
    /// noticed when the change set at the cursor is another one.
    case pullMark(String)
    /// Where the last file written to a shared folder ends (`file:<folder>`): the next file
    /// starts there.
    case lastFile(String)

    private static let pullPrefix = "pull:"
    private static let pullEpochPrefix = "pull:epoch:"
    private static let pullMarkPrefix = "pull:mark:"
    private static let lastFilePrefix = "file:"

    /// The name the cursor is stored under in `vecsync_published`.
    public var storedName: String {
        switch self {
        case .push(let destination): destination
        case .pull(let space): Self.pullPrefix + space
        case .pullEpoch(let space): Self.pullEpochPrefix + space
        case .pullMark(let space): Self.pullMarkPrefix + space
        case .lastFile(let folder): Self.lastFilePrefix + folder
        }
    }

    /// The cursor stored under `storedName`: a name without a known prefix is a push cursor.
    public init(storedName: String) {
        if storedName.hasPrefix(Self.pullEpochPrefix) {
            self = .pullEpoch(String(storedName.dropFirst(Self.pullEpochPrefix.count)))
        } else if storedName.hasPrefix(Self.pullMarkPrefix) {
            self = .pullMark(String(storedName.dropFirst(Self.pullMarkPrefix.count)))
        } else if storedName.hasPrefix(Self.pullPrefix) {
            self = .pull(String(storedName.dropFirst(Self.pullPrefix.count)))
        } else if storedName.hasPrefix(Self.lastFilePrefix) {
            self = .lastFile(String(storedName.dropFirst(Self.lastFilePrefix.count)))
        } else {
            self = .push(storedName)
        }
    }

    /// Whether this is a push cursor (the ones ``Replica/syncStatus()`` reports).
    public var isPush: Bool {
        if case .push = self { return true }
        return false
    }
}
