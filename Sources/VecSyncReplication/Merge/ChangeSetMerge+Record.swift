import Foundation
import GRDB
import VecSyncCore

// Step 5 of a merge (ChangeSetMerge.swift lists the steps): one record, from its clock
// row to the row and clock it writes, or to quarantine.

extension ChangeSetMerge {
    /// Step 5: merges one record: decide, merge columns, check, write the row, write the clock.
    mutating func merge(_ position: Int) throws {
        // The record as it came (kept so in quarantine, where it is translated again when
        // retried), and with a local key.
        let original = changeSet.records[position]
        let key = keys.records[position].key.databaseValue
        let table: TableStatements
        switch tables.matches[original.table] {
        case .merge(let statements):
            table = statements
        case .quarantine(let reason):
            try quarantine(original, key: key, reason: reason)
            return
        case .retired:
            state.count(.ignored)
            return
        }
        if let reason = keys.untranslatable[position] {
            try quarantine(original, key: key, reason: reason)
            return
        }
        // A record of a table whose columns differ here, laid out as the local table.
        var record = keys.records[position]
        if let mapping = table.mapping {
            var columns = [ChangeSet.Column?](repeating: nil, count: table.table.columns.count)
            if original.isLive {
                for (index, column) in original.presentColumns {
                    if let target = mapping.local[index] { columns[target] = column }
                }
                record.columns = columns
            }
        }
        if let reason = try keys.translateValues(&record, table: table.table, state: &state, db) {
            try quarantine(original, key: key, reason: reason)
            return
        }
        let local =
            try Row.fetchOne(table.selectClock, arguments: [key]).map { table.table.clockTable.decode($0) }
            ?? ClockRow(key: key, columnCount: table.table.columns.count)
        var outcome = Outcome(clock: local)
        // The row site's ordinal is recorded even when the record loses.
        let incomingRowSite = try state.ordinal(record.rowSite, db)
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
                over: local.exists ? (0, local.rowVersion, state.site(local.rowSite)) : nil)
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
            state.rowChanged(table.table.name, key)
            if !local.exists && outcome.clock.isLive { state.rowCreated(table.table.name, key, by: original) }
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
    mutating func keep(_ record: ChangeSet.Record, mapping: ColumnMapping, table: TrackedTable) throws {
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
            state.count(.kept(table: table.name, column: name))
        }
    }

    /// Runs a statement that writes a table row. After a refusal, SQLite keeps the error on
    /// the statement until it is reset, and GRDB's next reset would throw it again: the
    /// statement is reset here, so the next row can use it.
    func execute(_ statement: Statement, _ arguments: StatementArguments) throws {
        do {
            try statement.execute(arguments: arguments)
        } catch let error as DatabaseError where Self.isRefusal(error) {
            try? statement.setArguments(arguments)
            throw error
        }
    }

    /// True for the errors of a row that this database refuses (a constraint, a trigger's
    /// RAISE, a type STRICT refuses), as opposed to a failure of the database itself.
    static func isRefusal(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_CONSTRAINT || error.resultCode == .SQLITE_MISMATCH
    }

    /// Why `record`'s values in `columns` cannot be written here, or nil: an embedding a
    /// vec0 index of the table cannot hold, or a parent row (a foreign key between tracked
    /// tables) that has not arrived. A parent that was deleted is not a refusal: the child
    /// is written, then follows its parent (``deleteOrphans()``).
    func refusal(_ record: ChangeSet.Record, table statements: TableStatements, columns: [Int]) throws
        -> (reason: String, parent: (table: String, key: DatabaseValue)?)?
    {
        let table = statements.table
        let written = Set(columns)
        for (column, index) in tables.vectorColumns[table.name] ?? [] where written.contains(column) {
            guard let value = record.columns[column]?.value else { continue }
            if let reason = Self.vectorRefusal(value, index: index, column: table.columns[column]) {
                return (reason, nil)
            }
        }
        for foreignKey in tables.foreignKeys[table.name] ?? [] where written.contains(foreignKey.column) {
            guard let value = record.columns[foreignKey.column]?.value, value != .null else { continue }
            let parent = foreignKey.parent
            let parentKey = value.databaseValue
            if keys.liveKeys[parent.name]?.contains(parentKey) == true { continue }
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
    static func vectorRefusal(_ value: SyncValue, index: VectorIndex, column: String) -> String? {
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
    mutating func quarantine(
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
        state.count(
            .quarantined(QuarantinedRecord(origin: changeSet.origin, table: table.name, key: SyncValue(key), reason: reason)))
    }

    /// Whether a change of `key` in `table` is in quarantine.
    func isQuarantined(_ table: TrackedTable, key: DatabaseValue) throws -> Bool {
        try Quarantine.holds(db, table: table.name, key: key)
    }

    /// Orders the record's incarnation against the local one by (authority count, causal length).
    func decideIncarnation(_ record: ChangeSet.Record, local: ClockRow) -> Incarnation {
        let incoming = (record.authorityCount, record.causalLength)
        let current = (local.rowAuthority, local.causalLength)
        if incoming > current { return .newer }
        return incoming == current ? .same : .older
    }

    /// Whether a live record lacks a column it would need to start an incarnation here (one
    /// its origin has, as laid out locally).
    func lacksColumns(_ record: ChangeSet.Record, table: TableStatements) -> Bool {
        let lacking = table.mapping?.lacking ?? []
        return record.isLive
            && record.columns.indices.contains(where: { record.columns[$0] == nil && !lacking.contains($0) })
    }

    /// A newer incarnation replaces the row state, and, when live, every column.
    mutating func adoptIncarnation(
        _ record: ChangeSet.Record, table: TableStatements, rowSite: Int64, into outcome: inout Outcome
    ) throws {
        // A new incarnation needs every column (but those its origin does not have); a record
        // that carries only some was made for a receiver that has the row already: an earlier
        // change set of its origin is missing here.
        let lacking = table.mapping?.lacking ?? []
        if lacksColumns(record, table: table) {
            throw VecSyncError.missingEarlierChanges(
                origin: changeSet.origin, since: changeSet.since, received: peer.received)
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
            outcome.clock.columns[index].writer = try state.ordinal(column.site, db)
            outcome.clock.columns[index].authority = column.authorityCount
        }
    }

    /// Within the same incarnation, each column keeps the write that ``Replica/wins(_:over:)``;
    /// two different values under the same tag (a site that issued a version twice: a
    /// database restored from a backup) are ordered by value (``SyncValue/precedes(_:)``).
    mutating func mergeColumns(
        _ record: ChangeSet.Record, table: TableStatements, into outcome: inout Outcome
    ) throws {
        var localRow: Row?
        for (index, column) in record.presentColumns {
            let local = outcome.clock.columns[index]
            guard let localVersion = local.version, let localSite = state.site(local.writer) else {
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
            outcome.clock.columns[index].writer = try state.ordinal(column.site, db)
            outcome.clock.columns[index].authority = column.authorityCount
        }
        if !outcome.winners.isEmpty { outcome.clockChanged = true }
    }

    /// `value` of column `index` of `table` as every replica names it (see
    /// ``KeyTranslation/comparable(_:column:of:sites:_:)``).
    func comparable(_ value: SyncValue, column index: Int, of table: TrackedTable) throws -> SyncValue {
        try keys.comparable(value, column: index, of: table, sites: state.sites, db)
    }

    /// Writes the table row the outcome calls for; true when the row changed.
    mutating func writeRow(
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
            state.count(wasLive ? .updated : .inserted)
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
                if differs, localValue != nil, let localWriter = state.site(localColumn.writer),
                    localWriter != incoming.site, (localColumn.changedAt ?? .max) > originAcknowledged
                {
                    state.count(.conflict)
                }
            }
            guard !changed.isEmpty else { return false }
            let statement = try table.update(db, columns: changed)
            try execute(
                statement, StatementArguments(changed.map { record.columns[$0]?.value.databaseValue ?? .null } + [key]))
            state.count(.updated)
            return true
        }
        if !isLive && wasLive {
            state.rowDeleted()
            try execute(table.deleteRow, [key])
            state.count(.deleted)
            return true
        }
        return false
    }

    /// Writes the clock row when it changed, as the next local change: the columns this
    /// merge set change here now, so they travel on to third peers.
    mutating func writeClock(_ outcome: inout Outcome, record: ChangeSet.Record, table: TableStatements) throws
    {
        guard outcome.clockChanged else {
            state.count(.ignored)
            return
        }
        let seq = state.nextSequence()
        outcome.clock.sequence = seq
        for index in outcome.winners + outcome.defaulted { outcome.clock.columns[index].changedAt = seq }
        try table.writeClock.execute(arguments: table.table.clockTable.arguments(outcome.clock))
        state.count(
            .applied(
                MergeReport.AcceptedChange(
                    table: table.table.name, key: record.key, isLive: outcome.clock.isLive,
                    columns: outcome.winners.sorted().compactMap {
                        record.columns[$0] == nil ? nil : table.table.columns[$0]
                    })))
    }
}
