import Foundation
import GRDB
import VecSyncCore

/// Merges one change set into a replica's database, inside the caller's transaction.
///
/// How it works, in named steps (``run()``):
/// 1. ``matchTables()``: local schema changes are adopted, and each table of the change set is
///    matched with the local one — by position when the definitions are equal, by column
///    name (``mapping(from:to:retired:)``) when they differ; a table that cannot merge here
///    has its records quarantined, and the others go on;
/// 2. ``readCursor()``: a change set behind the origin's cursor was merged before;
/// 3. ``checkClocks()``: no version comes from a clock too far in the future (nothing is
///    written before these checks pass);
/// 4. ``beginMerging()``: the capture and index triggers fall silent;
///    ``translateKeys()``: the keys of tables with local keys, which travel as identities,
///    become local ids (``IdentityMap``); the values of foreign keys that refer to such
///    tables are translated with each record (``translateValues(_:table:)``);
/// 5. for each record (``merge(_:)``): read the local ``ClockRow``, decide the row's
///    incarnation (``decideIncarnation(_:local:)``), merge its columns
///    (``mergeColumns(_:table:into:)``), check what will be written (``refusal(_:columns:)``),
///    write the table row (``writeRow(_:local:outcome:)``) and the clock row
///    (``writeClock(_:table:)``). A row that cannot be merged here is quarantined
///    (``quarantine(_:reason:)``) and the others go on;
/// 6. ``deleteOrphans()``: rows whose parent row (a foreign key between tracked tables) was
///    deleted follow it, as local deletes;
/// 7. ``recordCursor()``: the clock, sequence, cursor and acknowledgement.
///
/// The caller refreshes the derived indexes of ``changedKeys`` and ends the merging state.
struct ChangeSetMerge {
    /// How an incoming record's incarnation compares with the local one.
    private enum Incarnation {
        case newer, same, older
    }

    private let db: Database
    private let changeSet: ChangeSet
    private let localSite: SiteID
    private let options: Replica.Options
    /// What the merge did so far.
    private(set) var report: MergeReport
    /// The keys whose table rows changed, per table.
    private(set) var changedKeys: [String: [DatabaseValue]] = [:]

    /// The statements of each of the change set's tables that merge here (nil for the others).
    private var statements: [TableStatements?] = []
    /// How each of the change set's tables merges here.
    private var matches: [TableMatch] = []
    /// Statements of tracked tables the change set does not name, made when an orphan is deleted.
    private var otherStatements: [String: TableStatements] = [:]
    /// Every tracked table, by lower-cased name.
    private var trackedTables: [String: TrackedTable] = [:]
    /// Foreign keys between tracked tables, by child table name; empty when SQLite does not
    /// enforce foreign keys on this connection.
    private var foreignKeys: [String: [TrackedForeignKey]] = [:]
    /// The vec0 indexes of each table: the embedding column's index and the index.
    private var vectorColumns: [String: [(column: Int, index: VectorIndex)]] = [:]
    /// Keys of live rows in the change set, by table name: parents that arrive with their children.
    private var liveKeys: [String: Set<DatabaseValue>] = [:]
    /// The change set's records with local keys (``translateKeys()``), by position; a record
    /// whose key cannot be translated keeps its own, and ``untranslatable`` says why.
    private var records: [ChangeSet.Record] = []
    /// Why a record's key has no local id here, by position.
    private var untranslatable: [Int: String] = [:]
    /// Identities to local ids, when a tracked table has local keys.
    private var identities: IdentityMap.Incoming?
    /// Foreign keys of tracked tables whose parent has local keys, by child table name.
    private var identityLinks: [String: [TrackedForeignKey]] = [:]
    /// Whether this merge deleted a row (then orphans are looked for in whole tables, and
    /// rows SQLite deleted by a cascade are recorded; otherwise only the rows it wrote can
    /// lack their parent).
    private var deletedRows = false
    /// Records that created their row here in this merge, by table name and key: a child
    /// whose parent turns out not to be here after all goes back to quarantine.
    private var createdRows: [String: [DatabaseValue: ChangeSet.Record]] = [:]
    /// The wall clock in milliseconds, for the versions of deletes this merge makes.
    private var wallMilliseconds: Int64 = 0
    private var sites: [Int64: SiteID] = [:]
    private var ordinals: [SiteID: Int64] = [:]
    /// The origin's cursor here: how far its changes were merged, and how far it merged ours.
    private var received: Int64 = 0
    private var acknowledged: Int64 = 0
    private var hasPeer = false
    /// Whether this replica refuses local writes (it then stamps no DEFAULT of its own).
    private var readOnly = false
    /// The local sequence number, advanced once per clock row written.
    private var seq: Int64 = 0
    /// The greatest version seen: the local clock moves up to it.
    private var newest: Int64 = 0

    /// A merge of `changeSet` into `db` on the replica `localSite`.
    init(_ db: Database, _ changeSet: ChangeSet, localSite: SiteID, options: Replica.Options) {
        self.db = db
        self.changeSet = changeSet
        self.localSite = localSite
        self.options = options
        report = MergeReport(origin: changeSet.origin)
        report.records = changeSet.records.count
    }

    /// Runs every step; the report and changed keys are then final.
    mutating func run() throws {
        try matchTables()
        if try readCursor() == .merged { return }
        try checkClocks()
        try beginMerging()
        try translateKeys()
        for index in recordsInMergeOrder() {
            try merge(index)
        }
        try deleteOrphans()
        try recomputeCounters()
        try recordCursor()
    }

