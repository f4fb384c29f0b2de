import Foundation
import GRDB
import VecSyncCore

extension Replica {
    /// Syncs through a shared folder: records deletes that escaped capture, pushes this
    /// replica's changes (unless it is read-only), pulls and merges every other replica's,
    /// refreshing derived indexes as each merge commits.
    ///
    /// Files that cannot be read or merged are listed in ``SyncReport/problems`` and
    /// skipped; the rest of the sync goes on.
    ///
    /// ```swift
    /// let report = try replica.sync(through: FolderTransport(path: "/mnt/share/sync"))
    /// print(report)
    /// ```
    @discardableResult
    public func sync(through transport: FolderTransport) throws -> SyncReport {
        var report = SyncReport(site: site)
        if try isReadOnly() {
            report.readOnly = true
        } else {
            report.reconciled = try reconcile()
            let pushed = try transport.push(self)
            report.pushedFiles = pushed.files
            report.pushedRows = pushed.rows
        }
        let pulled = try transport.pull(into: self)
        report.merges = pulled.merges
        report.problems = pulled.problems
        report.unknownFiles = pulled.unknownFiles
        return report
    }

    /// Records as deleted every tracked row whose clock says it exists but whose table row
    /// is gone — a delete no trigger saw, such as a row removed by `INSERT OR REPLACE` on
    /// another UNIQUE column while recursive triggers are off. Returns how many.
    @discardableResult
    public func reconcile() throws -> Int {
        try SyncError.wrap {
            try writer.write { db in
                // Notes left by inserts that did not happen (OR IGNORE, upserts).
                try db.execute(sql: "DELETE FROM vecsync_unchanged")
                var count = 0
                for table in try Self.trackedTables(db) {
                    let clock = table.clockTable.quotedName
                    let key = table.primaryKey.quotedSQLIdentifier
                    let missing = try DatabaseValue.fetchAll(db, sql: """
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
