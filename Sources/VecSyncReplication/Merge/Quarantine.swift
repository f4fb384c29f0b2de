import Foundation
import GRDB
import VecSyncCore

/// The quarantine, `vecsync_quarantine`: rows of change sets that could not be merged here,
/// kept aside (``keep(_:origin:table:key:reason:changeSet:waitingFor:waitingKey:)``, called by the merge's
/// `quarantine` step) and tried again by every merge (``retry(_:localSite:options:after:wroteLocally:changedKeys:)``)
/// until they merge. ``QuarantinedRecord`` describes one; ``Replica/quarantinedRecords()``
/// lists them.
enum Quarantine {
    /// The key in `vecsync_state` holding the local sequence number at the end of the last
    /// retry of the quarantine: a replica whose sequence moved past it between merges wrote
    /// rows of its own, which may be parents that quarantined rows wait for.
    static let checkedKey = "quarantine_checked"

    /// Whether this replica wrote rows of its own since the last retry of the quarantine
    /// (its sequence number moved outside a merge). Read before a merge writes anything.
    static func wroteLocallySinceRetry(_ db: Database) throws -> Bool {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM \(EngineNames.quarantine) LIMIT 1") == true else {
            return false
        }
        let seq = try Int64.fetchOne(db, sql: "SELECT seq FROM \(EngineNames.replica) WHERE id = 1") ?? 0
        let checked = try Int64.fetchOne(
            db, sql: "SELECT value FROM \(EngineNames.state) WHERE key = ?", arguments: [checkedKey])
        return checked.map { seq > $0 } ?? true
    }

    /// Tries quarantined rows again, inside the merge's transaction, at the cost of the rows
    /// tried: those that wait for a row this transaction changed (a parent that arrived, or
    /// an earlier change of their own row: `waits_tbl`/`waits_pk`), those that wait for
    /// nothing named (a table not tracked yet, a schema that differs, a local constraint),
    /// and, when the replica wrote rows of its own since the last retry (`wroteLocally`),
    /// those whose parent is now here. Rows released this way are parents in their turn, so
    /// the retry goes on with the rows that wait for them (grandchildren) until nothing more
    /// is released.
    ///
    /// The changes of one row are joined into one record (``joined(_:)``); the records of
    /// one origin are merged as one change set, parents first; a record that still cannot
    /// merge is kept again with its new reason. Returns how many kept changes were released
    /// and the rows they belong to.
    static func retry(
        _ db: Database, localSite: SiteID, options: Replica.Options, after reports: [MergeReport], wroteLocally: Bool,
        changedKeys: inout [String: [DatabaseValue]]
    ) throws -> (changes: Int, rows: [QuarantinedRecord]) {
        defer { try? markChecked(db) }
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM \(EngineNames.quarantine) LIMIT 1") == true else {
            return (0, [])
        }
        var arrivals = changedKeys
        for report in reports {
            for change in report.accepted { arrivals[change.table, default: []].append(change.key.databaseValue) }
        }
        var candidates = try rowsWaitingForNothing(db)
        if wroteLocally { candidates += try rowsWhoseParentIsHere(db) }
        var tried = Set<[DatabaseValue]>()
        var releasedChanges = 0
        var releasedRows: [QuarantinedRecord] = []
        while true {
            candidates += try rowsWaiting(for: arrivals, db)
            let ids = candidates.filter { tried.insert($0).inserted }
            candidates = []
            guard !ids.isEmpty else { break }
            let groups = try takeQuarantined(ids, db)
            let outcome = try mergeQuarantined(groups, db, localSite: localSite, options: options)
            releasedChanges += outcome.changes
            releasedRows += outcome.rows
            changedKeys.merge(outcome.changedKeys) { $0 + $1 }
            arrivals = outcome.changedKeys
            for change in outcome.accepted { arrivals[change.table, default: []].append(change.key.databaseValue) }
        }
        return (releasedChanges, releasedRows)
    }

    /// Keeps one row's change aside: `changeSet` is the serialized one-row change set of
    /// `origin`, `key` the row's key here; `waitingFor` and `waitingKey` name the row it waits
    /// for (NULL: nothing named, tried at every merge).
    static func keep(
        _ db: Database, origin: DatabaseValue, table: DatabaseValue, key: DatabaseValue, reason: DatabaseValue,
        changeSet: DatabaseValue, waitingFor: DatabaseValue, waitingKey: DatabaseValue
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO \(EngineNames.quarantine) (origin, tbl, pk, reason, change_set, waits_tbl, waits_pk)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [origin, table, key, reason, changeSet, waitingFor, waitingKey])
    }

    /// Whether a change of `key` in `table` is in quarantine.
    static func holds(_ db: Database, table: String, key: DatabaseValue) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT 1 FROM \(EngineNames.quarantine) WHERE tbl = ? AND pk = ?", arguments: [table, key])
            ?? false
    }

    /// The rows kept, in the order they arrived.
    static func records(_ db: Database) throws -> [QuarantinedRecord] {
        try Row.fetchAll(db, sql: "SELECT origin, tbl, pk, reason FROM \(EngineNames.quarantine) ORDER BY id")
            .map { row in
                QuarantinedRecord(
                    origin: SiteID(row["origin"] as String), table: row["tbl"],
                    key: SyncValue(row["pk"] as DatabaseValue), reason: row["reason"])
            }
    }

    /// Notes the local sequence number the quarantine was last tried at.
    private static func markChecked(_ db: Database) throws {
        let seq = try Int64.fetchOne(db, sql: "SELECT seq FROM \(EngineNames.replica) WHERE id = 1") ?? 0
        try db.execute(
            sql: "INSERT OR REPLACE INTO \(EngineNames.state) (key, value) VALUES (?, ?)",
            arguments: [checkedKey, seq])
    }

    /// The rows (table and key) with a change in quarantine that waits for nothing named,
    /// in arrival order.
    private static func rowsWaitingForNothing(_ db: Database) throws -> [[DatabaseValue]] {
        try Row.fetchAll(
            db,
            sql:
                "SELECT tbl, pk FROM \(EngineNames.quarantine) WHERE waits_tbl IS NULL GROUP BY tbl, pk ORDER BY min(id)"
        ).map { [$0["tbl"], $0["pk"]] }
    }

    /// The rows with a change in quarantine that waits for one of `keys` (by table).
    private static func rowsWaiting(for keys: [String: [DatabaseValue]], _ db: Database) throws -> [[DatabaseValue]] {
        guard !keys.isEmpty else { return [] }
        let statement = try db.cachedStatement(
            sql: "SELECT tbl, pk FROM \(EngineNames.quarantine) WHERE waits_tbl = ? AND waits_pk = ? ORDER BY id")
        var rows: [[DatabaseValue]] = []
        for (table, tableKeys) in keys.sorted(by: { $0.key < $1.key }) {
            var seen = Set<DatabaseValue>()
            for key in tableKeys where seen.insert(key).inserted {
                for row in try Row.fetchAll(statement, arguments: [table, key]) {
                    rows.append([row["tbl"], row["pk"]])
                }
            }
        }
        return rows
    }

    /// The rows with a change in quarantine that waits for a row that is now in its table
    /// (written here outside any merge).
    private static func rowsWhoseParentIsHere(_ db: Database) throws -> [[DatabaseValue]] {
        let waited = try String.fetchAll(
            db, sql: "SELECT DISTINCT waits_tbl FROM \(EngineNames.quarantine) WHERE waits_tbl IS NOT NULL")
        let tables = try Replica.recordedTables(db)
        var rows: [[DatabaseValue]] = []
        for name in waited {
            guard let table = tables.first(where: { $0.name == name }) else { continue }
            rows += try Row.fetchAll(
                db,
                sql: """
                    SELECT q.tbl, q.pk FROM \(EngineNames.quarantine) AS q WHERE q.waits_tbl = ? AND EXISTS
                    (SELECT 1 FROM \(table.name.quotedSQLIdentifier) AS p WHERE p.\(table.primaryKey.quotedSQLIdentifier) = q.waits_pk)
                    ORDER BY q.id
                    """, arguments: [name]
            ).map { [$0["tbl"], $0["pk"]] }
        }
        return rows
    }

    /// One row's kept changes, in arrival order, taken out of the quarantine.
    struct Group {
        let rows: [Row]
        var table: String { rows[0]["tbl"] }
        var key: DatabaseValue { rows[0]["pk"] }
    }

    /// Takes every kept change of the rows `ids` (table and key) out of the quarantine.
    private static func takeQuarantined(_ ids: [[DatabaseValue]], _ db: Database) throws -> [Group] {
        let select = try db.cachedStatement(
            sql: """
                SELECT tbl, pk, reason, origin, change_set, waits_tbl, waits_pk FROM \(EngineNames.quarantine)
                WHERE tbl = ? AND pk = ? ORDER BY id
                """)
        let delete = try db.cachedStatement(sql: "DELETE FROM \(EngineNames.quarantine) WHERE tbl = ? AND pk = ?")
        var groups: [Group] = []
        for id in ids {
            let rows = try Row.fetchAll(select, arguments: StatementArguments(id))
            guard !rows.isEmpty else { continue }
            try delete.execute(arguments: StatementArguments(id))
            groups.append(Group(rows: rows))
        }
        return groups
    }

    /// Puts a group's kept changes back as they were (with `reason` instead, when given).
    private static func keepAgain(_ group: Group, reason: String? = nil, _ db: Database) throws {
        for row in group.rows {
            try keep(
                db, origin: row["origin"], table: row["tbl"], key: row["pk"],
                reason: reason?.databaseValue ?? row["reason"],
                changeSet: row["change_set"], waitingFor: row["waits_tbl"], waitingKey: row["waits_pk"])
        }
    }

    /// What merging taken-out groups did.
    private struct RetryOutcome {
        var changes = 0
        var rows: [QuarantinedRecord] = []
        var changedKeys: [String: [DatabaseValue]] = [:]
        var accepted: [MergeReport.AcceptedChange] = []
    }

    /// Merges the groups: the joined records of each origin as one change set; when that
    /// change set fails as a whole (a table that changed or is no longer tracked), each
    /// group alone, so the others still merge.
    private static func mergeQuarantined(
        _ groups: [Group], _ db: Database, localSite: SiteID, options: Replica.Options
    ) throws -> RetryOutcome {
        var outcome = RetryOutcome()
        // Joined records by origin, in the order the groups came.
        var origins: [SiteID] = []
        var byOrigin: [SiteID: [(group: Group, changeSet: ChangeSet)]] = [:]
        for group in groups {
            let changeSets = try group.rows.map { try ChangeSet(serialized: $0["change_set"] as Data) }
            guard let joined = Replica.joined(changeSets) else {
                // Changes that cannot be joined stay as they were.
                try keepAgain(group, db)
                continue
            }
            if byOrigin[joined.origin] == nil { origins.append(joined.origin) }
            byOrigin[joined.origin, default: []].append((group, joined))
        }
        for origin in origins {
            guard let members = byOrigin[origin] else { continue }
            if let merged = try mergeTogether(members.map(\.changeSet), db, localSite: localSite, options: options) {
                record(merged, of: members.map(\.group), into: &outcome)
                continue
            }
            for member in members {
                do {
                    var merged: ChangeSetMerge.Merged?
                    try db.inSavepoint {
                        merged = try ChangeSetMerge.run(db, member.changeSet, localSite: localSite, options: options)
                        return .commit
                    }
                    if let merged { record(merged, of: [member.group], into: &outcome) }
                } catch let error as VecSyncError {
                    // The row's table changed or is no longer tracked: keep the changes as they were.
                    try keepAgain(member.group, reason: error.description, db)
                }
            }
        }
        return outcome
    }

    /// Merges one-record change sets of one origin as one change set, in a savepoint; nil
    /// (and nothing written) when it fails as a whole.
    private static func mergeTogether(
        _ changeSets: [ChangeSet], _ db: Database, localSite: SiteID, options: Replica.Options
    ) throws -> ChangeSetMerge.Merged? {
        guard var combined = changeSets.first else { return nil }
        // Each is one record of one table.
        (combined.tables, combined.records) = ChangeSet.withOneTableList(
            changeSets.compactMap { changeSet -> (ChangeSet.Table, ChangeSet.Record)? in
                guard let table = changeSet.tables.first, let record = changeSet.records.first else { return nil }
                return (table, record)
            })
        var merged: ChangeSetMerge.Merged?
        do {
            try db.inSavepoint {
                merged = try ChangeSetMerge.run(db, combined, localSite: localSite, options: options)
                return .commit
            }
        } catch is VecSyncError {
            return nil
        }
        return merged
    }

    /// Counts the groups a retry merged (those whose row was not quarantined again) as
    /// released, and gathers what the merge changed.
    private static func record(_ merge: ChangeSetMerge.Merged, of groups: [Group], into outcome: inout RetryOutcome) {
        let kept = Set(merge.report.quarantined.map { [$0.table.databaseValue, $0.key.databaseValue] })
        for group in groups where !kept.contains([group.table.databaseValue, group.key]) {
            outcome.changes += group.rows.count
            let last = group.rows[group.rows.count - 1]
            outcome.rows.append(
                QuarantinedRecord(
                    origin: SiteID(last["origin"] as String), table: group.table, key: SyncValue(group.key),
                    reason: last["reason"]))
        }
        outcome.changedKeys.merge(merge.changedKeys) { $0 + $1 }
        outcome.accepted += merge.report.accepted
    }
}