    /// The change set's records with parents before children: by the depth of their table
    /// in the graph of foreign keys between tracked tables (``TrackedForeignKey``), in the
    /// change set's order within one depth. A change set whose tables are not related keeps
    /// its order. Returns the records' positions.
    private func recordsInMergeOrder() -> [Int] {
        let inOrder = Array(changeSet.records.indices)
        guard !foreignKeys.isEmpty, changeSet.tables.count > 1 else { return inOrder }
        let depths = TrackedForeignKey.depths(of: Array(foreignKeys.keys), links: foreignKeys)
        let tableDepth = changeSet.tables.map { table in
            trackedTables[table.name.lowercased()].flatMap { depths[$0.name] } ?? 0
        }
        guard Set(tableDepth).count > 1 else { return inOrder }
        return changeSet.records.enumerated().sorted { a, b in
            let da = tableDepth.indices.contains(a.element.table) ? tableDepth[a.element.table] : 0
            let db = tableDepth.indices.contains(b.element.table) ? tableDepth[b.element.table] : 0
            return da != db ? da < db : a.offset < b.offset
        }.map(\.offset)
    }

    // MARK: Checks before writing

    /// Step 1: adopts local schema changes (a column added to a tracked table), then matches
    /// each table of the change set with the local one. One with the same definition merges
    /// by position; one whose definition differs (columns added, dropped or renamed on one
    /// side: the change set carries the origin's whole definition from format 3 on) merges
    /// the columns both know, when key, key kind, authority and the shared columns' types
    /// agree, keeping values of columns not here yet for later (``keep(_:mapping:table:)``).
    /// A table that cannot merge here — not tracked, incompatible — has its records
    /// quarantined with the reason, and the other tables merge (one table's schema never
    /// stops the others'); a table dropped here with `Replica.alter` is ignored, as reported.
    private mutating func matchTables() throws {
        if try !MergingFlag.isSet(db) {
            _ = try Replica.adoptSchemaChanges(db, site: localSite)
        }
        var localTables: [String: TrackedTable] = [:]
        var suspended: [String: String] = [:]
        for table in try Replica.recordedTables(db) {
            if let reason = try Replica.schemaState(db, of: table).suspension {
                suspended[table.name] = reason
                continue
            }
            localTables[table.name] = table
            trackedTables[table.name.lowercased()] = table
        }
        try readConstraints()
        let retired = try Replica.retiredColumns(db)
        for remote in changeSet.tables {
            guard let local = localTables[remote.name] ?? Self.renamedTable(remote.name, retired, localTables) else {
                statements.append(nil)
                if retired[remote.name]?[""] != nil {
                    matches.append(.retired)
                    report.retiredIgnored[remote.name] = []
                } else if let reason = suspended[remote.name] {
                    matches.append(
                        .quarantine("table \(remote.name) does not sync here until its schema is fixed: \(reason)"))
                } else {
                    matches.append(.quarantine(SyncError.tableNotTracked(table: remote.name).description))
                }
                continue
            }
            if local.fingerprint == remote.fingerprint, local.columns == remote.columns,
                local.primaryKey == remote.primaryKey
            {
                statements.append(try TableStatements(db, local))
                matches.append(.merge)
                continue
            }
            switch Self.mapping(from: remote, to: local, retired: retired[local.name] ?? [:]) {
            case .success(let mapping):
                statements.append(try TableStatements(db, local, mapping: mapping))
                matches.append(.merge)
                if !mapping.retired.isEmpty { report.retiredIgnored[local.name] = mapping.retired }
            case .failure(let reason):
                statements.append(nil)
                let mismatch = SyncError.changeSetSchemaMismatch(
                    table: remote.name,
                    local:
                        "fingerprint \(local.fingerprintHex), key \(local.primaryKey), columns \(local.columns.joined(separator: ","))"
                        + (local.authority.map { ", authority \($0)" } ?? ""),
                    remote:
                        "fingerprint \(FNV1a.hex(remote.fingerprint)), key \(remote.primaryKey), columns \(remote.columns.joined(separator: ","))"
                        + (remote.definition?.authority.map { ", authority \($0)" } ?? ""))
                matches.append(.quarantine("\(mismatch.description) (\(reason))"))
            }
        }
    }

    /// The local table a table of another name became here with `Replica.alter` (`ALTER
    /// TABLE … RENAME TO`, recorded in `vecsync_retired` with an empty column), following
    /// renames of renames; nil when `name` was not renamed here.
    private static func renamedTable(
        _ name: String, _ retired: [String: [String: String?]], _ tables: [String: TrackedTable]
    ) -> TrackedTable? {
        var current = name
        for _ in 0..<8 {
            guard case .some(.some(let next)) = retired[current]?[""] else { return nil }
            if let table = tables[next] { return table }
            current = next
        }
        return nil
    }

    /// Reads the foreign keys between tracked tables (single-column, referencing the
    /// parent's key) and the vec0 indexes of the tracked tables.
    private mutating func readConstraints() throws {
        for index in try VectorIndex.registered(in: db) {
            guard let table = trackedTables[index.table.lowercased()],
                let column = table.columns.firstIndex(where: { $0.lowercased() == index.embeddingColumn.lowercased() })
            else { continue }
            vectorColumns[table.name, default: []].append((column, index))
        }
        guard try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true else { return }
        foreignKeys = try TrackedForeignKey.read(db, tables: trackedTables.values.sorted { $0.name < $1.name })
    }

    private enum CursorState { case merged, new }

