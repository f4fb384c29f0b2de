import Foundation
import GRDB
import VecSyncCore

// What adopting a schema change records (Replica+Schema.swift decides what changed): the
// capture triggers restored after a rebuild and the rows written meanwhile, the values of
// added columns and their DEFAULTs, and the values peers sent before a column existed here.

extension Replica {
    /// Installs `table`'s capture triggers (and guard triggers on a read-only replica), then
    /// records as this site's the rows inserted or deleted while they were missing.
    static func restoreCapture(
        _ db: Database, table: TrackedTable, site: SiteID, report: inout SchemaReport
    ) throws {
        let sql = TriggerSQL(table: table, site: site)
        try sql.install(db)
        if try isReadOnly(db) {
            try db.execute(sql: TriggerSQL.drop(sql.guardTriggerNames))
            try db.execute(sql: sql.createGuardTriggers(site: site))
        }
        let inserted = try Int.fetchOne(db, sql: sql.countUncapturedRows) ?? 0
        if inserted > 0 {
            try db.execute(sql: TriggerSQL.tick)
            try db.execute(sql: sql.recordUncapturedRows)
            try db.execute(sql: TriggerSQL.advanceSequence, arguments: [inserted])
        }
        let key = table.primaryKey.quotedSQLIdentifier
        let missing = try DatabaseValue.fetchAll(
            db,
            sql: """
                SELECT c.pk FROM \(table.clockTable.quotedName) AS c WHERE c.cl % 2 = 1
                AND NOT EXISTS (SELECT 1 FROM \(table.name.quotedSQLIdentifier) AS t WHERE t.\(key) = c.pk)
                """)
        for pk in missing {
            try db.execute(sql: TriggerSQL.tick)
            try db.execute(sql: sql.recordMissingDelete, arguments: [pk])
        }
        report.recordedRows += inserted + missing.count
    }

    /// Records the values that rows existing when the columns `columns` were added hold
    /// in them: as this site's writes made now when they differ from the column's default
    /// (written before the engine knew the column), as this site's writes of version 0
    /// otherwise (the default; see ``recordDefaults(_:table:columns:site:)``). Returns how
    /// many rows it recorded with a new version.
    static func recordWrittenValues(
        _ db: Database, table: TrackedTable, columns: [Int], site: SiteID, report: inout SchemaReport
    ) throws -> Int {
        let recorded = try recordNonDefaultValues(db, table: table, columns: columns, site: site)
        report.defaultedRows += try recordDefaults(db, table: table, columns: columns, site: site)
        return recorded
    }

    /// Records, in every live row where the new columns `columns` hold no write yet (their
    /// DEFAULT), a write of version 0 by this site. Returns how many rows it stamped.
    ///
    /// Why: replicas that add a column to rows they share each fill it with their own
    /// DEFAULT, with no version to order them, so two replicas with different defaults
    /// (`DEFAULT 0` here, `DEFAULT 1` there) would hold different values forever, silently.
    /// Stamped version 0, every such value travels once (each row carries its key and that
    /// column only: 363,300 bytes for 10,000 rows with 768-d embeddings, which a replica
    /// holding the same rows merged in 2.1 s in a debug build), and the merge orders
    /// them like any writes: every real write (version > 0) wins over a default anywhere,
    /// and two defaults are ordered by site, the same on every replica. When the defaults
    /// agree, as they should, the values merged are the ones already there. Without the
    /// traffic, replicas would have to compare defaults first, which change sets of format 3
    /// cannot carry (older peers could not read a format that does).
    ///
    /// A read-only replica stamps nothing: it never sends its defaults, so they must not
    /// win over the ones it receives (any write wins over an unversioned value).
    static func recordDefaults(
        _ db: Database, table: TrackedTable, columns: [Int], site: SiteID
    ) throws -> Int {
        guard !columns.isEmpty, try !isReadOnly(db) else { return 0 }
        let unwritten = Set(columns)
        let flags = table.columns.indices.map {
            ", " + (unwritten.contains($0) ? "\(ClockTable.version($0)) IS NULL" : "0") + " AS d\($0)"
        }.joined()
        let any = columns.map { "\(ClockTable.version($0)) IS NULL" }.joined(separator: " OR ")
        return try TriggerSQL(table: table, site: site).stampColumns(
            db,
            from: "SELECT pk\(flags) FROM \(table.clockTable.quotedName) WHERE cl % 2 = 1 AND (\(any))",
            atVersionZero: true)
    }

