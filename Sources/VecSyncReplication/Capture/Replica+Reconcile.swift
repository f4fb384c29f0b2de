import Foundation
import GRDB
import VecSyncCore

extension Replica {
    /// Records as deleted every tracked row whose clock says it exists but whose table row
    /// is gone — a delete no trigger saw, such as a row removed by `INSERT OR REPLACE` on
    /// another UNIQUE column while recursive triggers are off. Returns how many.
    @discardableResult
    public func reconcile() throws -> Int {
        try VecSyncError.wrap {
            try writer.write { db in
                // Notes left by inserts that did not happen (OR IGNORE, upserts).
                try db.execute(sql: "DELETE FROM \(EngineNames.unchanged)")
                var count = 0
                for table in try Self.trackedTables(db) {
                    let clock = table.clockTable.quotedName
                    let key = table.primaryKey.quotedSQLIdentifier
                    let missing = try DatabaseValue.fetchAll(
                        db,
                        sql: """
                            SELECT c.pk FROM \(clock) AS c WHERE c.cl % 2 = 1
                            AND NOT EXISTS (SELECT 1 FROM \(table.name.quotedSQLIdentifier) AS t WHERE t.\(key) = c.pk)
                            """)
                    let sql = TriggerSQL(table: table, site: site)
                    for pk in missing {
                        try db.execute(sql: TriggerSQL.tick)
                        try db.execute(sql: sql.recordMissingDelete, arguments: [pk])
                        count += 1
                    }
                }
                return count
            }
        }
    }
}