    /// Step 2: reads the origin's cursor; a change set behind it was merged before.
    private mutating func readCursor() throws -> CursorState {
        // This replica's own lost changes (``Replica/recoverLostChanges(_:)``): no cursor.
        if changeSet.origin == localSite { return .new }
        let peer = try Row.fetchOne(
            db, sql: "SELECT received, acknowledged FROM \(EngineNames.peers) WHERE site = ?",
            arguments: [changeSet.origin.rawValue])
        hasPeer = peer != nil
        received = peer?["received"] ?? 0
        acknowledged = peer?["acknowledged"] ?? 0
        if hasPeer && changeSet.through <= received && changeSet.through > 0 {
            report.alreadyMerged = true
            report.ignored = changeSet.records.count
            return .merged
        }
        return .new
    }

    /// Step 3: refuses versions from a clock too far in the future, and records that refer
    /// to no table of the change set or carry the wrong number of columns.
    private mutating func checkClocks() throws {
        guard
            let state = try Row.fetchOne(
                db, sql: "SELECT hlc, seq, wall_override FROM \(EngineNames.replica) WHERE id = 1")
        else {
            throw SyncError.notAReplica(reason: "\(EngineNames.replica) is empty")
        }
        seq = state["seq"]
        newest = state["hlc"]
        let nowMilliseconds: Int64 = state["wall_override"] ?? HybridLogicalClock.wallMilliseconds()
        wallMilliseconds = nowMilliseconds
        let limit = HybridLogicalClock(
            milliseconds: nowMilliseconds + options.maximumClockDriftMilliseconds,
            counter: (1 << HybridLogicalClock.counterBits) - 1)
        for record in changeSet.records {
            guard changeSet.tables.indices.contains(record.table) else {
                throw SyncError.corruptChangeSet(reason: "a record refers to table #\(record.table)", offset: 0)
            }
            let table = changeSet.tables[record.table]
            if record.isLive && record.columns.count != table.columns.count {
                throw SyncError.corruptChangeSet(
                    reason:
                        "a record for \(table.name) has \(record.columns.count) columns, the table has \(table.columns.count)",
                    offset: 0)
            }
            for (version, site) in [(record.rowVersion, record.rowSite)]
                + record.presentColumns.map({ ($0.column.version, $0.column.site) })
            {
                if version > limit {
                    throw SyncError.clockTooFarAhead(
                        site: site, version: version, now: HybridLogicalClock(milliseconds: nowMilliseconds),
                        allowedDriftMilliseconds: options.maximumClockDriftMilliseconds)
                }
                newest = max(newest, version.rawValue)
            }
        }
    }

    /// Step 4: silences the capture and index triggers for this transaction, defers foreign
    /// keys so rows may arrive children first, and loads the site ordinals.
    private mutating func beginMerging() throws {
        try MergingFlag.set(db, true)
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
        readOnly = try Replica.isReadOnly(db)
        sites = try Replica.siteNames(db)
        for (ordinal, site) in sites { ordinals[site] = ordinal }
    }

    /// Step 4b: gives every record of a table with local keys the local id of its identity
    /// (a new identity gets a new id and an entry in the map), before any record merges, so a
    /// child translated later finds the parents of the same change set; and notes the keys of
    /// live rows (``liveKeys``). A key of the wrong form (an integer where an identity is
    /// due, an identity in a table whose ids are the same everywhere) leaves its record
    /// untranslated, to be quarantined.
    private mutating func translateKeys() throws {
        let tracked = trackedTables.values.sorted { $0.name < $1.name }
        if tracked.contains(where: \.hasLocalKeys) {
            identities = try IdentityMap.Incoming(db, localSite: localSite)
            identityLinks = try IdentityMap.links(db, tables: tracked)
        }
        records = changeSet.records
        for index in records.indices {
            let record = records[index]
            let remote = changeSet.tables[record.table]
            if let table = statements[record.table]?.table {
                switch (record.key, table.hasLocalKeys) {
                case (.identity(let site, let id), true):
                    records[index].key = .integer(try localID(site: site, id: id, in: table))
                case (.identity, false):
                    untranslatable[index] =
                        "its key \(record.key.databaseValue) names a row by identity, but \(table.name) keeps ids the same on every replica here"
                case (_, true):
                    untranslatable[index] =
                        "its key is not an identity, but \(table.name) has ids local to each replica here"
                default:
                    break
                }
            }
            if record.isLive && untranslatable[index] == nil {
                liveKeys[remote.name, default: []].insert(records[index].key.databaseValue)
            }
        }
    }

    /// The local id of the identity `site`, `id` in `table` (see ``IdentityMap/Incoming``).
    private mutating func localID(site: SiteID, id: Int64, in table: TrackedTable) throws -> Int64 {
        guard var map = identities else {
            throw SyncError.schemaChanged(table: table.name, reason: "an identity reached a table without local keys")
        }
        let origin = site == localSite ? 0 : try ordinal(site)
        let local = try map.localID(site: site, id: id, ordinal: origin, in: table)
        identities = map
        return local
    }

    /// The values of `record` (laid out as the local `table`) in foreign keys that refer to a
    /// table with local keys, translated from identities to local ids (a parent not here
    /// yet gets its id reserved, and the record waits for it as for any parent); nil, or why
    /// a value stays an identity: a column that refers to no table with local keys here.
    private mutating func translateValues(_ record: inout ChangeSet.Record, table: TrackedTable) throws -> String? {
        guard record.isLive else { return nil }
        for link in identityLinks[table.name] ?? [] where record.columns.indices.contains(link.column) {
            guard var column = record.columns[link.column], case .identity(let site, let id) = column.value
            else { continue }
            column.value = .integer(try localID(site: site, id: id, in: link.parent))
            record.columns[link.column] = column
        }
        for (index, column) in record.presentColumns {
            if case .identity = column.value {
                return
                    "its \(table.columns[index]) names a row by identity (\(column.value.databaseValue)), but here it is "
                    + "no foreign key to a table with ids local to each replica"
            }
        }
        return nil
    }

