/// Failures of a store that a person must act on.
public enum ServerStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A space of that name exists.
    case spaceExists(String)
    /// No space of that name.
    case noSuchSpace(String)
    /// Compaction past the snapshot (or with none) would drop history no snapshot holds.
    case compactionPastSnapshot(requested: Int64, snapshot: Int64)
    /// A stored value that cannot be right (a damaged or hand-edited database).
    case corrupt(String)
    /// The store did not answer in time (a database down or unreachable): retry later.
    case unavailable(String)
    /// A space's snapshot would pass the largest value the store holds in one piece.
    case snapshotTooLarge(bytes: Int, limit: Int)

    /// One line.
    public var description: String {
        switch self {
        case .spaceExists(let name): "space '\(name)' already exists"
        case .noSuchSpace(let name): "no space named '\(name)'"
        case .compactionPastSnapshot(let requested, let snapshot):
            "cannot compact through \(requested): the snapshot holds the change sets through \(snapshot) only"
        case .corrupt(let what): "the store holds a value that cannot be right: \(what)"
        case .unavailable(let what): "the store did not answer: \(what)"
        case .snapshotTooLarge(let bytes, let limit):
            "the snapshot would be \(bytes) bytes, past the \(limit) the store holds in one value: none was made, the history stays whole and devices keep pulling it"
        }
    }
}
