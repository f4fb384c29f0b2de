import Foundation
import GRDB
import VecSyncCore

/// Merges one change set into a replica's database, inside the caller's transaction.
///
/// How it works, in named steps (``run()``):
/// 1. ``matchTables()``: every table of the change set is tracked here with the same definition;
/// 2. ``readCursor()``: a change set behind the origin's cursor was merged before;
/// 3. ``checkClocks()``: no version comes from a clock too far in the future (nothing is
///    written before these checks pass);
/// 4. ``beginMerging()``: the capture and index triggers fall silent;
/// 5. for each record (``merge(_:)``): read the local ``ClockRow``, decide the row's
///    incarnation (``decideIncarnation(_:local:)``), merge its columns
///    (``mergeColumns(_:into:)``), write the table row (``writeRow(_:local:outcome:)``) and
///    the clock row (``writeClock(_:)``);
/// 6. ``recordCursor()``: the clock, sequence, cursor and acknowledgement.
///
/// The caller refreshes the derived indexes of ``changedKeys`` and ends the merging state.
struct ChangeSetMerge {
    /// The SQL a merge runs against one table, prepared once per merge.
    private struct TableStatements {
        let table: TrackedTable
        let selectClock: Statement
        let writeClock: Statement
        let selectRow: Statement
        let upsertRow: Statement
        let deleteRow: Statement

        init(_ db: Database, _ table: TrackedTable) throws {
            self.table = table
            let t = table.name.quotedSQLIdentifier
            let key = table.primaryKey.quotedSQLIdentifier
            let columns = table.columns.map(\.quotedSQLIdentifier)
            selectClock = try db.cachedStatement(sql: table.clockTable.selectRowSQL)
            writeClock = try db.cachedStatement(sql: table.clockTable.writeRowSQL)
            selectRow = try db.cachedStatement(
                sql: "SELECT \(([key] + columns).joined(separator: ", ")) FROM \(t) WHERE \(key) = ?")
            let rowPlaceholders = Array(repeating: "?", count: 1 + columns.count).joined(separator: ", ")
            let conflict = columns.isEmpty
                ? "DO NOTHING" : "DO UPDATE SET " + columns.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            upsertRow = try db.cachedStatement(
                sql: "INSERT INTO \(t) (\(([key] + columns).joined(separator: ", "))) VALUES (\(rowPlaceholders)) ON CONFLICT(\(key)) \(conflict)")
            deleteRow = try db.cachedStatement(sql: "DELETE FROM \(t) WHERE \(key) = ?")
        }

        /// `UPDATE t SET a = ?, b = ? WHERE key = ?` for the given column indexes.
        func update(_ db: Database, columns indexes: [Int]) throws -> Statement {
            let sets = indexes.map { "\(table.columns[$0].quotedSQLIdentifier) = ?" }.joined(separator: ", ")
            return try db.cachedStatement(
                sql: "UPDATE \(table.name.quotedSQLIdentifier) SET \(sets) WHERE \(table.primaryKey.quotedSQLIdentifier) = ?")
        }
    }

    /// What the merge decided for one record.
    private struct Outcome {
        /// The clock row to keep.
        var clock: ClockRow
        /// Whether ``clock`` differs from the stored one.
        var clockChanged = false
        /// Whether the record starts a new incarnation: every column takes its value.
        var replaceAll = false
        /// The columns whose incoming write won.
        var winners: [Int] = []
    }

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

