import Foundation
import GRDB
import VecSyncCore

/// Everything that changes while one change set merges (``ChangeSetMerge``): the report, the
/// keys whose rows changed, the local clock and sequence number, the site ordinals and the
/// identities reserved. The steps read it freely; only the methods of this file change it,
/// each named for what happened, so what a step may do to the merge's state is written here.
struct MergeState {
    /// What the merge did so far.
    private(set) var report: MergeReport
    /// The keys whose table rows changed, per table.
    private(set) var changedKeys: [String: [DatabaseValue]] = [:]
    /// Whether this merge deleted a row (then orphans are looked for in whole tables, and
    /// rows SQLite deleted by a cascade are recorded; otherwise only the rows it wrote can
    /// lack their parent).
    private(set) var deletedRows = false
    /// Records that created their row here in this merge, by table name and key: a child
    /// whose parent turns out not to be here after all goes back to quarantine.
    private var createdRows: [String: [DatabaseValue: ChangeSet.Record]] = [:]
    /// The local clock as ``ChangeSetMerge/checkClocks(_:_:options:)`` found it, moved up to
    /// every version the change set carries; and the local sequence number, advanced once
    /// per clock row written.
    private var clock: LocalClock
    /// Site ordinals to sites, and back.
    private(set) var sites: [Int64: SiteID]
    private var ordinals: [SiteID: Int64] = [:]
    /// Identities to local ids, when a tracked table has local keys.
    private var identities: IdentityMap.Incoming?

    /// The replica's clock at the start of a merge.
    struct LocalClock {
        /// The greatest version seen: the local clock moves up to it.
        var newest: Int64
        /// The local sequence number.
        var seq: Int64
        /// The wall clock in milliseconds, for the versions of deletes the merge makes.
        let wallMilliseconds: Int64
    }

    /// What the merge counts in its report, as it happens.
    enum Event {
        case inserted, updated, deleted, conflict, ignored
        /// A clock row written: the change travels on to third peers.
        case applied(MergeReport.AcceptedChange)
        case quarantined(QuarantinedRecord)
        /// A value kept for a column this replica does not have yet.
        case kept(table: String, column: String)
        /// A row deleted because its parent was.
        case orphanDeleted(table: String)
    }

    /// The state of a merge of `changeSet` that starts at `clock`, with the sites known here.
    init(_ changeSet: ChangeSet, clock: LocalClock, sites: [Int64: SiteID], retiredIgnored: [String: [String]]) {
        report = MergeReport(origin: changeSet.origin)
        report.records = changeSet.records.count
        report.retiredIgnored = retiredIgnored
        self.clock = clock
        self.sites = sites
        for (ordinal, site) in sites { ordinals[site] = ordinal }
    }

    /// What the merge of a change set the replica holds already reports.
    static func alreadyMerged(_ changeSet: ChangeSet, retiredIgnored: [String: [String]]) -> ChangeSetMerge.Merged {
        var report = MergeReport(origin: changeSet.origin)
        report.records = changeSet.records.count
        report.retiredIgnored = retiredIgnored
        report.alreadyMerged = true
        report.ignored = changeSet.records.count
        return ChangeSetMerge.Merged(report: report, changedKeys: [:])
    }

    /// The report and changed keys, final once the last step ran.
    var merged: ChangeSetMerge.Merged { ChangeSetMerge.Merged(report: report, changedKeys: changedKeys) }

    // MARK: - The report

    mutating func count(_ event: Event) {
        switch event {
        case .inserted: report.inserted += 1
        case .updated: report.updated += 1
        case .deleted: report.deleted += 1
        case .conflict: report.conflicts += 1
        case .ignored: report.ignored += 1
        case .applied(let change):
            report.applied += 1
            report.accepted.append(change)
        case .quarantined(let record): report.quarantined.append(record)
        case .kept(let table, let column):
            if !(report.keptColumns[table]?.contains(column) ?? false) {
                report.keptColumns[table, default: []].append(column)
            }
        case .orphanDeleted(let table):
            report.orphansDeleted[table, default: 0] += 1
            report.deleted += 1
        }
    }

    /// Notes whether the origin's cursor moved (step 7).
    mutating func cursorAdvanced(_ advanced: Bool) {
        report.cursorAdvanced = advanced
    }

    // MARK: - Rows

    /// The row `key` of `table` changed (its derived indexes and counters are refreshed).
    mutating func rowChanged(_ table: String, _ key: DatabaseValue) {
        changedKeys[table, default: []].append(key)
    }

    /// The row `key` of `table` was created here by `record`.
    mutating func rowCreated(_ table: String, _ key: DatabaseValue, by record: ChangeSet.Record) {
        createdRows[table, default: [:]][key] = record
    }

    /// The record that created row `key` of `table` in this merge, if one did.
    func creator(of table: String, _ key: DatabaseValue) -> ChangeSet.Record? {
        createdRows[table]?[key]
    }

    /// A row was deleted: orphans are looked for in whole tables from now on.
    mutating func rowDeleted() {
        deletedRows = true
    }

    /// A row this merge created was taken back (its record goes to quarantine).
    mutating func rowTakenBack(_ table: String, _ key: DatabaseValue) {
        createdRows[table]?[key] = nil
        deletedRows = true
        report.inserted -= 1
        report.applied -= 1
    }

    // MARK: - Clock and sequence

    /// The sequence number of the next clock row written.
    mutating func nextSequence() -> Int64 {
        clock.seq += 1
        return clock.seq
    }

    /// A version for a delete this site makes now: after every version seen, and not before
    /// the wall clock.
    mutating func nextLocalVersion() -> Int64 {
        clock.newest = max(clock.newest + 1, clock.wallMilliseconds << HybridLogicalClock.counterBits)
        return clock.newest
    }

    /// Step 8, first half: the local clock and sequence number, in the merge's transaction.
    func saveClock(_ db: Database) throws {
        try db.execute(
            sql: "UPDATE \(EngineNames.replica) SET hlc = max(hlc, ?), seq = ? WHERE id = 1",
            arguments: [clock.newest, clock.seq])
    }

    // MARK: - Sites and identities

    /// The site of a local ordinal.
    func site(_ ordinal: Int64?) -> SiteID? {
        ordinal.flatMap { sites[$0] }
    }

    /// The local ordinal of `site`, recorded in `vecsync_sites` when new.
    mutating func ordinal(_ site: SiteID, _ db: Database) throws -> Int64 {
        if let known = ordinals[site] { return known }
        try db.execute(sql: "INSERT INTO \(EngineNames.sites) (site) VALUES (?)", arguments: [site.rawValue])
        let new = db.lastInsertedRowID
        ordinals[site] = new
        sites[new] = site
        return new
    }

    /// Starts translating identities with `map`.
    mutating func translateIdentities(with map: IdentityMap.Incoming) {
        identities = map
    }

    /// The local id of the identity `site`, `id` in `table` (see ``IdentityMap/Incoming``):
    /// a new identity gets a new id and an entry in the map.
    mutating func localID(site: SiteID, id: Int64, in table: TrackedTable, localSite: SiteID, _ db: Database) throws
        -> Int64
    {
        guard var map = identities else {
            throw VecSyncError.schemaChanged(table: table.name, reason: "an identity reached a table without local keys")
        }
        let origin = site == localSite ? 0 : try ordinal(site, db)
        let local = try map.localID(site: site, id: id, ordinal: origin, in: table)
        identities = map
        return local
    }
}
