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

    /// The change set with only the records of rows in part `part` of `count`
    /// (``part(ofRowIn:key:among:)``), every table kept: what a server folds into one part of a
    /// snapshot made in parts. A record naming no table stays in part 0, where folding
    /// reports it.
    public func rows(inPart part: Int, of count: Int) -> ChangeSet {
        guard count > 1 else { return self }
        var kept = self
        kept.records = records.filter { record in
            guard tables.indices.contains(record.table) else { return part == 0 }
            return Self.part(ofRowIn: tables[record.table].name, key: record.key, among: count) == part
        }
        return kept
    }

    /// Which of `count` parts a row falls in: FNV-1a of its table's name and its key, the
    /// same on every machine and in every process, so a snapshot made again in as many
    /// parts puts each row where it was.
    public static func part(ofRowIn table: String, key: SyncValue, among count: Int) -> Int {
        guard count > 1 else { return 0 }
        var bytes = Array(table.utf8)
        bytes.append(0)
        func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        switch key {
        case .null: bytes.append(0)
        case .integer(let value):
            bytes.append(1)
            append(UInt64(bitPattern: value))
        case .real(let value):
            bytes.append(2)
            append(value.bitPattern)
        case .text(let value):
            bytes.append(3)
            bytes += value.utf8
        case .blob(let value):
            bytes.append(4)
            bytes += value
        case .identity(let site, let id):
            bytes.append(5)
            bytes += site.rawValue.utf8
            bytes.append(0)
            append(UInt64(bitPattern: id))
        }
        return Int(FNV1a.hash(bytes) % UInt64(count))
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
