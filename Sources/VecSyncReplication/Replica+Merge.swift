import Foundation
import GRDB
import VecSyncCore

extension Replica {
    /// Merges a change set from another replica, in one transaction together with the
    /// cursor of its origin, and refreshes the derived indexes of the rows it changed.
    ///
    /// Each column keeps the write with the greatest (version, site id); a row's existence
    /// follows its causal length: a delete supersedes the incarnation it saw, a re-insert
    /// the delete. In a table with an authoritative site, its writes come first: both
    /// orders start with counts that only the authority raises (see
    /// ``setAuthority(_:for:)``).
    /// Merging is idempotent, commutative and associative: change sets may arrive twice,
    /// late or out of order. If anything fails, nothing is applied and the cursor stays.
    ///
    /// ```swift
    /// let report = try replica.merge(incoming)
    /// print(report)   // "phone: 12 rows, 9 applied (…), 3 ignored, 1 conflicts"
    /// ```
    @discardableResult
    public func merge(_ changeSet: ChangeSet) throws -> MergeReport {
        guard changeSet.origin != site else { throw SyncError.ownChangeSet(site: site) }
        return try SyncError.wrap {
            try writer.write { db in
                var (report, changedKeys) = try Self.apply(db, changeSet, localSite: site, options: options)
                report.refreshedIndexes = try Self.finishMerge(db, changedKeys: changedKeys)
                return report
            }
        }
    }

    /// Merges several change sets, in order, in one transaction, and refreshes the derived
    /// indexes once for every row any of them changed. Either all are applied, with their
    /// cursors, or none.
    ///
    /// Transports use it to catch up on many batches at once: one commit instead of one
    /// per batch. The refreshed indexes are reported on the last report.
    @discardableResult
    public func merge(_ changeSets: [ChangeSet]) throws -> [MergeReport] {
        for changeSet in changeSets where changeSet.origin == site { throw SyncError.ownChangeSet(site: site) }
        guard !changeSets.isEmpty else { return [] }
        return try SyncError.wrap {
            try writer.write { db in
                var reports: [MergeReport] = []
                var changedKeys: [String: [DatabaseValue]] = [:]
                for changeSet in changeSets {
                    let (report, changed) = try Self.apply(db, changeSet, localSite: site, options: options)
                    reports.append(report)
                    changedKeys.merge(changed) { $0 + $1 }
                }
                let refreshed = try Self.finishMerge(db, changedKeys: changedKeys)
                reports[reports.count - 1].refreshedIndexes = refreshed
                return reports
            }
        }
    }

    /// Refreshes the derived indexes for the changed keys (each once), then wakes the
    /// capture and index triggers.
    private static func finishMerge(_ db: Database, changedKeys: [String: [DatabaseValue]]) throws -> [String: Int] {
        var unique: [String: [DatabaseValue]] = [:]
        for (table, keys) in changedKeys {
            var seen = Set<DatabaseValue>()
            unique[table] = keys.filter { seen.insert($0).inserted }
        }
        let refreshed = try DerivedIndexRegistry.refresh(db, changedKeys: unique)
        try db.execute(sql: "DELETE FROM vecsync_state WHERE key = 'merging'")
        try db.execute(sql: "UPDATE vecsync_replica SET merging = 0 WHERE id = 1")
        return refreshed
    }

    /// Decodes and merges a serialized change set (see ``merge(_:)``).
    @discardableResult
    public func merge(serialized data: Data) throws -> MergeReport {
        try merge(ChangeSet(serialized: data))
    }

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
            let clock = table.clockTable.quotedSQLIdentifier
            let t = table.name.quotedSQLIdentifier
            let key = table.primaryKey.quotedSQLIdentifier
            let versions = table.columns.indices.map { ", v\($0), s\($0), a\($0)" }.joined()
            let columns = table.columns.map(\.quotedSQLIdentifier)
            let changed = table.columns.indices.map { ", q\($0)" }.joined()
            selectClock = try db.cachedStatement(sql: "SELECT cl, cl_version, cl_site, ra\(versions)\(changed) FROM \(clock) WHERE pk = ?")
            let clockColumns = ["pk"] + TriggerSQL.clockColumns(count: table.columns.count)
            let placeholders = Array(repeating: "?", count: clockColumns.count).joined(separator: ", ")
            writeClock = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO \(clock) (\(clockColumns.joined(separator: ", "))) VALUES (\(placeholders))")
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

