import Foundation
import GRDB

/// The one merging flag: the row `('merging', 1)` of `vecsync_state`, present only inside a
/// merge's transaction. While it is set, the triggers of vec0 indexes do nothing (the merge
/// refreshes them with ``DerivedIndexCatalogue/refresh(_:changedKeys:)`` instead), nor do
/// the replication engine's capture and guard triggers.
///
/// ```swift
/// try MergingFlag.set(db, true)
/// defer { try? MergingFlag.set(db, false) }
/// ```
public enum MergingFlag {
    /// SQL that is true outside a merge, when the flag is not set. The triggers of vec0
    /// indexes and the replication engine's capture and guard triggers all test it. The
    /// subquery does not depend on the row being written, so SQLite evaluates it once per
    /// statement.
    public static let notMergingCondition =
        "coalesce((SELECT value FROM \(VectorIndex.stateTable.quotedSQLIdentifier) WHERE key = 'merging'), 0) IS NOT 1"

    /// Whether the flag is set (inside a merge's transaction).
    public static func isSet(_ db: Database) throws -> Bool {
        guard try db.tableExists(VectorIndex.stateTable) else { return false }
        return try Bool.fetchOne(db, sql: "SELECT NOT (\(notMergingCondition))") ?? false
    }

    /// Sets or clears the flag in the current transaction.
    public static func set(_ db: Database, _ merging: Bool) throws {
        if merging {
            try VectorIndex.createStateTable(db)
            try db.execute(
                sql:
                    "INSERT OR REPLACE INTO \(VectorIndex.stateTable.quotedSQLIdentifier) (key, value) VALUES ('merging', 1)"
            )
        } else if try db.tableExists(VectorIndex.stateTable) {
            try db.execute(sql: "DELETE FROM \(VectorIndex.stateTable.quotedSQLIdentifier) WHERE key = 'merging'")
        }
    }
}
