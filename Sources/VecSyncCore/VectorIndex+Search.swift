import GRDB

extension VectorIndex {
    /// The `limit` canonical keys nearest to `query`, nearest first, among rows passing
    /// every filter on the index's ``metadata`` columns. Filters apply during the scan, so
    /// `limit` rows come back whenever `limit` rows match.
    ///
    /// With an ``ivf`` index, `probes` is how many of its lists the query scans (nil: the
    /// declaration's `probes`, or the extension's default): more finds more of the exact
    /// nearest rows, more slowly (``ivfRecall(_:queries:k:probes:)`` measures it).
    ///
    /// Throws ``VecSyncError/dimensionMismatch(expected:got:)`` for a query of the wrong
    /// size and ``VecSyncError/invalidArgument(name:value:reason:)`` for a filter on a column
    /// that is not a metadata column of the index.
    public func search(
        _ db: Database, near query: Vector, limit: Int, where filters: [VectorFilter] = [], probes: Int? = nil
    ) throws -> [VectorMatch<DatabaseValue>] {
        try search(db, near: query, limit: limit, where: filters, probes: probes, as: DatabaseValue.self)
    }

    /// The same search, with keys read as `Key` (`String` for text keys, `Int64` for integers).
    public func search<Key: DatabaseValueConvertible & Sendable & Hashable>(
        _ db: Database, near query: Vector, limit: Int, where filters: [VectorFilter] = [], probes: Int? = nil,
        as keyType: Key.Type
    ) throws -> [VectorMatch<Key>] {
        try query.validate(dimensions: dimensions)
        if probes != nil { try requireIVF() }
        let columns = Set(metadata.map { $0.name.lowercased() })
        for filter in filters where !columns.contains(filter.column.lowercased()) {
            throw VecSyncError.invalidArgument(
                name: "filter column", value: filter.column,
                reason: "index \(name) has metadata columns \(metadata.map(\.name))")
        }
        return try db.vec0Search(
            table: name, keyColumn: indexKeyColumn, embeddingColumn: embeddingColumn,
            near: query, k: limit, where: filters, probes: probes, as: keyType)
    }
}
