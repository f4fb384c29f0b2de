import Foundation
import GRDB
import VecSyncCore

/// Schema changes of tracked tables.
///
/// Stock SQLite has no hook that runs on DDL, so the engine compares each tracked table's
/// live columns (`pragma_table_xinfo`) and capture triggers with the definition it recorded,
/// at every entry that reads or merges changes (``changes(since:excluding:maximumRows:maximumBytes:)``,
/// ``forEachChangeSet(since:excluding:maximumRows:maximumBytes:_:)``, every merge, and so
/// every sync), and on ``adoptSchemaChanges()``:
///
/// - **Columns added** at the end (`ALTER TABLE … ADD COLUMN`, any client): the clock table
///   gains the columns' fields, the triggers are re-installed, and the columns sync from
///   then on. Values written there before the engine noticed are recorded as this site's
///   writes; the DEFAULT the other rows took, as this site's writes of version 0, which any
///   real write anywhere wins over and which order two replicas' different defaults
///   (see `recordDefaults`). Values a peer sent for those columns before they existed here
///   (kept in `vecsync_pending`) are applied.
/// - **Triggers gone** while the table and its columns are still there (the table was
///   dropped and re-created: SQLite's 12-step rebuild): the triggers are put back, rows
///   inserted or deleted meanwhile are recorded as this site's; the clock table, which the
///   rebuild does not touch, keeps every version. An update of an existing row made while
///   the triggers were missing is not seen: nothing kept the row's old values, and keeping
///   a digest of every row on the capture path would need a hash function stock SQLite does
///   not have in plain-SQL triggers. So when rows from before are still there, the table is
///   reported (``SchemaReport/unverifiedTables``, ``unverifiedTables()``) with the repair,
///   ``restamp(_:columns:)``; a rebuild made inside ``alter(_:renamingColumns:_:)`` needs none.
/// - **Anything else** (a column dropped or renamed, a type or key changed, the table
///   dropped) outside ``alter(_:renamingColumns:_:)``: the table is suspended — it stops
///   syncing, its incoming rows wait in quarantine, and every other table goes on — until
///   an `alter` call (with an empty body if the change is made already) records it.
///
/// Change sets carry each table's whole definition (format 3), so replicas with different
/// column lists merge the columns both know; see ``merge(_:)``.
extension Replica {
    /// Brings the engine up to date with the schema of every tracked table (see above) and
    /// says what it did. Merges and change scans call it on their own; an app may call it
    /// right after its migrations.
    ///
    /// ```swift
    /// try dbQueue.write { db in try db.execute(sql: "ALTER TABLE photos ADD COLUMN caption TEXT") }
    /// print(try replica.adoptSchemaChanges())   // "photos: columns caption added"
    /// ```
    @discardableResult
    public func adoptSchemaChanges() throws -> SchemaReport {
        try VecSyncError.wrap { try writer.write { db in try Self.adoptSchemaChanges(db, site: site) } }
    }

    /// The tracked tables that do not sync because their schema changed in a way the engine
    /// cannot follow on its own, with the reason for each.
    public func suspendedTables() throws -> [String: String] {
        try VecSyncError.wrap {
            try writer.read { db in
                var suspended: [String: String] = [:]
                for table in try Self.recordedTables(db) {
                    if let reason = try Self.schemaState(db, of: table).suspension { suspended[table.name] = reason }
                }
                return suspended
            }
        }
    }