    /// Applies one change set inside the caller's transaction and returns its report and
    /// the keys whose rows changed; the caller refreshes indexes and clears the merging flag.
    private static func apply(_ db: Database, _ changeSet: ChangeSet, localSite: SiteID,
                              options: Options) throws -> (MergeReport, [String: [DatabaseValue]]) {
        var report = MergeReport(origin: changeSet.origin)
        report.records = changeSet.records.count

        // 1. Every table must be tracked here with the same definition.
        var localTables: [String: TrackedTable] = [:]
        for table in try trackedTables(db) { localTables[table.name] = table }
        var statements: [TableStatements] = []
        for remote in changeSet.tables {
            guard let local = localTables[remote.name] else { throw SyncError.tableNotTracked(table: remote.name) }
            guard local.fingerprint == remote.fingerprint, local.columns == remote.columns,
                  local.primaryKey == remote.primaryKey
            else {
                throw SyncError.schemaMismatch(
                    table: remote.name,
                    local: "fingerprint \(local.fingerprintHex), key \(local.primaryKey), columns \(local.columns.joined(separator: ","))"
                        + (local.authority.map { ", authority \($0)" } ?? ""),
                    remote: "fingerprint \(FNV1a.hex(remote.fingerprint)), key \(remote.primaryKey), columns \(remote.columns.joined(separator: ","))")
            }
            statements.append(try TableStatements(db, local))
        }

        // 2. A change set behind the cursor was merged before.
        let peer = try Row.fetchOne(db, sql: "SELECT received, acknowledged FROM vecsync_peers WHERE site = ?",
                                    arguments: [changeSet.origin.rawValue])
        let received: Int64 = peer?["received"] ?? 0
        let acknowledged: Int64 = peer?["acknowledged"] ?? 0
        if peer != nil && changeSet.through <= received && changeSet.through > 0 {
            report.alreadyMerged = true
            report.ignored = changeSet.records.count
            return (report, [:])
        }

        // 3. Refuse versions from a clock too far in the future, before touching anything.
        guard let state = try Row.fetchOne(db, sql: "SELECT hlc, seq, wall_override FROM vecsync_replica WHERE id = 1") else {
            throw SyncError.notAReplica(reason: "vecsync_replica is empty")
        }
        let nowMilliseconds: Int64 = state["wall_override"] ?? HybridLogicalClock.wallMilliseconds()
        let limit = HybridLogicalClock(milliseconds: nowMilliseconds + options.maximumClockDriftMilliseconds,
                                       counter: (1 << HybridLogicalClock.counterBits) - 1)
        var newest: Int64 = state["hlc"]
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

        // 4. Silence the capture and index triggers for this transaction; defer foreign
        //    keys so rows may arrive children first.
        try db.execute(sql: "INSERT OR REPLACE INTO vecsync_state (key, value) VALUES ('merging', 1)")
        try db.execute(sql: "UPDATE vecsync_replica SET merging = 1 WHERE id = 1")
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")

        var sites = try siteNames(db)
        var ordinals: [SiteID: Int64] = [:]
        for (ordinal, site) in sites { ordinals[site] = ordinal }
        func ordinal(_ site: SiteID) throws -> Int64 {
            if let known = ordinals[site] { return known }
            try db.execute(sql: "INSERT INTO vecsync_sites (site) VALUES (?)", arguments: [site.rawValue])
            let new = db.lastInsertedRowID
            ordinals[site] = new
            sites[new] = site
            return new
        }

        // How far the origin had merged this replica's changes when it made the change set:
        // a local value written or merged here at or before that sequence number was seen
        // by the origin, so its write to the same column is not concurrent with it.
        let originAcknowledged = changeSet.acknowledgements[localSite] ?? 0
        var seq: Int64 = state["seq"]
        var changedKeys: [String: [DatabaseValue]] = [:]
        for record in changeSet.records {
            let statements = statements[record.table]
            let table = statements.table
            let count = table.columns.count
            let key = record.key.databaseValue

            // The local clock row.
            var causalLength: Int64 = 0
            var rowAuthority: Int64 = 0
            var rowVersion: Int64 = 0
            var rowSite: Int64 = 0
            var versions = [Int64?](repeating: nil, count: count)
            var writers = [Int64?](repeating: nil, count: count)
            var authorities = [Int64](repeating: 0, count: count)
            var changedAt = [Int64?](repeating: nil, count: count)
            if let clock = try Row.fetchOne(statements.selectClock, arguments: [key]) {
                causalLength = clock[0]
                rowVersion = clock[1]
                rowSite = clock[2]
                rowAuthority = clock[3] ?? 0
                for index in 0..<count {
                    versions[index] = clock[4 + 3 * index]
                    writers[index] = clock[5 + 3 * index]
                    authorities[index] = clock[6 + 3 * index] ?? 0
                    changedAt[index] = clock[4 + 3 * count + index]
                }
            }
            let hadClock = causalLength > 0
            let wasLive = causalLength % 2 == 1
            let localWriters = writers
            let localChangedAt = changedAt
            let incomingRowSite = try ordinal(record.rowSite)
            var clockChanged = false
            var replaceAll = false
            var winners: [Int] = []

            // Incarnations are ordered by (authority count, causal length).
            let incoming = (record.authorityCount, record.causalLength)
            let local = (rowAuthority, causalLength)
            if incoming > local {
                // A new incarnation needs every column; a record that carries only some was
                // made for a receiver that has the row already: an earlier change set of its
                // origin is missing here.
                if record.isLive && !record.isComplete {
                    throw SyncError.missingEarlierChanges(origin: changeSet.origin, since: changeSet.since, received: received)
                }
                causalLength = record.causalLength
                rowAuthority = record.authorityCount
                rowVersion = record.rowVersion.rawValue
                rowSite = incomingRowSite
                clockChanged = true
                if record.isLive {
                    replaceAll = true
                    winners = Array(0..<count)
                    for (index, column) in record.presentColumns {
                        versions[index] = column.version.rawValue
                        writers[index] = try ordinal(column.site)
                        authorities[index] = column.authorityCount
                    }
                }
            } else if incoming == local {
                if Self.wins((0, record.rowVersion.rawValue, record.rowSite),
                             over: hadClock ? (0, rowVersion, sites[rowSite]) : nil) {
                    rowVersion = record.rowVersion.rawValue
                    rowSite = incomingRowSite
                    clockChanged = true
                }
                if record.isLive {
                    for (index, column) in record.presentColumns {
                        let localSite = writers[index].flatMap { sites[$0] }
                        guard let localVersion = versions[index], let localSite else {
                            winners.append(index)
                            continue
                        }
                        if Self.wins((column.authorityCount, column.version.rawValue, column.site),
                                     over: (authorities[index], localVersion, localSite)) {
                            winners.append(index)
                        }
                    }
                    for index in winners {
                        guard let column = record.columns[index] else { continue }
                        versions[index] = column.version.rawValue
                        writers[index] = try ordinal(column.site)
                        authorities[index] = column.authorityCount
                    }
                    if !winners.isEmpty { clockChanged = true }
                }
            }
            let isLive = causalLength % 2 == 1

            // The table row.
            var rowChanged = false
            if isLive && (replaceAll || !wasLive) {
                try statements.upsertRow.execute(
                    arguments: StatementArguments([key] + record.columns.map { $0?.value.databaseValue ?? .null }))
                if wasLive { report.updated += 1 } else { report.inserted += 1 }
                rowChanged = true
            } else if isLive && wasLive {
                // Same incarnation: compare with the local values to count conflicts (see
                // MergeReport.conflicts) and to skip writes of equal values (whose versions
                // are still recorded above).
                let current = try Row.fetchOne(statements.selectRow, arguments: [key])
                var changed: [Int] = []
                for (index, incoming) in record.presentColumns {
                    let localValue = current.map { SyncValue($0[1 + index] as DatabaseValue) }
                    let differs = localValue.map { !$0.isIdentical(to: incoming.value) } ?? true
                    if differs && winners.contains(index) { changed.append(index) }
                    if differs, localValue != nil, let localWriter = localWriters[index].flatMap({ sites[$0] }),
                       localWriter != incoming.site, (localChangedAt[index] ?? .max) > originAcknowledged {
                        report.conflicts += 1
                    }
                }
                if !changed.isEmpty {
                    let statement = try statements.update(db, columns: changed)
                    try statement.execute(
                        arguments: StatementArguments(changed.map { record.columns[$0]?.value.databaseValue ?? .null } + [key]))
                    report.updated += 1
                    rowChanged = true
                }
            } else if !isLive && wasLive {
                try statements.deleteRow.execute(arguments: [key])
                report.deleted += 1
                rowChanged = true
            }

            if clockChanged {
                seq += 1
                var arguments: [DatabaseValue] = [key, causalLength.databaseValue, rowVersion.databaseValue,
                                                  rowSite.databaseValue, seq.databaseValue]
                for index in 0..<count {
                    arguments.append(versions[index]?.databaseValue ?? .null)
                    arguments.append(writers[index]?.databaseValue ?? .null)
                }
                arguments.append(rowAuthority == 0 ? .null : rowAuthority.databaseValue)
                for index in 0..<count {
                    arguments.append(authorities[index] == 0 ? .null : authorities[index].databaseValue)
                }
                // Columns this merge set change here now, so they travel on to third peers.
                for index in winners { changedAt[index] = seq }
                for index in 0..<count {
                    arguments.append(changedAt[index]?.databaseValue ?? .null)
                }
                try statements.writeClock.execute(arguments: StatementArguments(arguments))
                report.applied += 1
            } else {
                report.ignored += 1
            }
            if rowChanged { changedKeys[table.name, default: []].append(key) }
        }

        // 5. Clock, sequence, cursor and acknowledgement, in the same transaction.
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

        return (report, changedKeys)
    }

    /// The merge's total order: does a write tagged (authority count, version, site) beat
    /// the local one? The greater authority count, then the greater version, then the
    /// greater site id. Equal tags are the same write, which does not win; a missing local
    /// tag always loses.
    static func wins(_ write: (authority: Int64, version: Int64, site: SiteID),
                     over local: (authority: Int64, version: Int64, site: SiteID?)?) -> Bool {
        guard let local, let localSite = local.site else { return true }
        if write.authority != local.authority { return write.authority > local.authority }
        if write.version != local.version { return write.version > local.version }
        return localSite < write.site
    }
}
