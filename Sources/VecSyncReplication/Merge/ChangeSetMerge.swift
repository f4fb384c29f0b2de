import Foundation
import GRDB
import VecSyncCore

/// Merges one change set into a replica's database, inside the caller's transaction.
///
/// How it works, in named steps, in the order ``run(_:_:localSite:options:)`` runs them:
/// 1. ``MergeTables``: local schema changes are adopted, and each table of the change set is
///    matched with the local one — by position when the definitions are equal, by column
///    name (``mapping(from:to:retired:)``) when they differ; a table that cannot merge here
///    has its records quarantined, and the others go on;
/// 2. ``PeerCursor``: a change set behind the origin's cursor was merged before;
/// 3. ``checkClocks(_:_:options:)``: no version comes from a clock too far in the future
///    (nothing is written before these checks pass);
/// 4. ``beginMerging(_:)``: the capture and index triggers fall silent;
///    ``KeyTranslation``: the keys of tables with local keys, which travel as identities,
///    become local ids (``IdentityMap``); the values of foreign keys that refer to such
///    tables are translated with each record (``KeyTranslation/translateValues(_:table:state:_:)``);
/// 5. for each record, parents before children (``MergeTables/mergeOrder(of:)``),
///    ``merge(_:)``: read the local ``ClockRow``, decide the row's incarnation
///    (``decideIncarnation(_:local:)``), merge its columns (``mergeColumns(_:table:into:)``),
///    check what will be written (``refusal(_:table:columns:)``), write the table row
///    (``writeRow(_:table:local:outcome:)``) and the clock row (``writeClock(_:record:table:)``).
///    A row that cannot be merged here is quarantined (``quarantine(_:key:reason:waitingFor:)``)
///    and the others go on;
/// 6. ``deleteOrphans()``: rows whose parent row (a foreign key between tracked tables) was
///    deleted follow it, as local deletes;
/// 7. ``recomputeCounters()``: counter columns become the sum of their contributions;
/// 8. the local clock and sequence (``MergeState/saveClock(_:)``), then the origin's cursor
///    and acknowledgement (``PeerCursor/record(_:localSite:_:)``).
///
/// Each step takes what the steps before it found as values (``MergeTables``, ``PeerCursor``,
/// ``KeyTranslation``: read-only once made); what changes as records merge is one
/// ``MergeState``, changed only by its own methods. The caller refreshes the derived indexes of
/// ``Merged/changedKeys`` and ends the merging state.
///
/// Where the steps live: the order here; step 1 in `ChangeSetMerge+Tables.swift`, steps 2
/// and 8 in `ChangeSetMerge+Cursor.swift`, step 3 in `ChangeSetMerge+Checks.swift`, step 4
/// in `ChangeSetMerge+Keys.swift`, step 5 in `ChangeSetMerge+Record.swift`, steps 6 and 7 in
/// `ChangeSetMerge+Finish.swift`.
struct ChangeSetMerge {
    /// What a merge did: its report, and the keys whose table rows changed, per table.
    struct Merged {
        var report: MergeReport
        var changedKeys: [String: [DatabaseValue]]
    }

    let db: Database
    let changeSet: ChangeSet
    let localSite: SiteID
    /// What steps 1, 2 and 4 found: how each of the change set's tables merges here (and the
    /// constraints between them), how far the origin's changes were merged here, the records
    /// with local keys; and whether this replica refuses local writes (it then stamps no
    /// DEFAULT of its own).
    let tables: MergeTables, peer: PeerCursor, keys: KeyTranslation, readOnly: Bool
    /// What changes as records merge.
    var state: MergeState

    /// Merges `changeSet` into `db`, the database of the replica `localSite`.
    static func run(_ db: Database, _ changeSet: ChangeSet, localSite: SiteID, options: Replica.Options) throws
        -> Merged
    {
        let tables = try MergeTables(db, changeSet, localSite: localSite)
        let peer = try PeerCursor(db, origin: changeSet.origin, localSite: localSite)
        if peer.holds(changeSet) {
            return MergeState.alreadyMerged(changeSet, retiredIgnored: tables.retiredIgnored)
        }
        let clock = try checkClocks(db, changeSet, options: options)
        try beginMerging(db)
        var state = MergeState(
            changeSet, clock: clock, sites: try Replica.siteNames(db), retiredIgnored: tables.retiredIgnored)
        let keys = try KeyTranslation(db, changeSet, tables: tables, localSite: localSite, state: &state)
        var merge = ChangeSetMerge(
            db: db, changeSet: changeSet, localSite: localSite, tables: tables, peer: peer, keys: keys,
            readOnly: try Replica.isReadOnly(db), state: state)
        for position in tables.mergeOrder(of: changeSet) {
            try merge.merge(position)
        }
        try merge.deleteOrphans()
        try merge.recomputeCounters()
        try merge.state.saveClock(db)
        merge.state.cursorAdvanced(try peer.record(changeSet, localSite: localSite, db))
        return merge.state.merged
    }

    /// Step 4: silences the capture and index triggers for this transaction, and defers
    /// foreign keys so rows may arrive children first.
    static func beginMerging(_ db: Database) throws {
        try MergingFlag.set(db, true)
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
    }
}
