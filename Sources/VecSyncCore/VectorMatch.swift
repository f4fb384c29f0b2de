/// One result of a nearest-neighbour search: the key of a row and its distance to the query.
public struct VectorMatch<Key: Sendable & Hashable>: Sendable, Hashable {
    /// The row's key: a rowid for `vector_top_k`, the primary key for vec0 tables.
    public var key: Key
    /// The distance to the query under the index's metric; smaller is nearer.
    public var distance: Double

    /// Creates a match.
    public init(key: Key, distance: Double) {
        self.key = key
        self.distance = distance
    }
}
