import GRDB

extension VectorIndex {
    /// Brings the index up to date for exactly these canonical keys: each is removed from
    /// the index, then re-added from its canonical row if that row exists and has an
    /// embedding. Keys of deleted rows are simply removed.
    ///
    /// The sync engine calls it after a merge, once, with the keys the merge changed, through
    /// ``DerivedIndexCatalogue/refresh(_:changedKeys:)`` (the triggers are silent while
    /// ``DerivedIndexCatalogue/setMerging(_:_:)`` has set `vecsync_state.merging`). It runs in a savepoint: the
    /// index is refreshed for every key or for none.
    public func refresh(_ db: Database, keys: [DatabaseValue]) throws {
        guard !keys.isEmpty else { return }
        try VecSyncError.wrap {
            try db.inSavepoint {
                let delete = try db.cachedStatement(sql: "DELETE FROM \(qName) WHERE \(qIndexKey) = ?")
                let insert = try db.cachedStatement(
                    sql: """
                        \(insertPrefix)
                        SELECT \(sourceColumns(prefix: "").joined(separator: ", ")) FROM \(qTable)
                        WHERE \(qKey) = ? AND \(qEmbedding) IS NOT NULL
                        """)
                for key in keys {
                    try delete.execute(arguments: [key])
                    try insert.execute(arguments: [key])
                }
                return .commit
            }
        }
    }

    /// Brings the index up to date for these keys, given as any key type.
    public func refresh(_ db: Database, keys: [some DatabaseValueConvertible]) throws {
        try refresh(db, keys: keys.map(\.databaseValue))
    }
}
