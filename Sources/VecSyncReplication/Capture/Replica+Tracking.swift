import Foundation
import GRDB
import VecSyncCore

extension Replica {
    /// Starts replicating `table`: creates its clock table and capture triggers, and gives
    /// every row already in it a version, as if this site had just inserted it.
    ///
    /// Tracking a table that is already tracked does nothing and returns its definition.
    /// Throws ``VecSyncError/untrackableTable(table:reason:)`` for tables the engine cannot
    /// track safely: no primary key, a composite, real or untyped key, virtual tables, rows
    /// whose key is NULL or of another kind than the column's.
    ///
    /// Keys never collide. TEXT and BLOB keys holding UUIDs are the same on every replica.
    /// An integer key (`INTEGER PRIMARY KEY`, with or without `AUTOINCREMENT`, or
    /// `INT PRIMARY KEY`), which SQLite assigns alike on every device (1, 2, 3…), is local
    /// to each replica when tracked without an `authority` (``TrackedTable/hasLocalKeys``):
    /// every device inserts, each keeps the ids SQLite gave its rows, and a row from another
    /// device gets an id of this replica's (``IdentityMap``); foreign keys that refer to the
    /// table are translated with it. With an `authority`, ids are the same everywhere: that
    /// site alone inserts rows (and changes keys), the capture triggers of every other
    /// replica refuse inserts, as a catalogue scanned on one desktop is only edited on the
    /// phone. Every replica must track the table the same way (it is part of the table's
    /// fingerprint).
    ///
    /// ```swift
    /// try replica.track("photos")                          // id TEXT PRIMARY KEY: UUIDs
    /// try replica.track("users")                           // id INTEGER PRIMARY KEY: ids local to each device
    /// try replica.track("files", authority: "mac")         // id INTEGER PRIMARY KEY, the same everywhere
    /// ```
    @discardableResult
    public func track(_ table: String, authority: SiteID? = nil) throws -> TrackedTable {
        try VecSyncError.wrap {
            try writer.write { db in try Self.track(db, table: table, authority: authority, site: site) }
        }
    }

