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
        guard changeSet.origin != site else { throw VecSyncError.ownChangeSet(site: site) }
        return try VecSyncError.wrap {
            try writer.write { db in
                let wroteLocally = try Quarantine.wroteLocallySinceRetry(db)
                var (report, changedKeys) = try Self.apply(db, changeSet, localSite: site, options: options)
                let released = try Quarantine.retry(
                    db, localSite: site, options: options, after: [report], wroteLocally: wroteLocally,
                    changedKeys: &changedKeys)
                report.releasedFromQuarantine = released.changes
                report.released = released.rows
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
        for changeSet in changeSets where changeSet.origin == site { throw VecSyncError.ownChangeSet(site: site) }
        return try mergeInOneTransaction(changeSets)
    }

    /// Merges change sets this replica made itself and no longer holds, in order, in one
    /// transaction: after its database was restored from a backup, the changes it published
    /// between the backup and the restore (its lost future) are held only by the
    /// destination and the peers, which never send a site its own changes back.
    ///
    /// Transports call it when they find more of this site's changes at a destination than
    /// its push cursor says (``FolderTransport`` and `HTTPTransport` do, on push): the rows
    /// come back by the merge's ordinary rules, and the clock moves past every version the
    /// lost future used. Writes made after the restore and before this call may have reused
    /// some of those versions; such ties are broken by value, the same way on every replica
    /// (see ``wins(_:over:)``). No cursor moves. Merging a change set of this site that is
    /// not lost is harmless: its writes are already here, or older than what is.
    ///
    /// Throws ``VecSyncError/notOwnChangeSet(site:origin:)`` for a change set another site
    /// made; then nothing is applied.
    @discardableResult
    public func recoverLostChanges(_ changeSets: [ChangeSet]) throws -> [MergeReport] {
        for changeSet in changeSets where changeSet.origin != site {
            throw VecSyncError.notOwnChangeSet(site: site, origin: changeSet.origin)
        }
        return try mergeInOneTransaction(changeSets)
    }

    /// Merges `changeSets` in order in one transaction, refreshing the derived indexes once.
    private func mergeInOneTransaction(_ changeSets: [ChangeSet]) throws -> [MergeReport] {
        guard !changeSets.isEmpty else { return [] }
        return try VecSyncError.wrap {
            try writer.write { db in
                let wroteLocally = try Quarantine.wroteLocallySinceRetry(db)
                var reports: [MergeReport] = []
                var changedKeys: [String: [DatabaseValue]] = [:]
                for changeSet in changeSets {
                    let (report, changed) = try Self.apply(db, changeSet, localSite: site, options: options)
                    reports.append(report)
                    changedKeys.merge(changed) { $0 + $1 }
                }
                let released = try Quarantine.retry(
                    db, localSite: site, options: options, after: reports, wroteLocally: wroteLocally,
                    changedKeys: &changedKeys)
                reports[reports.count - 1].releasedFromQuarantine = released.changes
                reports[reports.count - 1].released = released.rows
                let refreshed = try Self.finishMerge(db, changedKeys: changedKeys)
                reports[reports.count - 1].refreshedIndexes = refreshed
                return reports
            }
        }
    }

    /// One change set holding the join of the records of `changeSets` (changes of one row):
    /// the greatest incarnation, and within it each column's winning write, as a merge
    /// would keep them.
    ///
    /// Changes made under different definitions of the table (a column added between them)
    /// are laid out by column name in one definition holding every column any of them
    /// carries (``widenedTable(_:)``); nil when there is none (a shared column's type
    /// differs, or a change set of format 1 or 2 is among them).
    static func joined(_ changeSets: [ChangeSet]) -> ChangeSet? {
        let rows = changeSets.compactMap { changeSet in
            changeSet.records.first.flatMap { record in
                changeSet.tables.indices.contains(record.table) ? (changeSet.tables[record.table], record) : nil
            }
        }
        guard var result = changeSets.first, !rows.isEmpty, let table = widenedTable(rows.map(\.0)) else { return nil }
        let records = rows.map { relaid($0.1, from: $0.0, to: table) }
        var record = records[0]
        for next in records.dropFirst() {
            let current = (record.authorityCount, record.causalLength)
            let incoming = (next.authorityCount, next.causalLength)
            if incoming > current {
                // A later incarnation: its columns, completed by nothing older.
                record = next
            } else if incoming == current {
                if wins(
                    (0, next.rowVersion.rawValue, next.rowSite), over: (0, record.rowVersion.rawValue, record.rowSite))
                {
                    record.rowVersion = next.rowVersion
                    record.rowSite = next.rowSite
                }
                if record.columns.count == next.columns.count {
                    for (index, column) in next.presentColumns {
                        let kept = record.columns[index]
                        if kept.map({ Self.wins(column, over: $0) }) ?? true {
                            record.columns[index] = column
                        }
                    }
                }
            }
        }
        result.origin = changeSets.last?.origin ?? result.origin
        record.table = 0
        result.tables = [table]
        result.records = [record]
        return result
    }

    /// One definition for changes of a table made under several: the table itself when they
    /// agree; otherwise every column any of them has (by name, the widest definition's order
    /// first) with its declared type, when they agree on the key, its kind, the authority and
    /// the shared columns' types. Its fingerprint is 0, which no table has, so a merge lays
    /// it onto the local table by name.
    static func widenedTable(_ tables: [ChangeSet.Table]) -> ChangeSet.Table? {
        guard let first = tables.first else { return nil }
        if tables.allSatisfy({ $0 == first }) { return first }
        guard let widest = tables.max(by: { $0.columns.count < $1.columns.count }),
            let base = widest.definition
        else { return nil }
        var columns = widest.columns
        var types = base.declaredTypes
        var position = Dictionary(
            columns.enumerated().map { ($1.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        for table in tables {
            guard let definition = table.definition, definition.declaredTypes.count == table.columns.count,
                table.name == widest.name, table.primaryKey.lowercased() == widest.primaryKey.lowercased(),
                definition.keyKind == base.keyKind, definition.authority == base.authority,
                definition.hasLocalKeys == base.hasLocalKeys
            else { return nil }
            for (name, type) in zip(table.columns, definition.declaredTypes) {
                if let known = position[name.lowercased()] {
                    guard types[known] == type else { return nil }
                } else {
                    position[name.lowercased()] = columns.count
                    columns.append(name)
                    types.append(type)
                }
            }
        }
        return ChangeSet.Table(
            name: widest.name, primaryKey: widest.primaryKey, columns: columns, fingerprint: 0,
            definition: ChangeSet.Table.Definition(
                keyKind: base.keyKind, declaredTypes: types, authority: base.authority,
                hasLocalKeys: base.hasLocalKeys))
    }

    /// `record`, made under `source`, with its columns laid out as `target`'s (by name).
    private static func relaid(_ record: ChangeSet.Record, from source: ChangeSet.Table, to target: ChangeSet.Table)
        -> ChangeSet.Record
    {
        guard source != target, record.isLive else { return record }
        var relaid = record
        relaid.columns = [ChangeSet.Column?](repeating: nil, count: target.columns.count)
        let position = Dictionary(
            target.columns.enumerated().map { ($1.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        for (index, column) in record.presentColumns {
            if let target = position[source.columns[index].lowercased()] { relaid.columns[target] = column }
        }
        return relaid
    }

    /// Refreshes the derived indexes for the changed keys (each once), then wakes the
    /// capture and index triggers.
    private static func finishMerge(_ db: Database, changedKeys: [String: [DatabaseValue]]) throws -> [String: Int] {
        var unique: [String: [DatabaseValue]] = [:]
        for (table, keys) in changedKeys {
            var seen = Set<DatabaseValue>()
            unique[table] = keys.filter { seen.insert($0).inserted }
        }
        let refreshed = try DerivedIndexCatalogue(db).refresh(db, changedKeys: unique)
        try MergingFlag.set(db, false)
        return refreshed
    }

    /// Decodes and merges a serialized change set (see ``merge(_:)``).
    @discardableResult
    public func merge(serialized data: Data) throws -> MergeReport {
        try merge(ChangeSet(serialized: data))
    }

    /// Applies one change set inside the caller's transaction (see ``ChangeSetMerge``) and
    /// returns its report and the keys whose rows changed; the caller refreshes indexes and
    /// clears the merging flag.
    private static func apply(
        _ db: Database, _ changeSet: ChangeSet, localSite: SiteID,
        options: Options
    ) throws -> (MergeReport, [String: [DatabaseValue]]) {
        let merged = try ChangeSetMerge.run(db, changeSet, localSite: localSite, options: options)
        return (merged.report, merged.changedKeys)
    }
}