    /// The local ordinal of `site`, recorded in `vecsync_sites` when new.
    private mutating func ordinal(_ site: SiteID) throws -> Int64 {
        if let known = ordinals[site] { return known }
        try db.execute(sql: "INSERT INTO \(EngineNames.sites) (site) VALUES (?)", arguments: [site.rawValue])
        let new = db.lastInsertedRowID
        ordinals[site] = new
        sites[new] = site
        return new
    }

    // MARK: One record

    /// Step 5: merges one record: decide, merge columns, check, write the row, write the clock.
    private mutating func merge(_ position: Int) throws {
        // The record as it came (kept so in quarantine, where it is translated again when
        // retried), and with a local key.
        let original = changeSet.records[position]
        let key = records[position].key.databaseValue
        switch matches[original.table] {
        case .merge: break
        case .quarantine(let reason):
            try quarantine(original, key: key, reason: reason)
            return
        case .retired:
            report.ignored += 1
            return
        }
        guard let table = statements[original.table] else { return }
        if let reason = untranslatable[position] {
            try quarantine(original, key: key, reason: reason)
            return
        }
        // A record of a table whose columns differ here, laid out as the local table.
        var record = records[position]
        if let mapping = table.mapping {
            var columns = [ChangeSet.Column?](repeating: nil, count: table.table.columns.count)
            if original.isLive {
                for (index, column) in original.presentColumns {
                    if let target = mapping.local[index] { columns[target] = column }
                }
                record.columns = columns
            }
        }
        if let reason = try translateValues(&record, table: table.table) {
            try quarantine(original, key: key, reason: reason)
            return
        }
        let local =
            try Row.fetchOne(table.selectClock, arguments: [key]).map { table.table.clockTable.decode($0) }
            ?? ClockRow(key: key, columnCount: table.table.columns.count)
        var outcome = Outcome(clock: local)
        // The row site's ordinal is recorded even when the record loses.
        let incomingRowSite = try ordinal(record.rowSite)
        switch decideIncarnation(record, local: local) {
        case .newer:
            if lacksColumns(record, table: table), try isQuarantined(table.table, key: key) {
                // The rest of this incarnation is in quarantine: they are retried together.
                try quarantine(
                    original, key: key, reason: "an earlier change of this row is in quarantine; they merge together",
                    waitingFor: (table.table.name, key))
                return
            }
            if lacksColumns(record, table: table), record.rowSite != changeSet.origin, changeSet.origin != localSite {
                // An edit of a row another site created (its origin sends only the columns
                // it changed): the row comes with its creator's change sets, and the edit
                // waits for it here.
                try quarantine(
                    original, key: key,
                    reason:
                        "it edits a row \(record.rowSite) created, which has not arrived here yet; it merges when that row does",
                    waitingFor: (table.table.name, key))
                return
            }
            if changeSet.origin == localSite && lacksColumns(record, table: table) {
                // A lost change of this site's own to a row whose incarnation it had merged
                // from another site: that site's change comes with its own change sets, and
                // this one waits for it.
                try quarantine(
                    original, key: key, reason: "the change this row's incarnation began with has not arrived",
                    waitingFor: (table.table.name, key))
                return
            }
            try adoptIncarnation(record, table: table, rowSite: incomingRowSite, into: &outcome)
        case .same:
            if Replica.wins(
                (0, record.rowVersion.rawValue, record.rowSite),
                over: local.exists ? (0, local.rowVersion, sites[local.rowSite]) : nil)
            {
                outcome.clock.rowVersion = record.rowVersion.rawValue
                outcome.clock.rowSite = incomingRowSite
                outcome.clockChanged = true
            }
            if record.isLive { try mergeColumns(record, table: table, into: &outcome) }
        case .older:
            break
        }
        if outcome.clock.isLive {
            let written = outcome.replaceAll || !local.isLive ? record.presentColumns.map(\.index) : outcome.winners
            if let refusal = try refusal(record, table: table, columns: written) {
                try quarantine(original, key: key, reason: refusal.reason, waitingFor: refusal.parent)
                return
            }
        }
        let rowChanged: Bool
        do {
            rowChanged = try writeRow(record, table: table, local: local, outcome: outcome)
        } catch let error as DatabaseError where Self.isRefusal(error) {
            // The statement failed whole: nothing of this row was written.
            try quarantine(original, key: key, reason: error.message ?? "\(error.resultCode)")
            return
        }
        if rowChanged {
            changedKeys[table.table.name, default: []].append(key)
            if !local.exists && outcome.clock.isLive { createdRows[table.table.name, default: [:]][key] = original }
        }
        try writeClock(&outcome, record: record, table: table)
        if let mapping = table.mapping, !mapping.kept.isEmpty, original.isLive, outcome.clock.isLive,
            (outcome.clock.rowAuthority, outcome.clock.causalLength) == (original.authorityCount, original.causalLength)
        {
            var kept = original
            kept.key = record.key
            try keep(kept, mapping: mapping, table: table.table)
        }
    }

