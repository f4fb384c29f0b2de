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
        let refreshed = try DerivedIndexCatalogue(db).refresh(db, changedKeys: unique)
        try setMerging(db, false)
        return refreshed
    }

    /// Sets or clears the merging state of this transaction: the one switch that silences
    /// the capture triggers (`vecsync_replica.merging`, read where they already read the
    /// clock) and the index triggers (``DerivedIndexCatalogue/setMerging(_:_:)``).
    static func setMerging(_ db: Database, _ merging: Bool) throws {
        try DerivedIndexCatalogue.setMerging(db, merging)
        try db.execute(sql: "UPDATE vecsync_replica SET merging = ? WHERE id = 1", arguments: [merging])
    }

    /// Decodes and merges a serialized change set (see ``merge(_:)``).
    @discardableResult
    public func merge(serialized data: Data) throws -> MergeReport {
        try merge(ChangeSet(serialized: data))
    }

    /// Applies one change set inside the caller's transaction (see ``ChangeSetMerge``) and
    /// returns its report and the keys whose rows changed; the caller refreshes indexes and
    /// clears the merging flag.
    private static func apply(_ db: Database, _ changeSet: ChangeSet, localSite: SiteID,
                              options: Options) throws -> (MergeReport, [String: [DatabaseValue]]) {
        var merge = ChangeSetMerge(db, changeSet, localSite: localSite, options: options)
        try merge.run()
        return (merge.report, merge.changedKeys)
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