    /// Changes the schema of the tracked table `table` — drop or rename columns, rebuild the
    /// table, drop it — without losing what syncs: the one migration call for what
    /// `ALTER TABLE … ADD COLUMN` alone does not cover (cr-sqlite's begin/commit alter).
    ///
    /// In one transaction: the table's capture triggers are dropped (SQLite refuses to drop
    /// or rename a column a trigger names), `body` runs, and the engine compares the table
    /// with its recorded definition. Columns keep their versions by name, or by
    /// `renamingColumns` (old name to new name); columns gone are dropped from the clock
    /// table, new ones are recorded as `ALTER TABLE … ADD COLUMN` ones are (see above); the
    /// triggers come back; rows inserted or deleted by `body` are recorded as
    /// this site's. A table `body` dropped is no longer tracked. The engine remembers what was
    /// dropped and renamed, so change sets of peers that have not migrated yet still merge:
    /// a renamed column's values go to its new name, a dropped column's or table's values
    /// are ignored (and reported). If anything throws, nothing changes.
    ///
    /// Values `body` changes in rows that exist before and after it — an `UPDATE`, or the
    /// copy step of a rebuild (`INSERT INTO new SELECT id, lower(name) … FROM old`) — are
    /// recorded as this site's writes, column by column, following renames, as the capture
    /// triggers would have: before `body` runs, the engine copies the table's keys and synced
    /// values into a TEMP table, and compares after (``AlterSnapshot``; some 0.35 s more
    /// per call for 10,000 rows with 768-d embeddings). So rebuild a tracked table with SQLite's 12
    /// steps inside `alter`: a rebuild made outside it is noticed and capture restored, but
    /// no copy of the values before it exists, so values its copy step changed are not
    /// known; the table is then listed in ``SchemaReport/unverifiedTables`` and
    /// ``unverifiedTables()`` until ``restamp(_:columns:)`` records them.
    ///
    /// ```swift
    /// try replica.alter("photos", renamingColumns: ["title": "caption"]) { db in
    ///     try db.execute(sql: "ALTER TABLE photos RENAME COLUMN title TO caption")
    ///     try db.execute(sql: "ALTER TABLE photos DROP COLUMN legacy")
    ///     try db.execute(sql: "UPDATE photos SET caption = trim(caption)")   // recorded, and syncs
    /// }
    /// ```
    @discardableResult
    public func alter(
        _ table: String, renamingColumns renames: [String: String] = [:], _ body: (Database) throws -> Void
    ) throws -> SchemaReport {
        try VecSyncError.wrap {
            try writer.write { db in
                guard
                    let before = try Self.recordedTables(db).first(where: { $0.name.lowercased() == table.lowercased() }
                    )
                else { throw VecSyncError.tableNotTracked(table: table) }
                for (old, new) in renames {
                    guard before.columns.contains(where: { $0.lowercased() == old.lowercased() }) else {
                        throw VecSyncError.invalidArgument(
                            name: "renamingColumns", value: old,
                            reason: "table \(before.name) has no tracked column \(old) to rename to \(new)")
                    }
                }
                let wasSuspended =
                    try Self.isMarkedSuspended(db, before.name) || Self.schemaState(db, of: before).suspension != nil
                let triggers = TriggerSQL(table: before, site: site)
                var report = SchemaReport()
                if try !triggers.isCapturing(db) {
                    // Rebuilt before this call: what the rebuild changed is not known.
                    try Self.noteUnverified(db, table: before, report: &report)
                }
                let snapshot = try Self.snapshot(db, of: before)
                let tablesBefore = try Self.tableNames(db)
                try db.execute(sql: TriggerSQL.drop(triggers.triggerNames + triggers.guardTriggerNames))
                try db.execute(sql: TriggerSQL.drop(CounterSQL(table: before, columns: [], site: site).triggerNames))
                try body(db)
                var current = before
                if let renamed = try Self.renamedTable(db, before, tablesBefore: tablesBefore) {
                    current = try Self.recordRename(db, of: before, to: renamed, report: &report)
                }
                try Self.commitAlter(
                    db, before: current, renames: renames, snapshot: snapshot, site: site, report: &report)
                try db.execute(sql: "DELETE FROM \(EngineNames.suspended) WHERE tbl = ?", arguments: [current.name])
                if let after = try Self.recordedTables(db).first(where: { $0.name == current.name }) {
                    try Self.installCounters(db, table: after, site: site)
                }
                if wasSuspended, let after = try Self.recordedTables(db).first(where: { $0.name == current.name }) {
                    try Self.resendAll(db, table: after)
                    report.resumedTables.append(after.name)
                }
                let others = try Self.adoptSchemaChanges(db, site: site)
                report.merge(others)
                return report
            }
        }
    }