    /// Records as this site's writes, made now, the values of new columns `columns` that
    /// differ from the column's default: written before the engine knew the column. Returns
    /// how many rows it recorded.
    static func recordNonDefaultValues(
        _ db: Database, table: TrackedTable, columns: [Int], site: SiteID
    ) throws -> Int {
        guard !columns.isEmpty else { return 0 }
        let t = table.name.quotedSQLIdentifier
        let key = table.primaryKey.quotedSQLIdentifier
        let clock = table.clockTable.quotedName
        let defaults = try defaultValues(db, of: table)
        let isAuthority = table.authority == site
        var recorded = 0
        for index in columns {
            let column = table.columns[index].quotedSQLIdentifier
            let defaultValue = defaults[index]
            let keys = try DatabaseValue.fetchAll(
                db,
                sql: """
                    SELECT t.\(key) FROM \(t) AS t JOIN \(clock) AS c ON c.pk = t.\(key) AND c.cl % 2 = 1
                    WHERE t.\(column) IS NOT ?1 COLLATE BINARY OR typeof(t.\(column)) <> typeof(?1) ORDER BY t.\(key)
                    """,
                arguments: [defaultValue])
            let authority =
                isAuthority ? "coalesce(\(ClockTable.authority(index)), 0) + 1" : ClockTable.authority(index)
            for pk in keys {
                try db.execute(sql: TriggerSQL.tick)
                try db.execute(
                    sql: """
                        UPDATE \(clock) SET \(ClockTable.version(index)) = (SELECT hlc FROM \(EngineNames.replica) WHERE id = 1),
                        \(ClockTable.writer(index)) = 0, \(ClockTable.authority(index)) = \(authority),
                        \(ClockTable.changedAt(index)) = (SELECT seq FROM \(EngineNames.replica) WHERE id = 1),
                        seq = (SELECT seq FROM \(EngineNames.replica) WHERE id = 1) WHERE pk = ?
                        """,
                    arguments: [pk])
            }
            recorded += keys.count
        }
        return recorded
    }

