import Foundation
import GRDB
import VecSyncCore

// Steps 6 and 7 of a merge (ChangeSetMerge.swift lists the steps): after the records,
// orphans follow their deleted parents and counters are recomputed.

extension ChangeSetMerge {
    /// Step 6: a row whose foreign key refers to a deleted row of a tracked table is deleted
    /// too, as a local delete that syncs (so every replica ends without it); a row SQLite
    /// deleted by an `ON DELETE CASCADE` during the merge gets its delete recorded the same
    /// way. Repeats while deletes make new orphans (grandchildren).
    mutating func deleteOrphans() throws {
        guard !tables.foreignKeys.isEmpty else { return }
        for _ in 0..<16 {
            var deleted = 0
            for (childName, links) in tables.foreignKeys.sorted(by: { $0.key < $1.key }) {
                guard let child = tables.tracked[childName.lowercased()] else { continue }
                let changedKeys = state.changedKeys
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
                    if state.deletedRows {
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
                        if !parentKnown, let record = state.creator(of: child.name, childKey) {
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
                guard state.deletedRows else { continue }
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

    /// Step 7: sets the counter columns (``CounterSQL``) of every row whose contributions or
    /// values this merge changed to the sum of the contributions.
    mutating func recomputeCounters() throws {
        var rows: [String: [DatabaseValue]] = [:]
        let changedKeys = state.changedKeys
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
            guard let table = tables.tracked[name.lowercased()] else { continue }
            let columns = try Replica.counterColumns(db, of: table)
            guard !columns.isEmpty else { continue }
            var seen = Set<DatabaseValue>()
            for key in keys where seen.insert(key).inserted {
                try CounterSQL.recompute(db, table: table, columns: columns, key: key)
                state.rowChanged(table.name, key)
            }
        }
    }

    /// Takes back a row this merge created (its row and clock row) and quarantines its record.
    mutating func unmerge(
        _ table: TrackedTable, key: DatabaseValue, record: ChangeSet.Record, parent: (table: String, key: DatabaseValue)
    ) throws {
        try db.execute(
            sql: "DELETE FROM \(table.name.quotedSQLIdentifier) WHERE \(table.primaryKey.quotedSQLIdentifier) = ?",
            arguments: [key])
        try db.execute(sql: "DELETE FROM \(table.clockTable.quotedName) WHERE pk = ?", arguments: [key])
        state.rowTakenBack(table.name, key)
        try quarantine(
            record, key: key, reason: "its parent row arrived with it but was not merged here; it waits for that row",
            waitingFor: parent)
    }

    /// Records the delete of `key` in `table` as this site's own, made now: the next causal
    /// length, a new version, the next sequence number. False when the row was not live.
    mutating func recordLocalDelete(_ table: TrackedTable, key: DatabaseValue) throws -> Bool {
        let clockTable = table.clockTable
        guard let row = try Row.fetchOne(db, sql: clockTable.selectRowSQL, arguments: [key]) else { return false }
        var clock = clockTable.decode(row)
        guard clock.isLive else { return false }
        clock.causalLength += 1
        clock.rowVersion = state.nextLocalVersion()
        clock.rowSite = 0
        if table.authority == localSite { clock.rowAuthority += 1 }
        clock.sequence = state.nextSequence()
        try db.execute(sql: clockTable.writeRowSQL, arguments: clockTable.arguments(clock))
        state.rowDeleted()
        state.rowChanged(table.name, key)
        state.count(.orphanDeleted(table: table.name))
        return true
    }
}