    /// ``track(_:authority:)`` inside the caller's transaction; then the table's counter
    /// columns, when it has some (``CounterColumns``), sync as counters (``CounterSQL``).
    static func track(_ db: Database, table: String, authority: SiteID?, site: SiteID) throws -> TrackedTable {
        let definition = try TrackedTable.introspect(db, table: table, authority: authority)
        if let existing = try recordedTables(db).first(where: { $0.name == definition.name }) {
            return existing
        }
        let key = definition.primaryKey.quotedSQLIdentifier
        let misfits =
            try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM \(definition.name.quotedSQLIdentifier) WHERE typeof(\(key)) <> ?",
                arguments: [definition.keyKind.storageClass]) ?? 0
        if misfits > 0 {
            throw VecSyncError.untrackableTable(
                table: definition.name,
                reason:
                    "\(misfits) rows have a NULL key or a key that is not \(definition.keyKind.storageClass.uppercased()) "
                    + "in column \(definition.primaryKey); they would match no row on another replica: give them proper keys first"
            )
        }
        let sql = TriggerSQL(table: definition, site: site)
        try db.execute(sql: definition.clockTable.createSQL)
        try sql.install(db)
        try db.execute(sql: sql.backfill)
        try record(definition, db)
        // A table dropped here earlier with `alter` and tracked again syncs again.
        try db.execute(
            sql: "DELETE FROM \(EngineNames.retired) WHERE tbl = ? COLLATE NOCASE AND col = ''",
            arguments: [definition.name])
        if try isReadOnly(db) {
            try db.execute(sql: sql.createGuardTriggers(site: site))
        }
        try installCounters(db, table: definition, site: site)
        return definition
    }

    /// Makes the declared counter columns of `table` sync as counters: tracks the table of
    /// contributions, installs the triggers that add local writes to this site's
    /// contribution, and counts the values already there as this site's.
    static func installCounters(_ db: Database, table: TrackedTable, site: SiteID) throws {
        let columns = try counterColumns(db, of: table)
        guard !columns.isEmpty else { return }
        guard table.keyKind != .blob else {
            throw VecSyncError.untrackableTable(
                table: table.name,
                reason:
                    "counter columns need an INTEGER or TEXT primary key (a contribution names its row in JSON, which holds no BLOB)"
            )
        }
        guard !table.hasLocalKeys else {
            throw VecSyncError.untrackableTable(
                table: table.name,
                reason: "counter columns need keys that name the same row on every replica: a TEXT key, or an "
                    + "INTEGER key with an authority (its ids are local to each replica without one)")
        }
        try db.execute(sql: CounterSQL.createTableSQL)
        _ = try track(db, table: CounterSQL.contributions, authority: nil, site: site)
        let sql = CounterSQL(table: table, columns: columns, site: site)
        try db.execute(sql: TriggerSQL.drop(sql.triggerNames))
        try db.execute(sql: sql.createTriggersSQL)
        try db.execute(sql: sql.seedSQL)
    }

    /// The counter columns of `table` that sync as counters here (declared and present).
    static func counterColumns(_ db: Database, of table: TrackedTable) throws -> [String] {
        let declared = try CounterColumns.declared(db, table: table.name).map { $0.lowercased() }
        return declared.isEmpty ? [] : table.columns.filter { declared.contains($0.lowercased()) }
    }

    /// Stops replicating `table`: drops its triggers and clock table. Its rows stay.
    public func untrack(_ table: String) throws {
        try VecSyncError.wrap {
            try writer.write { db in
                let definition = try Self.trackedTable(db, named: table)
                let sql = TriggerSQL(table: definition, site: site)
                try db.execute(sql: TriggerSQL.drop(sql.triggerNames + sql.guardTriggerNames))
                try db.execute(
                    sql: TriggerSQL.drop(CounterSQL(table: definition, columns: [], site: site).triggerNames))
                try db.execute(sql: definition.clockTable.dropSQL)
                try db.execute(sql: "DELETE FROM \(EngineNames.tables) WHERE name = ?", arguments: [definition.name])
                try db.execute(sql: "DELETE FROM \(EngineNames.pending) WHERE tbl = ?", arguments: [definition.name])
            }
        }
    }

    /// The tracked tables that sync, in name order: those whose live schema the engine can
    /// follow (see ``schemaStatus()`` for the others).
    public func trackedTables() throws -> [TrackedTable] {
        try VecSyncError.wrap { try writer.read { db in try Self.trackedTables(db) } }
    }

    /// The tracked tables that sync, each checked against the live schema unless
    /// `checkingSchema` is false (then every recorded table). A table whose schema changed
    /// in a way the engine cannot follow on its own (``schemaState(_:of:)``) is left out, so
    /// the others keep syncing; a table that gained columns not adopted yet is returned as
    /// recorded (its recorded columns are all still there).
    static func trackedTables(_ db: Database, checkingSchema: Bool = true) throws -> [TrackedTable] {
        let recorded = try recordedTables(db)
        guard checkingSchema else { return recorded }
        return try recorded.filter { try schemaState(db, of: $0).suspension == nil }
    }

    /// The tracked table named `table` (in any case), suspended or not; throws
    /// ``VecSyncError/tableNotTracked(table:)`` when there is none.
    static func trackedTable(_ db: Database, named table: String) throws -> TrackedTable {
        guard
            let tracked = try trackedTables(db, checkingSchema: false)
                .first(where: { $0.name.lowercased() == table.lowercased() })
        else { throw VecSyncError.tableNotTracked(table: table) }
        return tracked
    }

    /// The tracked tables as recorded in `vecsync_tables`, in name order.
    static func recordedTables(_ db: Database) throws -> [TrackedTable] {
        guard try db.tableExists(EngineNames.tables) else { return [] }
        let rows = try Row.fetchAll(
            db,
            sql:
                "SELECT name, primary_key, key_kind, columns, declared_types, authority, local_keys FROM \(EngineNames.tables) ORDER BY name"
        )
        return try rows.map { row in
            let name: String = row["name"]
            let kindName: String = row["key_kind"]
            guard let kind = TrackedTable.KeyKind(rawValue: kindName) else {
                throw VecSyncError.schemaChanged(
                    table: name, reason: "\(EngineNames.tables) names an unknown key kind '\(kindName)'")
            }
            let columns = decodeList(row["columns"])
            let types = decodeList(row["declared_types"])
            guard columns.count == types.count else {
                throw VecSyncError.schemaChanged(
                    table: name,
                    reason:
                        "\(EngineNames.tables) holds \(columns.count) columns and \(types.count) declared types (damaged)"
                )
            }
            return TrackedTable(
                name: name, primaryKey: row["primary_key"], keyKind: kind, columns: columns,
                declaredTypes: types, authority: (row["authority"] as String?).map { SiteID($0) },
                hasLocalKeys: row["local_keys"] ?? false)
        }
    }

    /// Records `table`'s definition in `vecsync_tables` (replacing the one recorded).
    static func record(_ table: TrackedTable, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO \(EngineNames.tables) (name, primary_key, key_kind, columns, declared_types, authority, local_keys)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                table.name, table.primaryKey, table.keyKind.rawValue, encodeList(table.columns),
                encodeList(table.declaredTypes), table.authority?.rawValue, table.hasLocalKeys,
            ])
    }

    /// Column lists are stored as JSON arrays.
    static func encodeList(_ list: [String]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: list) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads a list stored by ``encodeList(_:)``.
    static func decodeList(_ text: String) -> [String] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String] ?? []
    }

    /// Whether the replica refuses local writes.
    static func isReadOnly(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT read_only FROM \(EngineNames.replica) WHERE id = 1") ?? false
    }
}
