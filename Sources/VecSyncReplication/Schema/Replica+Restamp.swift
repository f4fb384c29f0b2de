import GRDB
import VecSyncCore

/// Re-stamping a table's values as this site's writes: the repair for values that changed
/// while capture was off.
extension Replica {
    /// Records the current values of `columns` (every synced column when nil) in every row of
    /// the tracked table `table` as this site's writes, made now — as if each had just been
    /// written with an UPDATE — and clears the table's entry in ``unverifiedTables()``.
    ///
    /// What to run after SQLite's 12-step rebuild of a tracked table made outside
    /// ``alter(_:renamingColumns:_:)`` whose copy step changed values
    /// (`INSERT INTO new SELECT id, lower(name) … FROM old`): the engine saw no update, so
    /// those values would never sync. Every row's stamped columns travel in the next change
    /// sets, and win over every write of them this replica has not merged yet — what the
    /// rebuild itself would have done had capture been on, for every value it rewrote. Pass
    /// only the columns the copy step changed to keep the traffic (and that reach) small;
    /// `columns: []` stamps nothing and only clears the entry, once you know nothing changed.
    /// Rebuilding inside `alter` instead records exactly the changed values.
    ///
    /// ```swift
    /// let report = try replica.adoptSchemaChanges()   // "albums: values may have changed without capture: …"
    /// try replica.restamp("albums", columns: ["name"])
    /// ```
    ///
    /// Returns how many rows were stamped. A read-only replica refuses: its values change only
    /// by sync.
    @discardableResult
    public func restamp(_ table: String, columns: [String]? = nil) throws -> Int {
        try VecSyncError.wrap {
            try writer.write { db in
                if try Self.isReadOnly(db) {
                    throw VecSyncError.readOnlyReplica(site: site, operation: "restamp table \(table)")
                }
                _ = try Self.adoptSchemaChanges(db, site: site)
                guard
                    let tracked = try Self.trackedTables(db).first(where: { $0.name.lowercased() == table.lowercased() }
                    )
                else {
                    if let reason = try String.fetchOne(
                        db, sql: "SELECT reason FROM \(EngineNames.suspended) WHERE tbl = ? COLLATE NOCASE",
                        arguments: [table]
                    ) {
                        throw VecSyncError.schemaChanged(table: table, reason: reason)
                    }
                    throw VecSyncError.tableNotTracked(table: table)
                }
                var stamped = Set<Int>()
                for name in columns ?? tracked.columns {
                    guard let index = tracked.columns.firstIndex(where: { $0.lowercased() == name.lowercased() }) else {
                        throw VecSyncError.invalidArgument(
                            name: "columns", value: name,
                            reason:
                                "table \(tracked.name) has no synced column \(name) (its columns: \(tracked.columns.joined(separator: ", ")))"
                        )
                    }
                    stamped.insert(index)
                }
                try db.execute(sql: "DELETE FROM \(EngineNames.unverified) WHERE tbl = ?", arguments: [tracked.name])
                guard !stamped.isEmpty else { return 0 }
                let flags = tracked.columns.indices.map { ", \(stamped.contains($0) ? 1 : 0) AS d\($0)" }.joined()
                let key = tracked.primaryKey.quotedSQLIdentifier
                return try TriggerSQL(table: tracked, site: site).stampColumns(
                    db,
                    from:
                        "SELECT \(key) AS pk\(flags) FROM \(tracked.name.quotedSQLIdentifier) WHERE \(key) IS NOT NULL")
            }
        }
    }

    /// The tracked tables whose values may have changed without capture, with what to do:
    /// re-created while capture was off (SQLite's 12-step rebuild outside
    /// ``alter(_:renamingColumns:_:)``) with rows kept from before, and not re-stamped since
    /// (``restamp(_:columns:)``). The same entries ``SchemaReport/unverifiedTables`` reported.
    public func unverifiedTables() throws -> [String: String] {
        try adoptSchemaChangesIfNeeded()
        return try VecSyncError.wrap {
            try writer.read { db in
                let tracked = Set(try Self.recordedTables(db).map(\.name))
                var tables: [String: String] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT tbl, reason FROM \(EngineNames.unverified)") {
                    let name: String = row["tbl"]
                    if tracked.contains(name) { tables[name] = row["reason"] }
                }
                return tables
            }
        }
    }
}