    /// Applies the values peers sent for `columns` before this replica had them (kept in
    /// `vecsync_pending`), as a merge would have: a value applies to the incarnation of the
    /// row it was written in, when it wins over the local write. Returns how many applied.
    static func applyKeptValues(_ db: Database, table: TrackedTable, columns: [Int]) throws -> Int {
        guard !columns.isEmpty else { return 0 }
        var positions: [String: Int] = [:]
        for index in columns { positions[table.columns[index].lowercased()] = index }
        let kept = try Row.fetchAll(
            db,
            sql:
                "SELECT pk, col, ra, cl, authority, version, site, value FROM \(EngineNames.pending) WHERE tbl = ? ORDER BY pk, col",
            arguments: [table.name]
        ).filter { positions[($0["col"] as String).lowercased()] != nil }
        guard !kept.isEmpty else { return 0 }
        try MergingFlag.set(db, true)
        var sites = try siteNames(db)
        var ordinals: [SiteID: Int64] = [:]
        for (ordinal, site) in sites { ordinals[site] = ordinal }
        guard let state = try Row.fetchOne(db, sql: "SELECT hlc, seq FROM \(EngineNames.replica) WHERE id = 1") else {
            throw VecSyncError.notAReplica(reason: "\(EngineNames.replica) is empty")
        }
        var seq: Int64 = state["seq"]
        var hlc: Int64 = state["hlc"]
        let clockTable = table.clockTable
        var changedKeys: [DatabaseValue] = []
        var applied = 0
        for row in kept {
            guard let index = positions[(row["col"] as String).lowercased()] else { continue }
            let pk: DatabaseValue = row["pk"]
            guard let stored = try Row.fetchOne(db, sql: clockTable.selectRowSQL, arguments: [pk]) else { continue }
            var clock = clockTable.decode(stored)
            let incarnation: (Int64, Int64) = (row["ra"], row["cl"])
            guard clock.isLive, (clock.rowAuthority, clock.causalLength) == incarnation else { continue }
            let site = SiteID(row["site"] as String)
            let write: (authority: Int64, version: Int64, site: SiteID) = (row["authority"], row["version"], site)
            let local = clock.columns[index]
            var localTag: (authority: Int64, version: Int64, site: SiteID?)?
            if let version = local.version {
                localTag = (local.authority, version, local.writer.flatMap { sites[$0] })
            }
            let t = table.name.quotedSQLIdentifier
            let column = table.columns[index].quotedSQLIdentifier
            let key = table.primaryKey.quotedSQLIdentifier
            if !wins(write, over: localTag) {
                // The same tag twice (see ``wins(_:over:)``): the greater value.
                guard let localTag, let localSite = localTag.site,
                    (localTag.authority, localTag.version, localSite) == write,
                    let current = try Row.fetchOne(
                        db, sql: "SELECT \(column) FROM \(t) WHERE \(key) = ?", arguments: [pk]),
                    SyncValue(current[0] as DatabaseValue).precedes(SyncValue(row["value"] as DatabaseValue))
                else { continue }
            }
            try db.execute(
                sql: "UPDATE \(t) SET \(column) = ? WHERE \(key) = ?", arguments: [row["value"] as DatabaseValue, pk])
            let ordinal: Int64
            if let known = ordinals[site] {
                ordinal = known
            } else {
                try db.execute(sql: "INSERT INTO \(EngineNames.sites) (site) VALUES (?)", arguments: [site.rawValue])
                ordinal = db.lastInsertedRowID
                ordinals[site] = ordinal
                sites[ordinal] = site
            }
            seq += 1
            hlc = max(hlc, write.version)
            clock.columns[index] = ClockRow.Column(
                version: write.version, writer: ordinal, authority: write.authority, changedAt: seq)
            clock.sequence = seq
            try db.execute(sql: clockTable.writeRowSQL, arguments: clockTable.arguments(clock))
            changedKeys.append(pk)
            applied += 1
        }
        try db.execute(sql: "UPDATE \(EngineNames.replica) SET hlc = ?, seq = ? WHERE id = 1", arguments: [hlc, seq])
        for row in kept {
            try db.execute(
                sql: "DELETE FROM \(EngineNames.pending) WHERE tbl = ? AND pk = ? AND col = ?",
                arguments: [table.name, row["pk"] as DatabaseValue, row["col"] as String])
        }
        _ = try DerivedIndexCatalogue(db).refresh(db, changedKeys: [table.name: changedKeys])
        try MergingFlag.set(db, false)
        return applied
    }

    /// The value of each tracked column's DEFAULT (NULL without one): what a row takes in a
    /// column it was written without. A default is a constant expression of the table's own
    /// schema (`ALTER TABLE … ADD COLUMN` accepts no other), evaluated as such.
    static func defaultValues(_ db: Database, of table: TrackedTable) throws -> [DatabaseValue] {
        var expressions: [String: String] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT name, dflt_value FROM pragma_table_xinfo(?)", arguments: [table.name])
        {
            if let expression = row["dflt_value"] as String? {
                expressions[(row["name"] as String).lowercased()] = expression
            }
        }
        return try table.columns.map { name in
            guard let expression = expressions[name.lowercased()] else { return .null }
            do {
                return try DatabaseValue.fetchOne(db, sql: "SELECT \(expression)") ?? .null
            } catch {
                throw VecSyncError.schemaChanged(
                    table: table.name,
                    reason: "the default of column \(name), \(expression), cannot be evaluated: \(error)")
            }
        }
    }

    /// The columns and tables dropped or renamed here with ``alter(_:renamingColumns:_:)``:
    /// per table, old column name to new name (nil: dropped; the key "" for the table itself).
    static func retiredColumns(_ db: Database) throws -> [String: [String: String?]] {
        var retired: [String: [String: String?]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT tbl, col, renamed_to FROM \(EngineNames.retired)") {
            retired[row["tbl"] as String, default: [:]][row["col"] as String] = .some(row["renamed_to"] as String?)
        }
        return retired
    }
}