    /// The application's tables (not the engine's or SQLite's), by name.
    private static func tableNames(_ db: Database) throws -> Set<String> {
        Set(
            try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master WHERE type = 'table'
                    AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'vecsync\\_%' ESCAPE '\\'
                    """))
    }

    /// The name `table` took in an `alter` body that renamed it (`ALTER TABLE … RENAME TO`):
    /// the one table the body made, when `table` is gone and that table has the same key.
    private static func renamedTable(_ db: Database, _ table: TrackedTable, tablesBefore: Set<String>) throws
        -> String?
    {
        guard try !db.tableExists(table.name) else { return nil }
        let made = try tableNames(db).subtracting(tablesBefore)
        guard made.count == 1, let name = made.first,
            let live = try? TrackedTable.introspect(
                db, table: name, authority: table.authority, checkingKeyKind: false),
            live.primaryKey.lowercased() == table.primaryKey.lowercased(), live.keyKind == table.keyKind
        else { return nil }
        return live.name
    }

    /// Moves what the engine keeps of `table` to its new name `name`: the clock table, the
    /// record, kept values, quarantined rows and retired columns; and notes the rename in
    /// `vecsync_retired` (`col` empty, `renamed_to` the new name), so change sets that still
    /// name the old table merge into the new one. Returns the table under its new name.
    private static func recordRename(
        _ db: Database, of table: TrackedTable, to name: String, report: inout SchemaReport
    ) throws -> TrackedTable {
        let renamed = table.with(name: name)
        try db.execute(sql: "ALTER TABLE \(table.clockTable.quotedName) RENAME TO \(renamed.clockTable.quotedName)")
        try db.execute(sql: "DELETE FROM \(EngineNames.tables) WHERE name = ?", arguments: [table.name])
        try record(renamed, db)
        for engineTable in [
            EngineNames.pending, EngineNames.quarantine, EngineNames.unverified, EngineNames.suspended,
            IdentityMap.tableName,
        ] {
            try db.execute(
                sql: "UPDATE OR REPLACE \(engineTable) SET tbl = ? WHERE tbl = ?", arguments: [name, table.name])
        }
        try db.execute(
            sql: "UPDATE OR REPLACE \(EngineNames.retired) SET tbl = ? WHERE tbl = ? AND col <> ''",
            arguments: [name, table.name])
        try db.execute(
            sql: "DELETE FROM \(EngineNames.retired) WHERE tbl = ? COLLATE NOCASE AND col = ''", arguments: [name])
        try db.execute(
            sql: "INSERT OR REPLACE INTO \(EngineNames.retired) (tbl, col, renamed_to) VALUES (?, '', ?)",
            arguments: [table.name, name])
        report.renamedTables[table.name] = name
        return renamed
    }

    // MARK: Checking

    /// How a tracked table's live schema compares with its recorded definition.
    struct SchemaState {
        /// The live definition (nil when the table is gone).
        var live: TrackedTable?
        /// Why the engine cannot follow the change on its own, or nil.
        var suspension: String?
        /// Whether the capture triggers are in place.
        var capturing = true
        /// How many columns were added at the end since the definition was recorded.
        var addedColumns = 0

        /// True when the engine has something to adopt.
        var needsAdoption: Bool { suspension == nil && (!capturing || addedColumns > 0) }
    }

    /// Compares `recorded` with the live table.
    static func schemaState(_ db: Database, of recorded: TrackedTable) throws -> SchemaState {
        var state = SchemaState()
        let live: TrackedTable
        do {
            // A table tracked with an integer key and no authority by an earlier version
            // keeps syncing; setAuthority(_:for:) makes it safe.
            live = try TrackedTable.introspect(
                db, table: recorded.name, authority: recorded.authority, checkingKeyKind: false)
        } catch let VecSyncError.untrackableTable(_, reason) {
            state.suspension =
                "its table cannot be tracked any more (\(reason)); drop it with Replica.alter, or re-create it as it was"
            return state
        }
        state.live = live
        if live.primaryKey != recorded.primaryKey || live.keyKind != recorded.keyKind {
            state.suspension =
                "its key was \(recorded.primaryKey) (\(recorded.keyKind.rawValue)) and is now \(live.primaryKey) "
                + "(\(live.keyKind.rawValue)); a key cannot change while the table is tracked: untrack it and track it again"
            return state
        }
        let prefix = Array(live.columns.prefix(recorded.columns.count))
        let prefixTypes = Array(live.declaredTypes.prefix(recorded.columns.count))
        if prefix != recorded.columns || prefixTypes != recorded.declaredTypes {
            state.suspension =
                "tracked columns (\(recorded.columns.joined(separator: ", "))), now (\(live.columns.joined(separator: ", "))): "
                + "columns were dropped, renamed or retyped outside Replica.alter; record the change with "
                + "Replica.alter(_:renamingColumns:_:) (an empty body will do)"
            return state
        }
        state.addedColumns = live.columns.count - recorded.columns.count
        state.capturing = try TriggerSQL(table: recorded, site: SiteID("")).isCapturing(db)
        return state
    }

    /// Adopts pending schema changes in a write of its own when a read finds one: what
    /// change scans call first, since they only read.
    func adoptSchemaChangesIfNeeded() throws {
        let needed = try VecSyncError.wrap {
            try writer.read { db in
                try Self.recordedTables(db).contains { table in
                    let state = try Self.schemaState(db, of: table)
                    // A suspension is noted (so the table's rows are sent again once it
                    // resumes), and a resumption acted on, before a scan passes over it.
                    return try state.needsAdoption
                        || (state.suspension != nil) != Self.isMarkedSuspended(db, table.name)
                }
            }
        }
        if needed { try adoptSchemaChanges() }
    }

    // MARK: Adopting

    /// Adopts added columns and restores capture for every tracked table that needs it,
    /// inside the caller's write transaction; reports suspended tables.
    static func adoptSchemaChanges(_ db: Database, site: SiteID) throws -> SchemaReport {
        var report = SchemaReport()
        for recorded in try recordedTables(db) {
            let state = try schemaState(db, of: recorded)
            if let reason = state.suspension {
                report.suspendedTables[recorded.name] = reason
                try db.execute(
                    sql: "INSERT OR IGNORE INTO \(EngineNames.suspended) (tbl, reason) VALUES (?, ?)",
                    arguments: [recorded.name, reason])
                continue
            }
            if try isMarkedSuspended(db, recorded.name) {
                // Fixed outside `alter` (the change undone): change scans skipped the table
                // meanwhile, so every row goes out again.
                try db.execute(sql: "DELETE FROM \(EngineNames.suspended) WHERE tbl = ?", arguments: [recorded.name])
                try resendAll(db, table: recorded)
                report.resumedTables.append(recorded.name)
            }
            guard state.needsAdoption, let live = state.live else { continue }
            let table = recorded.with(columns: live.columns, declaredTypes: live.declaredTypes)
            let added = Array(recorded.columns.count..<table.columns.count)
            if !added.isEmpty {
                try db.execute(sql: recorded.clockTable.addColumnsSQL(recorded.columns.count..<table.columns.count))
                try record(table, db)
                report.addedColumns[table.name] = added.map { table.columns[$0] }
            }
            if !state.capturing {
                report.restoredTables.append(table.name)
                try noteUnverified(db, table: recorded, report: &report)
            }
            try restoreCapture(db, table: table, site: site, report: &report)
            report.recordedRows += try recordWrittenValues(
                db, table: table, columns: added, site: site, report: &report)
            report.appliedKeptValues += try applyKeptValues(db, table: table, columns: added)
        }
        return report
    }

    /// Step two of ``alter(_:renamingColumns:_:)``: compares the table `body` left with its
    /// definition `before`, and rebuilds the clock table, triggers and records to match.
    private static func commitAlter(
        _ db: Database, before: TrackedTable, renames: [String: String], snapshot: AlterSnapshot?, site: SiteID,
        report: inout SchemaReport
    ) throws {
        guard try db.tableExists(before.name) else {
            try db.execute(sql: before.clockTable.dropSQL)
            try db.execute(sql: "DELETE FROM \(EngineNames.tables) WHERE name = ?", arguments: [before.name])
            try db.execute(sql: "DELETE FROM \(EngineNames.pending) WHERE tbl = ?", arguments: [before.name])
            try db.execute(sql: "DELETE FROM \(EngineNames.quarantine) WHERE tbl = ?", arguments: [before.name])
            try db.execute(sql: "DELETE FROM \(EngineNames.unverified) WHERE tbl = ?", arguments: [before.name])
            report.unverifiedTables[before.name] = nil
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(EngineNames.retired) (tbl, col, renamed_to) VALUES (?, '', NULL)",
                arguments: [before.name])
            report.droppedTables.append(before.name)
            return
        }
        let live: TrackedTable
        do {
            live = try TrackedTable.introspect(
                db, table: before.name, authority: before.authority, checkingKeyKind: false)
        } catch let VecSyncError.untrackableTable(_, reason) {
            throw VecSyncError.schemaChanged(table: before.name, reason: "after the alter, \(reason)")
        }
        guard live.primaryKey == before.primaryKey, live.keyKind == before.keyKind else {
            throw VecSyncError.schemaChanged(
                table: before.name,
                reason:
                    "the alter changed the key from \(before.primaryKey) (\(before.keyKind.rawValue)) to \(live.primaryKey) "
                    + "(\(live.keyKind.rawValue)); untrack the table and track it again to change its key")
        }
        // Each live column's position in `before`: by name, or by a rename.
        var oldPosition: [String: Int] = [:]
        for (index, name) in before.columns.enumerated() { oldPosition[name.lowercased()] = index }
        var renamedTo: [String: String] = [:]
        for (old, new) in renames {
            guard live.columns.contains(where: { $0.lowercased() == new.lowercased() }) else {
                throw VecSyncError.invalidArgument(
                    name: "renamingColumns", value: new,
                    reason: "after the alter, table \(before.name) has no column \(new) (renamed from \(old))")
            }
            renamedTo[old.lowercased()] = new
        }
        var mapping: [Int?] = []
        var used = Set<Int>()
        for name in live.columns {
            var source = oldPosition[name.lowercased()]
            if let renamed = renamedTo.first(where: { $0.value.lowercased() == name.lowercased() }) {
                source = oldPosition[renamed.key]
            } else if let old = source, renamedTo[before.columns[old].lowercased()] != nil {
                source = nil  // the old name was renamed away and this is a new column of that name
            }
            if let source { used.insert(source) }
            mapping.append(source)
        }
        let dropped = before.columns.indices.filter {
            !used.contains($0) && renamedTo[before.columns[$0].lowercased()] == nil
        }
        let table = before.with(columns: live.columns, declaredTypes: live.declaredTypes)
        if mapping != Array(before.columns.indices).map({ Optional($0) }) {
            // Rebuild the clock table with the columns' fields at their new positions.
            let old = EngineNames.alterCopy(of: before.name)
            try db.execute(sql: "ALTER TABLE \(before.clockTable.quotedName) RENAME TO \(old.quotedSQLIdentifier)")
            try db.execute(sql: table.clockTable.createSQL)
            try db.execute(sql: table.clockTable.copySQL(from: old, mapping: mapping))
            try db.execute(sql: "DROP TABLE \(old.quotedSQLIdentifier)")
        }
        try record(table, db)
        for index in dropped {
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(EngineNames.retired) (tbl, col, renamed_to) VALUES (?, ?, NULL)",
                arguments: [table.name, before.columns[index]])
            try db.execute(
                sql: "DELETE FROM \(EngineNames.pending) WHERE tbl = ? AND col = ? COLLATE NOCASE",
                arguments: [table.name, before.columns[index]])
        }
        for (old, new) in renames where old.lowercased() != new.lowercased() {
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(EngineNames.retired) (tbl, col, renamed_to) VALUES (?, ?, ?)",
                arguments: [table.name, old, new])
            try db.execute(
                sql: "UPDATE OR REPLACE \(EngineNames.pending) SET col = ? WHERE tbl = ? AND col = ? COLLATE NOCASE",
                arguments: [new, table.name, old])
        }
        // A column added again under a retired name syncs again.
        for name in live.columns {
            try db.execute(
                sql: "DELETE FROM \(EngineNames.retired) WHERE tbl = ? AND col = ? COLLATE NOCASE",
                arguments: [table.name, name])
        }
        let added = mapping.indices.filter { mapping[$0] == nil }
        if !added.isEmpty { report.addedColumns[table.name] = added.map { table.columns[$0] } }
        if !dropped.isEmpty { report.droppedColumns[table.name] = dropped.map { before.columns[$0] } }
        if !renames.isEmpty { report.renamedColumns[table.name] = renames }
        try restoreCapture(db, table: table, site: site, report: &report)
        if let snapshot {
            // Each column's name before the body: the one it was renamed from, or its own.
            let sources = table.columns.indices.map { index -> String? in
                let name = table.columns[index]
                guard mapping[index] != nil else { return nil }  // added: the ADD COLUMN rule below
                if let old = renamedTo.first(where: { $0.value.lowercased() == name.lowercased() })?.key,
                    snapshot.contains(old)
                {
                    return old
                }
                return snapshot.contains(name) && renamedTo[name.lowercased()] == nil ? name : nil
            }
            report.recordedRows += try snapshot.recordChanges(db, table: table, sources: sources, site: site)
        }
        report.recordedRows += try recordWrittenValues(db, table: table, columns: added, site: site, report: &report)
        let renamedColumns = mapping.indices.filter { index in
            renamedTo.values.contains { $0.lowercased() == table.columns[index].lowercased() }
        }
        report.appliedKeptValues += try applyKeptValues(db, table: table, columns: added + renamedColumns)
    }

    /// Copies the rows of `table` as they are, before an `alter` body changes them; nil when
    /// the table cannot be read as a tracked table now (nothing to compare with then).
    private static func snapshot(_ db: Database, of table: TrackedTable) throws -> AlterSnapshot? {
        let live: TrackedTable
        do {
            live = try TrackedTable.introspect(
                db, table: table.name, authority: table.authority, checkingKeyKind: false)
        } catch VecSyncError.untrackableTable {
            return nil
        }
        guard live.primaryKey.lowercased() == table.primaryKey.lowercased() else { return nil }
        return try AlterSnapshot(db, table: live.name, primaryKey: live.primaryKey, columns: live.columns)
    }

    /// Notes, when `table` lost its capture triggers (rebuilt with SQLite's 12 steps outside
    /// `alter`) while rows that existed before are still there, that their values may have
    /// changed unseen: in `vecsync_unverified` and in `report`. Called before capture is
    /// restored, while the rows inserted meanwhile have no live clock row yet.
    static func noteUnverified(_ db: Database, table: TrackedTable, report: inout SchemaReport) throws {
        guard try db.tableExists(table.name) else { return }
        let key = table.primaryKey.quotedSQLIdentifier
        let survivors =
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT 1 FROM \(table.clockTable.quotedName) AS c JOIN \(table.name.quotedSQLIdentifier) AS t
                    ON t.\(key) = c.pk WHERE c.cl % 2 = 1 LIMIT 1
                    """) ?? false
        guard survivors else { return }
        let reason =
            "the table was re-created while capture was off (SQLite's 12-step rebuild outside Replica.alter), so values "
            + "its copy step changed in existing rows were not recorded and will not sync; if it changed any, run "
            + "Replica.restamp(\(table.name.debugDescription), columns: [the columns it changed]) on this replica, "
            + "or with columns: [] once you know it changed none"
        try db.execute(
            sql: "INSERT OR REPLACE INTO \(EngineNames.unverified) (tbl, reason) VALUES (?, ?)",
            arguments: [table.name, reason])
        report.unverifiedTables[table.name] = reason
    }