    /// Keeps the values `record` carries for columns this replica does not have yet
    /// (`vecsync_pending`): per row and column the winning write of the row's current
    /// incarnation, applied when the column is added here (``Replica/adoptSchemaChanges()``).
    private mutating func keep(_ record: ChangeSet.Record, mapping: ColumnMapping, table: TrackedTable) throws {
        for (index, name) in mapping.kept {
            guard let column = record.columns[index] else { continue }
            let stored = try Row.fetchOne(
                db,
                sql:
                    "SELECT ra, cl, authority, version, site, value FROM \(EngineNames.pending) WHERE tbl = ? AND pk = ? AND col = ?",
                arguments: [table.name, record.key.databaseValue, name])
            if let stored {
                let storedIncarnation: (Int64, Int64) = (stored["ra"], stored["cl"])
                let incoming = (record.authorityCount, record.causalLength)
                if incoming < storedIncarnation { continue }
                if incoming == storedIncarnation {
                    let write = (column.authorityCount, column.version.rawValue, column.site)
                    let kept: (Int64, Int64, SiteID) = (
                        stored["authority"], stored["version"], SiteID(stored["site"] as String)
                    )
                    let tieWon = write == kept && SyncValue(stored["value"] as DatabaseValue).precedes(column.value)
                    if !Replica.wins(write, over: kept) && !tieWon { continue }
                }
            }
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO \(EngineNames.pending) (tbl, pk, col, ra, cl, authority, version, site, value)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    table.name, record.key.databaseValue, name, record.authorityCount, record.causalLength,
                    column.authorityCount, column.version.rawValue, column.site.rawValue, column.value.databaseValue,
                ])
            if !(report.keptColumns[table.name]?.contains(name) ?? false) {
                report.keptColumns[table.name, default: []].append(name)
            }
        }
    }

    /// Runs a statement that writes a table row. After a refusal, SQLite keeps the error on
    /// the statement until it is reset, and GRDB's next reset would throw it again: the
    /// statement is reset here, so the next row can use it.
    private func execute(_ statement: Statement, _ arguments: StatementArguments) throws {
        do {
            try statement.execute(arguments: arguments)
        } catch let error as DatabaseError where Self.isRefusal(error) {
            try? statement.setArguments(arguments)
            throw error
        }
    }

    /// True for the errors of a row that this database refuses (a constraint, a trigger's
    /// RAISE, a type STRICT refuses), as opposed to a failure of the database itself.
    private static func isRefusal(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_CONSTRAINT || error.resultCode == .SQLITE_MISMATCH
    }

    /// Why `record`'s values in `columns` cannot be written here, or nil: an embedding a
    /// vec0 index of the table cannot hold, or a parent row (a foreign key between tracked
    /// tables) that has not arrived. A parent that was deleted is not a refusal: the child
    /// is written, then follows its parent (``deleteOrphans()``).
    private func refusal(_ record: ChangeSet.Record, table statements: TableStatements, columns: [Int]) throws
        -> (reason: String, parent: (table: String, key: DatabaseValue)?)?
    {
        let table = statements.table
        let written = Set(columns)
        for (column, index) in vectorColumns[table.name] ?? [] where written.contains(column) {
            guard let value = record.columns[column]?.value else { continue }
            if let reason = Self.vectorRefusal(value, index: index, column: table.columns[column]) {
                return (reason, nil)
            }
        }
        for foreignKey in foreignKeys[table.name] ?? [] where written.contains(foreignKey.column) {
            guard let value = record.columns[foreignKey.column]?.value, value != .null else { continue }
            let parent = foreignKey.parent
            let parentKey = value.databaseValue
            if liveKeys[parent.name]?.contains(parentKey) == true { continue }
            let present =
                try Bool.fetchOne(
                    db,
                    sql:
                        "SELECT 1 FROM \(parent.name.quotedSQLIdentifier) WHERE \(parent.primaryKey.quotedSQLIdentifier) = ?",
                    arguments: [parentKey]) ?? false
            if present { continue }
            let known =
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM \(parent.clockTable.quotedName) WHERE pk = ?",
                    arguments: [parentKey]) ?? false
            if known { continue }
            return (
                "its \(table.columns[foreignKey.column]) refers to a row of \(parent.name) that has not arrived here yet; "
                    + "it merges when that row does",
                (parent.name, parentKey)
            )
        }
        return nil
    }

    /// Why `value` cannot go into the vec0 index `index`, or nil.
    private static func vectorRefusal(_ value: SyncValue, index: VectorIndex, column: String) -> String? {
        switch value {
        case .null:
            return nil
        case .blob(let bytes):
            guard bytes.count == index.dimensions * 4 else {
                return
                    "its \(column) has \(bytes.count) bytes; index \(index.name) holds \(index.dimensions) float32 values "
                    + "(\(index.dimensions * 4) bytes)"
            }
            // One pass over the raw bytes: this runs for every embedding a merge writes.
            let firstNonFinite = bytes.withUnsafeBytes { raw -> (position: Int, element: Float)? in
                for position in 0..<index.dimensions {
                    let bits = raw.loadUnaligned(fromByteOffset: 4 * position, as: UInt32.self)
                    let element = Float(bitPattern: UInt32(littleEndian: bits))
                    if !element.isFinite { return (position, element) }
                }
                return nil
            }
            guard let (position, element) = firstNonFinite else { return nil }
            return "its \(column) has element \(position) = \(element); index \(index.name) holds finite values only"
        default:
            return "its \(column) is not a vector blob; index \(index.name) holds \(index.dimensions) float32 values"
        }
    }

    /// Keeps `record` aside with `reason` (see ``QuarantinedRecord``), as a one-row change
    /// set that later merges try again: when the row it waits for (`waitingFor`: a parent
    /// row, or its own row's earlier change) changes here, or, when it waits for nothing
    /// named, at every merge.
    /// `key` is the row's key here (a local id in a table with local keys, whose `record`
    /// carries an identity).
    private mutating func quarantine(
        _ record: ChangeSet.Record, key: DatabaseValue, reason: String,
        waitingFor: (table: String, key: DatabaseValue)? = nil
    ) throws {
        let table = changeSet.tables[record.table]
        var single = record
        single.table = 0
        let kept = ChangeSet(origin: changeSet.origin, since: 0, through: 0, tables: [table], records: [single])
        try Quarantine.keep(
            db, origin: changeSet.origin.rawValue.databaseValue, table: table.name.databaseValue, key: key,
            reason: reason.databaseValue, changeSet: kept.serialized().databaseValue,
            waitingFor: waitingFor?.table.databaseValue ?? .null, waitingKey: waitingFor?.key ?? .null)
        report.quarantined.append(
            QuarantinedRecord(origin: changeSet.origin, table: table.name, key: SyncValue(key), reason: reason))
    }

    /// Whether a change of `key` in `table` is in quarantine.
    private func isQuarantined(_ table: TrackedTable, key: DatabaseValue) throws -> Bool {
        try Quarantine.holds(db, table: table.name, key: key)
    }

    /// Orders the record's incarnation against the local one by (authority count, causal length).
    private func decideIncarnation(_ record: ChangeSet.Record, local: ClockRow) -> Incarnation {
        let incoming = (record.authorityCount, record.causalLength)
        let current = (local.rowAuthority, local.causalLength)
        if incoming > current { return .newer }
        return incoming == current ? .same : .older
    }

    /// Whether a live record lacks a column it would need to start an incarnation here (one
    /// its origin has, as laid out locally).
    private func lacksColumns(_ record: ChangeSet.Record, table: TableStatements) -> Bool {
        let lacking = table.mapping?.lacking ?? []
        return record.isLive
            && record.columns.indices.contains(where: { record.columns[$0] == nil && !lacking.contains($0) })
    }

    /// A newer incarnation replaces the row state, and, when live, every column.
    private mutating func adoptIncarnation(
        _ record: ChangeSet.Record, table: TableStatements, rowSite: Int64, into outcome: inout Outcome
    ) throws {
        // A new incarnation needs every column (but those its origin does not have); a record
        // that carries only some was made for a receiver that has the row already: an earlier
        // change set of its origin is missing here.
        let lacking = table.mapping?.lacking ?? []
        if lacksColumns(record, table: table) {
            throw SyncError.missingEarlierChanges(origin: changeSet.origin, since: changeSet.since, received: received)
        }
        outcome.clock.causalLength = record.causalLength
        outcome.clock.rowAuthority = record.authorityCount
        outcome.clock.rowVersion = record.rowVersion.rawValue
        outcome.clock.rowSite = rowSite
        outcome.clockChanged = true
        guard record.isLive else { return }
        outcome.replaceAll = true
        outcome.winners = outcome.clock.columns.indices.filter { !lacking.contains($0) }
        // A column the origin does not have starts the new incarnation at its DEFAULT, as
        // this site's write of version 0, which travels (as when a column is added to rows
        // that exist): any real write wins over it, and replicas whose DEFAULTs differ order
        // theirs by site. A read-only replica sends nothing, so its DEFAULT stays unversioned.
        for index in lacking {
            outcome.clock.columns[index] = readOnly ? ClockRow.Column() : ClockRow.Column(version: 0, writer: 0)
            if !readOnly { outcome.defaulted.append(index) }
        }
        for (index, column) in record.presentColumns {
            outcome.clock.columns[index].version = column.version.rawValue
            outcome.clock.columns[index].writer = try ordinal(column.site)
            outcome.clock.columns[index].authority = column.authorityCount
        }
    }

    /// Within the same incarnation, each column keeps the write that ``Replica/wins(_:over:)``;
    /// two different values under the same tag (a site that issued a version twice: a
    /// database restored from a backup) are ordered by value (``SyncValue/precedes(_:)``).
    private mutating func mergeColumns(
        _ record: ChangeSet.Record, table: TableStatements, into outcome: inout Outcome
    ) throws {
        var localRow: Row?
        for (index, column) in record.presentColumns {
            let local = outcome.clock.columns[index]
            guard let localVersion = local.version, let localSite = local.writer.flatMap({ sites[$0] }) else {
                outcome.winners.append(index)
                continue
            }
            let incoming = (column.authorityCount, column.version.rawValue, column.site)
            let current = (local.authority, localVersion, localSite)
            if Replica.wins(incoming, over: current) {
                outcome.winners.append(index)
            } else if incoming == current {
                if localRow == nil {
                    localRow = try Row.fetchOne(table.selectRow, arguments: [record.key.databaseValue])
                }
                if let localRow,
                    try comparable(SyncValue(localRow[index + 1] as DatabaseValue), column: index, of: table.table)
                        .precedes(comparable(column.value, column: index, of: table.table))
                {
                    outcome.winners.append(index)
                }
            }
        }
        for index in outcome.winners {
            guard let column = record.columns[index] else { continue }
            outcome.clock.columns[index].version = column.version.rawValue
            outcome.clock.columns[index].writer = try ordinal(column.site)
            outcome.clock.columns[index].authority = column.authorityCount
        }
        if !outcome.winners.isEmpty { outcome.clockChanged = true }
    }

    /// `value` of column `index` of `table` as every replica names it, for ordering two
    /// writes under one tag: a foreign key to a table with local keys holds a local id, which
    /// differs from replica to replica, so it is compared as its row's identity.
    private func comparable(_ value: SyncValue, column index: Int, of table: TrackedTable) throws -> SyncValue {
        guard case .integer(let id) = value,
            let link = identityLinks[table.name]?.first(where: { $0.column == index })
        else { return value }
        return try IdentityMap.Outgoing(db, localSite: localSite, sites: sites).identity(table: link.parent.name, id: id)
    }

    /// Writes the table row the outcome calls for; true when the row changed.
    private mutating func writeRow(
        _ record: ChangeSet.Record, table: TableStatements, local: ClockRow, outcome: Outcome
    ) throws -> Bool {
        let key = record.key.databaseValue
        let wasLive = local.isLive
        let isLive = outcome.clock.isLive
        if isLive && (outcome.replaceAll || !wasLive) {
            try execute(
                table.upsertRow,
                StatementArguments(
                    [key]
                        + record.columns.indices.map {
                            table.lackingValues[$0] ?? record.columns[$0]?.value.databaseValue ?? .null
                        }))
            if wasLive { report.updated += 1 } else { report.inserted += 1 }
            return true
        }
        if isLive && wasLive {
            // Same incarnation: compare with the local values to count conflicts (see
            // MergeReport.conflicts) and to skip writes of equal values (whose versions are
            // still recorded in the clock row).
            // How far the origin had merged this replica's changes when it made the change
            // set: a local value written or merged here at or before that sequence number
            // was seen by the origin, so its write to the same column is not concurrent.
            let originAcknowledged = changeSet.acknowledgements[localSite] ?? 0
            let current = try Row.fetchOne(table.selectRow, arguments: [key])
            var changed: [Int] = []
            for (index, incoming) in record.presentColumns {
                let localValue = current.map { SyncValue($0[1 + index] as DatabaseValue) }
                let differs = localValue.map { !$0.isIdentical(to: incoming.value) } ?? true
                if differs && outcome.winners.contains(index) { changed.append(index) }
                let localColumn = local.columns[index]
                if differs, localValue != nil, let localWriter = localColumn.writer.flatMap({ sites[$0] }),
                    localWriter != incoming.site, (localColumn.changedAt ?? .max) > originAcknowledged
                {
                    report.conflicts += 1
                }
            }
            guard !changed.isEmpty else { return false }
            let statement = try table.update(db, columns: changed)
            try execute(
                statement, StatementArguments(changed.map { record.columns[$0]?.value.databaseValue ?? .null } + [key]))
            report.updated += 1
            return true
        }
        if !isLive && wasLive {
            deletedRows = true
            try execute(table.deleteRow, [key])
            report.deleted += 1
            return true
        }
        return false
    }

    /// Writes the clock row when it changed, as the next local change: the columns this
    /// merge set change here now, so they travel on to third peers.
    private mutating func writeClock(_ outcome: inout Outcome, record: ChangeSet.Record, table: TableStatements) throws
    {
        guard outcome.clockChanged else {
            report.ignored += 1
            return
        }
        seq += 1
        outcome.clock.sequence = seq
        for index in outcome.winners + outcome.defaulted { outcome.clock.columns[index].changedAt = seq }
        try table.writeClock.execute(arguments: table.table.clockTable.arguments(outcome.clock))
        report.applied += 1
        report.accepted.append(
            MergeReport.AcceptedChange(
                table: table.table.name, key: record.key, isLive: outcome.clock.isLive,
                columns: outcome.winners.sorted().compactMap {
                    record.columns[$0] == nil ? nil : table.table.columns[$0]
                }))
    }

    // MARK: After the records

    /// Step 6: a row whose foreign key refers to a deleted row of a tracked table is deleted
    /// too, as a local delete that syncs (so every replica ends without it); a row SQLite
    /// deleted by an `ON DELETE CASCADE` during the merge gets its delete recorded the same
    /// way. Repeats while deletes make new orphans (grandchildren).
    private mutating func deleteOrphans() throws {
        guard !foreignKeys.isEmpty else { return }
        for _ in 0..<16 {
            var deleted = 0
            for (childName, links) in foreignKeys.sorted(by: { $0.key < $1.key }) {
                guard let child = trackedTables[childName.lowercased()] else { continue }
                let touched = changedKeys[child.name] != nil || links.contains { changedKeys[$0.parent.name] != nil }
                guard touched else { continue }
                let t = child.name.quotedSQLIdentifier
                let key = child.primaryKey.quotedSQLIdentifier
                for link in links {
                    let column = child.columns[link.column].quotedSQLIdentifier
                    let orphanSQL = """
                        SELECT c.\(key) AS child, c.\(column) AS parent FROM \(t) AS c WHERE c.\(column) IS NOT NULL AND NOT EXISTS
                        (SELECT 1 FROM \(link.parent.name.quotedSQLIdentifier) AS p WHERE p.\(link.parent.primaryKey.quotedSQLIdentifier) = c.\(column))
                        """
                    var orphans: [Row] = []
                    if deletedRows {
                        orphans = try Row.fetchAll(db, sql: orphanSQL)
                    } else {
                        // Nothing was deleted: only a row this merge wrote can lack its parent.
                        let statement = try db.cachedStatement(sql: orphanSQL + " AND c.\(key) = ?")
                        for childKey in changedKeys[child.name] ?? [] {
                            orphans += try Row.fetchAll(statement, arguments: [childKey])
                        }
                    }
                    for orphan in orphans {
                        let childKey: DatabaseValue = orphan["child"]
                        let parentKnown =
                            try Bool.fetchOne(
                                db, sql: "SELECT 1 FROM \(link.parent.clockTable.quotedName) WHERE pk = ?",
                                arguments: [orphan["parent"] as DatabaseValue]) ?? false
                        if !parentKnown, let record = createdRows[child.name]?[childKey] {
                            // Its parent arrived in this change set but was not merged
                            // (quarantined): the child waits with it instead.
                            try unmerge(
                                child, key: childKey, record: record,
                                parent: (link.parent.name, orphan["parent"] as DatabaseValue))
                            deleted += 1
                            continue
                        }
                        try db.execute(sql: "DELETE FROM \(t) WHERE \(key) = ?", arguments: [childKey])
                        deleted += try recordLocalDelete(child, key: childKey) ? 1 : 0
                    }
                }
                guard deletedRows else { continue }
                let cascaded = try DatabaseValue.fetchAll(
                    db,
                    sql: """
                        SELECT c.pk FROM \(child.clockTable.quotedName) AS c WHERE c.cl % 2 = 1
                        AND NOT EXISTS (SELECT 1 FROM \(t) AS t WHERE t.\(key) = c.pk)
                        """)
                for orphan in cascaded {
                    deleted += try recordLocalDelete(child, key: orphan) ? 1 : 0
                }
            }
            if deleted == 0 { return }
        }
    }

    /// Step 6b: sets the counter columns (``CounterSQL``) of every row whose contributions or
    /// values this merge changed to the sum of the contributions.
    private mutating func recomputeCounters() throws {
        var rows: [String: [DatabaseValue]] = [:]
        if let contributions = changedKeys[CounterSQL.contributions] {
            // The row names its table and key in its id (a JSON array), which outlives the row.
            // An id that is not such an array names no row.
            let statement = try db.cachedStatement(
                sql: """
                    SELECT json_extract(?1, '$[0]') AS tbl, json_extract(?1, '$[1]') AS pk
                    WHERE json_valid(?1) AND json_type(?1) = 'array'
                    """)
            for id in contributions {
                if let row = try Row.fetchOne(statement, arguments: [id]), let table: String = row["tbl"] {
                    rows[table, default: []].append(row["pk"])
                }
            }
        }
        for (name, keys) in changedKeys where name != CounterSQL.contributions { rows[name, default: []] += keys }
        for (name, keys) in rows.sorted(by: { $0.key < $1.key }) {
            guard let table = trackedTables[name.lowercased()] else { continue }
            let columns = try Replica.counterColumns(db, of: table)
            guard !columns.isEmpty else { continue }
            var seen = Set<DatabaseValue>()
            for key in keys where seen.insert(key).inserted {
                try CounterSQL.recompute(db, table: table, columns: columns, key: key)
                changedKeys[table.name, default: []].append(key)
            }
        }
    }

    /// Takes back a row this merge created (its row and clock row) and quarantines its record.
    private mutating func unmerge(
        _ table: TrackedTable, key: DatabaseValue, record: ChangeSet.Record, parent: (table: String, key: DatabaseValue)
    ) throws {
        try db.execute(
            sql: "DELETE FROM \(table.name.quotedSQLIdentifier) WHERE \(table.primaryKey.quotedSQLIdentifier) = ?",
            arguments: [key])
        try db.execute(sql: "DELETE FROM \(table.clockTable.quotedName) WHERE pk = ?", arguments: [key])
        createdRows[table.name]?[key] = nil
        deletedRows = true
        report.inserted -= 1
        report.applied -= 1
        try quarantine(
            record, key: key, reason: "its parent row arrived with it but was not merged here; it waits for that row",
            waitingFor: parent)
    }

    /// Records the delete of `key` in `table` as this site's own, made now: the next causal
    /// length, a new version, the next sequence number. False when the row was not live.
    private mutating func recordLocalDelete(_ table: TrackedTable, key: DatabaseValue) throws -> Bool {
        let clockTable = table.clockTable
        guard let row = try Row.fetchOne(db, sql: clockTable.selectRowSQL, arguments: [key]) else { return false }
        var clock = clockTable.decode(row)
        guard clock.isLive else { return false }
        newest = max(newest + 1, wallMilliseconds << HybridLogicalClock.counterBits)
        seq += 1
        clock.causalLength += 1
        clock.rowVersion = newest
        clock.rowSite = 0
        if table.authority == localSite { clock.rowAuthority += 1 }
        clock.sequence = seq
        try db.execute(sql: clockTable.writeRowSQL, arguments: clockTable.arguments(clock))
        deletedRows = true
        changedKeys[table.name, default: []].append(key)
        report.orphansDeleted[table.name, default: 0] += 1
        report.deleted += 1
        return true
    }

    /// Step 7: the clock, sequence, cursor and acknowledgement, in the same transaction.
    private mutating func recordCursor() throws {
        try db.execute(
            sql: "UPDATE \(EngineNames.replica) SET hlc = max(hlc, ?), seq = ? WHERE id = 1",
            arguments: [newest, seq])
        if changeSet.origin == localSite { return }
        report.cursorAdvanced = changeSet.since <= received
        let newReceived = report.cursorAdvanced ? max(received, changeSet.through) : received
        // An acknowledgement counts only from a change set merged in sequence: then every
        // earlier change set of the origin — made before it had our tombstones — is behind
        // the cursor and will be skipped if it turns up late, so compaction is safe.
        let newAcknowledged =
            report.cursorAdvanced
            ? max(acknowledged, changeSet.acknowledgements[localSite] ?? 0) : acknowledged
        try db.execute(
            sql: """
                INSERT INTO \(EngineNames.peers) (site, received, acknowledged) VALUES (?, ?, ?)
                ON CONFLICT(site) DO UPDATE SET received = excluded.received, acknowledged = excluded.acknowledged
                """,
            arguments: [changeSet.origin.rawValue, newReceived, newAcknowledged])
    }
}
