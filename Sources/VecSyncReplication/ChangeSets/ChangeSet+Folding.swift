import Foundation
import VecSyncCore

extension ChangeSet {
    /// One change set holding, for every row the given change sets mention, the state a
    /// replica that merged all of them would hold: the greatest incarnation and, within it,
    /// each column's winning write — decided by the merge's own rules (``Replica/wins(_:over:)``
    /// through the join the quarantine retry uses), so the fold and a merge cannot disagree.
    ///
    /// A sync server uses it to fold a space's history into a bootstrap snapshot without
    /// knowing the application's schema: only the tables' definitions carried in the change
    /// sets. Folding is order-independent, and folding a fold with later change sets equals
    /// folding everything.
    ///
    /// Throws ``VecSyncError/changeSetSchemaMismatch(table:local:remote:)`` when two change sets
    /// define a table differently (a schema changed within the history), and
    /// ``VecSyncError/corruptChangeSet(reason:offset:)`` when a record names no table or a live
    /// row ends up without some column (a history that lacks the row's creation).
    ///
    /// ```swift
    /// let snapshot = try ChangeSet.folded(history, origin: "snapshot", since: 0, through: lastSeq)
    /// ```
    public static func folded(_ changeSets: [ChangeSet], origin: SiteID, since: Int64, through: Int64) throws
        -> ChangeSet
    {
        var tables: [Table] = []
        var tableIndex: [String: Int] = [:]
        // The changes of each row, in first-seen order: (table index, key) -> one-record change sets.
        var order: [RowID] = []
        var changes: [RowID: [ChangeSet]] = [:]
        for changeSet in changeSets {
            var local: [Int] = []
            for table in changeSet.tables {
                if let index = tableIndex[table.name] {
                    let known = tables[index]
                    guard known == table else {
                        throw VecSyncError.changeSetSchemaMismatch(
                            table: table.name, local: describe(known), remote: describe(table))
                    }
                    local.append(index)
                } else {
                    tableIndex[table.name] = tables.count
                    local.append(tables.count)
                    tables.append(table)
                }
            }
            for record in changeSet.records {
                guard local.indices.contains(record.table) else {
                    throw VecSyncError.corruptChangeSet(reason: "a record refers to table #\(record.table)", offset: 0)
                }
                let row = RowID(table: local[record.table], key: record.key)
                var single = record
                single.table = 0
                if changes[row] == nil { order.append(row) }
                changes[row, default: []].append(
                    ChangeSet(
                        origin: changeSet.origin, since: changeSet.since, through: changeSet.through,
                        tables: [tables[row.table]], records: [single]))
            }
        }
        var records: [Record] = []
        records.reserveCapacity(order.count)
        for row in order {
            guard let group = changes[row], var record = Replica.joined(group)?.records.first else { continue }
            if record.isLive && !record.isComplete {
                throw VecSyncError.corruptChangeSet(
                    reason: "row \(record.key) of \(tables[row.table].name) lacks some columns in every change set",
                    offset: 0)
            }
            record.table = row.table
            records.append(record)
        }
        return ChangeSet(origin: origin, since: since, through: through, tables: tables, records: records)
    }

    /// A row: its table's index in the fold and its key.
    private struct RowID: Hashable {
        var table: Int
        var key: SyncValue
    }

    private static func describe(_ table: Table) -> String {
        "fingerprint \(FNV1a.hex(table.fingerprint)), key \(table.primaryKey), columns \(table.columns.joined(separator: ","))"
    }
}