    /// Whether a suspension of `table` was noted in `vecsync_suspended`.
    static func isMarkedSuspended(_ db: Database, _ table: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM \(EngineNames.suspended) WHERE tbl = ?", arguments: [table]) ?? false
    }

    /// Gives every clock row of `table` a new sequence number (and each column changed so
    /// far the same), so the whole table travels in the next change sets to every peer,
    /// versions unchanged: what a table that was skipped while suspended needs. Merging
    /// rows a peer has already is harmless.
    static func resendAll(_ db: Database, table: TrackedTable) throws {
        let clock = table.clockTable.quotedName
        let count = try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(clock)") ?? 0
        guard count > 0 else { return }
        let changes = table.columns.indices.map { (index: Int) -> String in
            let q = ClockTable.changedAt(index)
            return ", \(q) = CASE WHEN \(q) IS NULL THEN NULL ELSE s.base + n.r END"
        }.joined()
        try db.execute(
            sql: """
                WITH n AS (SELECT pk, row_number() OVER (ORDER BY pk) AS r FROM \(clock)),
                s AS (SELECT seq AS base FROM \(EngineNames.replica) WHERE id = 1)
                UPDATE \(clock) SET seq = s.base + n.r\(changes) FROM n, s WHERE n.pk = \(clock).pk
                """)
        try db.execute(sql: TriggerSQL.advanceSequence, arguments: [count])
    }
}
