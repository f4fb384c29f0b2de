import Foundation
import GRDB
import VecSyncCore

// Step 3 of a merge (ChangeSetMerge.swift lists the steps): the change set's records are
// checked before anything is written.

extension ChangeSetMerge {
    /// Step 3: refuses versions from a clock too far in the future, and records that refer
    /// to no table of the change set or carry the wrong number of columns; returns the local
    /// clock, moved up to every version the change set carries.
    static func checkClocks(_ db: Database, _ changeSet: ChangeSet, options: Replica.Options) throws
        -> MergeState.LocalClock
    {
        guard
            let state = try Row.fetchOne(
                db, sql: "SELECT hlc, seq, wall_override FROM \(EngineNames.replica) WHERE id = 1")
        else {
            throw VecSyncError.notAReplica(reason: "\(EngineNames.replica) is empty")
        }
        var newest: Int64 = state["hlc"]
        let nowMilliseconds: Int64 = state["wall_override"] ?? HybridLogicalClock.wallMilliseconds()
        let limit = HybridLogicalClock(
            milliseconds: nowMilliseconds + options.maximumClockDriftMilliseconds,
            counter: (1 << HybridLogicalClock.counterBits) - 1)
        for record in changeSet.records {
            guard changeSet.tables.indices.contains(record.table) else {
                throw VecSyncError.corruptChangeSet(reason: "a record refers to table #\(record.table)", offset: 0)
            }
            let table = changeSet.tables[record.table]
            if record.isLive && record.columns.count != table.columns.count {
                throw VecSyncError.corruptChangeSet(
                    reason:
                        "a record for \(table.name) has \(record.columns.count) columns, the table has \(table.columns.count)",
                    offset: 0)
            }
            for (version, site) in [(record.rowVersion, record.rowSite)]
                + record.presentColumns.map({ ($0.column.version, $0.column.site) })
            {
                if version > limit {
                    throw VecSyncError.clockTooFarAhead(
                        site: site, version: version, now: HybridLogicalClock(milliseconds: nowMilliseconds),
                        allowedDriftMilliseconds: options.maximumClockDriftMilliseconds)
                }
                newest = max(newest, version.rawValue)
            }
        }
        return MergeState.LocalClock(newest: newest, seq: state["seq"], wallMilliseconds: nowMilliseconds)
    }
}
