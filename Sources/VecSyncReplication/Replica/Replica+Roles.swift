import GRDB

extension Replica {
    /// Makes the replica read-only, or writable again.
    ///
    /// A read-only replica pulls and merges but never pushes, and refuses local writes to
    /// its tracked tables from any SQLite client with the error
    /// `vecsync: table photos is read-only on replica 'phone'; its rows change only by sync`.
    /// Merges still write, as the guard triggers stay silent while merging.
    public func setReadOnly(_ readOnly: Bool) throws {
        try VecSyncError.wrap {
            try writer.write { db in
                try db.execute(
                    sql: "UPDATE \(EngineNames.replica) SET read_only = ? WHERE id = 1", arguments: [readOnly])
                for table in try Self.trackedTables(db, checkingSchema: false) {
                    let sql = TriggerSQL(table: table, site: site)
                    try db.execute(sql: TriggerSQL.drop(sql.guardTriggerNames))
                    if readOnly { try db.execute(sql: sql.createGuardTriggers(site: site)) }
                }
            }
        }
    }

    /// Whether the replica is read-only.
    public func isReadOnly() throws -> Bool {
        try VecSyncError.wrap { try writer.read { db in try Self.isReadOnly(db) } }
    }

    /// Makes `site` authoritative for `table` (or no site, with nil), as a desktop indexer is
    /// over the file catalogue it scans: its inserts, deletes and column writes win over
    /// every write another site made concurrently, whatever the clocks say. A write another
    /// site makes after it has merged the authority's still wins over it, as in any
    /// last-writer-wins order, so replicas converge whichever writes they make.
    ///
    /// Writes made before the authority was set carry no precedence. The authority is part
    /// of the table's schema fingerprint, so every replica must set the same one; change
    /// sets from a replica that disagrees are refused.
    ///
    /// A table tracked with integer keys and an authority keeps one, the only site that
    /// inserts its rows (see ``track(_:authority:)``): it may move to another site, never be
    /// removed; removing it throws ``VecSyncError/untrackableTable(table:reason:)``. A table with
    /// local keys (``TrackedTable/hasLocalKeys``) cannot get one: its ids differ per replica.
    public func setAuthority(_ site: SiteID?, for table: String) throws {
        try VecSyncError.wrap {
            try writer.write { db in
                let tracked = try Self.trackedTable(db, named: table)
                if site != nil && tracked.hasLocalKeys {
                    throw VecSyncError.untrackableTable(
                        table: tracked.name,
                        reason:
                            "its integer key \(tracked.primaryKey) is local to each replica (rows from other replicas have ids "
                            + "of their own here), so no site can own the ids; untrack it on every replica and track it with "
                            + "track(_:authority:) on a copy whose ids are the same everywhere")
                }
                if site == nil && tracked.keyKind == .integer && tracked.authority != nil {
                    throw VecSyncError.untrackableTable(
                        table: tracked.name,
                        reason:
                            "its integer key \(tracked.primaryKey) needs the authoritative site that alone inserts rows; "
                            + "name another site instead of none, or move the table to a TEXT or BLOB key")
                }
                try db.execute(
                    sql: "UPDATE \(EngineNames.tables) SET authority = ? WHERE name = ?",
                    arguments: [site?.rawValue, tracked.name])
                try TriggerSQL(table: tracked.with(authority: site), site: self.site).install(db)
            }
        }
    }
}
