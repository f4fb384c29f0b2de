import Foundation

/// A position a transport keeps in the replica's database, in `vecsync_published`: how far
/// this replica's changes went out, how far a pull read, and the markers beside them.
///
/// The table has one name column for every kind; each kind owns how its name is written
/// there (a push cursor under the destination itself, the others behind a prefix), and
/// ``init(storedName:)`` reads a stored name back. Nothing else builds those names.
///
/// ```swift
/// let published = try replica.cursor(.push(folder.destination))
/// try replica.setCursor(.pull(space), to: 42)
/// ```
public enum SyncCursor: Hashable, Sendable {
    /// The last local sequence number published to a destination (a folder's path, a server
    /// space's name): the push cursor, stored under the destination's name.
    case push(String)
    /// How far a pull read a server space's listing (`pull:<space>`).
    case pull(String)
    /// The generation of a server space's store the pull cursor was made under
    /// (`pull:epoch:<space>`).
    case pullEpoch(String)
    /// Where the last file written to a shared folder ends (`file:<folder>`): the next file
    /// starts there.
    case lastFile(String)

    private static let pullPrefix = "pull:"
    private static let pullEpochPrefix = "pull:epoch:"
    private static let lastFilePrefix = "file:"

    /// The name the cursor is stored under in `vecsync_published`.
    public var storedName: String {
        switch self {
        case .push(let destination): destination
        case .pull(let space): Self.pullPrefix + space
        case .pullEpoch(let space): Self.pullEpochPrefix + space
        case .lastFile(let folder): Self.lastFilePrefix + folder
        }
    }

    /// The cursor stored under `storedName`: a name without a known prefix is a push cursor.
    public init(storedName: String) {
        if storedName.hasPrefix(Self.pullEpochPrefix) {
            self = .pullEpoch(String(storedName.dropFirst(Self.pullEpochPrefix.count)))
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