    private var statements: [TableStatements] = []
    private var sites: [Int64: SiteID] = [:]
    private var ordinals: [SiteID: Int64] = [:]
    /// The origin's cursor here: how far its changes were merged, and how far it merged ours.
    private var received: Int64 = 0
    private var acknowledged: Int64 = 0
    private var hasPeer = false
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
        for record in changeSet.records {
            try merge(record)
        }
        try recordCursor()
    }

    // MARK: Checks before writing

    /// Step 1: every table must be tracked here with the same definition.
    private mutating func matchTables() throws {
        var localTables: [String: TrackedTable] = [:]
        for table in try Replica.trackedTables(db) { localTables[table.name] = table }
        for remote in changeSet.tables {
            guard let local = localTables[remote.name] else { throw SyncError.tableNotTracked(table: remote.name) }
            guard local.fingerprint == remote.fingerprint, local.columns == remote.columns,
                  local.primaryKey == remote.primaryKey
            else {
                throw SyncError.changeSetSchemaMismatch(
                    table: remote.name,
                    local: "fingerprint \(local.fingerprintHex), key \(local.primaryKey), columns \(local.columns.joined(separator: ","))"
                        + (local.authority.map { ", authority \($0)" } ?? ""),
                    remote: "fingerprint \(FNV1a.hex(remote.fingerprint)), key \(remote.primaryKey), columns \(remote.columns.joined(separator: ","))")
            }
            statements.append(try TableStatements(db, local))
        }
    }

    private enum CursorState { case merged, new }

    /// Step 2: reads the origin's cursor; a change set behind it was merged before.
    private mutating func readCursor() throws -> CursorState {
        let peer = try Row.fetchOne(db, sql: "SELECT received, acknowledged FROM vecsync_peers WHERE site = ?",
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
        guard let state = try Row.fetchOne(db, sql: "SELECT hlc, seq, wall_override FROM vecsync_replica WHERE id = 1") else {
            throw SyncError.notAReplica(reason: "vecsync_replica is empty")
        }
        seq = state["seq"]
        newest = state["hlc"]
        let nowMilliseconds: Int64 = state["wall_override"] ?? HybridLogicalClock.wallMilliseconds()
        let limit = HybridLogicalClock(milliseconds: nowMilliseconds + options.maximumClockDriftMilliseconds,
                                       counter: (1 << HybridLogicalClock.counterBits) - 1)
        for record in changeSet.records {
            guard changeSet.tables.indices.contains(record.table) else {
                throw SyncError.corruptChangeSet(reason: "a record refers to table #\(record.table)", offset: 0)
            }
            let table = changeSet.tables[record.table]
            if record.isLive && record.columns.count != table.columns.count {
                throw SyncError.corruptChangeSet(
                    reason: "a record for \(table.name) has \(record.columns.count) columns, the table has \(table.columns.count)",
                    offset: 0)
            }
            for (version, site) in [(record.rowVersion, record.rowSite)] + record.presentColumns.map({ ($0.column.version, $0.column.site) }) {
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
        try Replica.setMerging(db, true)
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
        sites = try Replica.siteNames(db)
        for (ordinal, site) in sites { ordinals[site] = ordinal }
    }

    /// The local ordinal of `site`, recorded in `vecsync_sites` when new.
    private mutating func ordinal(_ site: SiteID) throws -> Int64 {
        if let known = ordinals[site] { return known }
        try db.execute(sql: "INSERT INTO vecsync_sites (site) VALUES (?)", arguments: [site.rawValue])
        let new = db.lastInsertedRowID
        ordinals[site] = new
        sites[new] = site
        return new
    }

    // MARK: One record

    /// Step 5: merges one record: decide, merge columns, write the row, write the clock.
    private mutating func merge(_ record: ChangeSet.Record) throws {
        let table = statements[record.table]
        let key = record.key.databaseValue
        let local = try Row.fetchOne(table.selectClock, arguments: [key]).map { table.table.clockTable.decode($0) }
            ?? ClockRow(key: key, columnCount: table.table.columns.count)
        var outcome = Outcome(clock: local)
        // The row site's ordinal is recorded even when the record loses.
        let incomingRowSite = try ordinal(record.rowSite)
        switch decideIncarnation(record, local: local) {
        case .newer:
            try adoptIncarnation(record, rowSite: incomingRowSite, into: &outcome)
        case .same:
            if Replica.wins((0, record.rowVersion.rawValue, record.rowSite),
                            over: local.exists ? (0, local.rowVersion, sites[local.rowSite]) : nil) {
                outcome.clock.rowVersion = record.rowVersion.rawValue
                outcome.clock.rowSite = incomingRowSite
                outcome.clockChanged = true
            }
            if record.isLive { try mergeColumns(record, into: &outcome) }
        case .older:
            break
        }
        if try writeRow(record, local: local, outcome: outcome) {
            changedKeys[table.table.name, default: []].append(key)
        }
        try writeClock(&outcome, table: record.table)
    }

    /// Orders the record's incarnation against the local one by (authority count, causal length).
    private func decideIncarnation(_ record: ChangeSet.Record, local: ClockRow) -> Incarnation {
        let incoming = (record.authorityCount, record.causalLength)
        let current = (local.rowAuthority, local.causalLength)
        if incoming > current { return .newer }
        return incoming == current ? .same : .older
    }

    /// A newer incarnation replaces the row state, and, when live, every column.
    private mutating func adoptIncarnation(_ record: ChangeSet.Record, rowSite: Int64, into outcome: inout Outcome) throws {
        // A new incarnation needs every column; a record that carries only some was made
        // for a receiver that has the row already: an earlier change set of its origin is
        // missing here.
        if record.isLive && !record.isComplete {
            throw SyncError.missingEarlierChanges(origin: changeSet.origin, since: changeSet.since, received: received)
        }
        outcome.clock.causalLength = record.causalLength
        outcome.clock.rowAuthority = record.authorityCount
        outcome.clock.rowVersion = record.rowVersion.rawValue
        outcome.clock.rowSite = rowSite
        outcome.clockChanged = true
        guard record.isLive else { return }
        outcome.replaceAll = true
        outcome.winners = Array(outcome.clock.columns.indices)
        for (index, column) in record.presentColumns {
            outcome.clock.columns[index].version = column.version.rawValue
            outcome.clock.columns[index].writer = try ordinal(column.site)
            outcome.clock.columns[index].authority = column.authorityCount
        }
    }

    /// Within the same incarnation, each column keeps the write that ``Replica/wins(_:over:)``.
    private mutating func mergeColumns(_ record: ChangeSet.Record, into outcome: inout Outcome) throws {
        for (index, column) in record.presentColumns {
            let local = outcome.clock.columns[index]
            guard let localVersion = local.version, let localSite = local.writer.flatMap({ sites[$0] }) else {
                outcome.winners.append(index)
                continue
            }
            if Replica.wins((column.authorityCount, column.version.rawValue, column.site),
                            over: (local.authority, localVersion, localSite)) {
                outcome.winners.append(index)
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

    /// Writes the table row the outcome calls for; true when the row changed.
    private mutating func writeRow(_ record: ChangeSet.Record, local: ClockRow, outcome: Outcome) throws -> Bool {
        let table = statements[record.table]
        let key = record.key.databaseValue
        let wasLive = local.isLive
        let isLive = outcome.clock.isLive
        if isLive && (outcome.replaceAll || !wasLive) {
            try table.upsertRow.execute(
                arguments: StatementArguments([key] + record.columns.map { $0?.value.databaseValue ?? .null }))
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
                   localWriter != incoming.site, (localColumn.changedAt ?? .max) > originAcknowledged {
                    report.conflicts += 1
                }
            }
            guard !changed.isEmpty else { return false }
            let statement = try table.update(db, columns: changed)
            try statement.execute(
                arguments: StatementArguments(changed.map { record.columns[$0]?.value.databaseValue ?? .null } + [key]))
            report.updated += 1
            return true
        }
        if !isLive && wasLive {
            try table.deleteRow.execute(arguments: [key])
            report.deleted += 1
            return true
        }
        return false
    }

    /// Writes the clock row when it changed, as the next local change: the columns this
    /// merge set change here now, so they travel on to third peers.
    private mutating func writeClock(_ outcome: inout Outcome, table: Int) throws {
        guard outcome.clockChanged else {
            report.ignored += 1
            return
        }
        seq += 1
        outcome.clock.sequence = seq
        for index in outcome.winners { outcome.clock.columns[index].changedAt = seq }
        let statements = statements[table]
        try statements.writeClock.execute(arguments: statements.table.clockTable.arguments(outcome.clock))
        report.applied += 1
    }

    // MARK: After the records

    /// Step 6: the clock, sequence, cursor and acknowledgement, in the same transaction.
    private mutating func recordCursor() throws {
        try db.execute(sql: "UPDATE vecsync_replica SET hlc = max(hlc, ?), seq = ? WHERE id = 1",
                       arguments: [newest, seq])
        report.cursorAdvanced = changeSet.since <= received
        let newReceived = report.cursorAdvanced ? max(received, changeSet.through) : received
        // An acknowledgement counts only from a change set merged in sequence: then every
        // earlier change set of the origin — made before it had our tombstones — is behind
        // the cursor and will be skipped if it turns up late, so compaction is safe.
        let newAcknowledged = report.cursorAdvanced
            ? max(acknowledged, changeSet.acknowledgements[localSite] ?? 0) : acknowledged
        try db.execute(
            sql: """
                INSERT INTO vecsync_peers (site, received, acknowledged) VALUES (?, ?, ?)
                ON CONFLICT(site) DO UPDATE SET received = excluded.received, acknowledged = excluded.acknowledged
                """,
            arguments: [changeSet.origin.rawValue, newReceived, newAcknowledged])
    }
}
