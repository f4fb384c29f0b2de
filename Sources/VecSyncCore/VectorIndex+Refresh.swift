import Foundation
import GRDB

extension VectorIndex {
    /// The most keys one refresh statement takes (a JSON array of at most this many keys).
    static let refreshBatchKeys = 1000

    /// Brings the index up to date for exactly these canonical keys: each is removed from
    /// the index, then re-added from its canonical row if that row exists and has an
    /// embedding. Keys of deleted rows are simply removed.
    ///
    /// The sync engine calls it after a merge, once, with the keys the merge changed, through
    /// ``DerivedIndexCatalogue/refresh(_:changedKeys:)`` (the triggers are silent while
    /// ``MergingFlag/set(_:_:)`` has set `vecsync_state.merging`). It runs in a savepoint: the
    /// index is refreshed for every key or for none.
    ///
    /// Integer and text keys are refreshed up to 1,000 at a time, by one `DELETE` and one
    /// `INSERT … SELECT` over `json_each` of a JSON array of them; other keys (blobs,
    /// reals) one at a time. Inside a transaction SQLite journals every page a statement
    /// changes, for each statement, so that it can fail alone: a statement per key
    /// journaled the index's pages again for every key, and past 64 KiB that journal is a
    /// temporary file written page by page.
    public func refresh(_ db: Database, keys: [DatabaseValue]) throws {
        guard !keys.isEmpty else { return }
        try VecSyncError.wrap {
            try db.inSavepoint {
                let batched = keys.filter(Self.isJSONKey)
                for start in stride(from: 0, to: batched.count, by: Self.refreshBatchKeys) {
                    let batch = try Self.jsonArray(batched[start..<min(start + Self.refreshBatchKeys, batched.count)])
                    try db.cachedStatement(sql: refreshSQL(delete: true, keys: "IN (SELECT value FROM json_each(?))"))
                        .execute(arguments: [batch])
                    try db.cachedStatement(sql: refreshSQL(delete: false, keys: "IN (SELECT value FROM json_each(?))"))
                        .execute(arguments: [batch])
                }
                for key in keys where !Self.isJSONKey(key) {
                    try db.cachedStatement(sql: refreshSQL(delete: true, keys: "= ?")).execute(arguments: [key])
                    try db.cachedStatement(sql: refreshSQL(delete: false, keys: "= ?")).execute(arguments: [key])
                }
                return .commit
            }
        }
    }

    /// Brings the index up to date for these keys, given as any key type.
    public func refresh(_ db: Database, keys: [some DatabaseValueConvertible]) throws {
        try refresh(db, keys: keys.map(\.databaseValue))
    }

    /// The statement that removes the keys matching `keys` (`= ?`, or `IN (…)`) from the
    /// index, or adds them again from their canonical rows.
    private func refreshSQL(delete: Bool, keys: String) -> String {
        if delete { return "DELETE FROM \(qName) WHERE \(qIndexKey) \(keys)" }
        return """
            \(insertPrefix)
            SELECT \(sourceColumns(prefix: "").joined(separator: ", ")) FROM \(qTable)
            WHERE \(qKey) \(keys) AND \(qEmbedding) IS NOT NULL
            """
    }

    /// Whether `key` survives a JSON array unchanged: integers and text do.
    private static func isJSONKey(_ key: DatabaseValue) -> Bool {
        switch key.storage {
        case .int64, .string: true
        default: false
        }
    }

    /// Integer and text keys as a JSON array, for `json_each`.
    private static func jsonArray(_ keys: ArraySlice<DatabaseValue>) throws -> String {
        let values: [Any] = keys.compactMap { key in
            switch key.storage {
            case .int64(let value): value
            case .string(let text): text
            default: nil
            }
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: values), as: UTF8.self)
    }
}
