import Foundation
import GRDB
import VecSyncCore

/// Merges one change set into a replica's database, inside the caller's transaction.
///
/// How it works, in named steps (``run()``):
/// 1. ``matchTables()``: local schema changes are adopted, and each table of the change set is
///    matched with the local one — by position when the definitions are equal, by column
///    name (``mapping(from:to:retired:)``) when they differ; a table that cannot merge here
///    has its records quarantined, and the others go on;
/// 2. ``readCursor()``: a change set behind the origin's cursor was merged before;
/// 3. ``checkClocks()``: no version comes from a clock too far in the future (nothing is
///    written before these checks pass);
/// 4. ``beginMerging()``: the capture and index triggers fall silent;
///    ``translateKeys()``: the keys of tables with local keys, which travel as identities,
///    become local ids (``IdentityMap``); the values of foreign keys that refer to such
///    tables are translated with each record (``translateValues(_:table:)``);
/// 5. for each record (``merge(_:)``): read the local ``ClockRow``, decide the row's
///    incarnation (``decideIncarnation(_:local:)``), merge its columns
///    (``mergeColumns(_:table:into:)``), check what will be written (``refusal(_:columns:)``),
///    write the table row (``writeRow(_:local:outcome:)``) and the clock row
///    (``writeClock(_:table:)``). A row that cannot be merged here is quarantined
///    (``quarantine(_:reason:)``) and the others go on;
/// 6. ``deleteOrphans()``: rows whose parent row (a foreign key between tracked tables) was
///    deleted follow it, as local deletes;
/// 7. ``recordCursor()``: the clock, sequence, cursor and acknowledgement.
///
/// The caller refreshes the derived indexes of ``changedKeys`` and ends the merging state.
///
/// Where the steps live: ``run()`` and the merge order here; steps 1–4 in
/// `ChangeSetMerge+Checks.swift`, step 5 in `ChangeSetMerge+Record.swift`, steps 6–7 in
/// `ChangeSetMerge+Finish.swift`.
struct ChangeSetMerge {
    /// How an incoming record's incarnation compares with the local one.
    enum Incarnation {
        case newer, same, older
    }

    let db: Database
    let changeSet: ChangeSet
    let localSite: SiteID
    let options: Replica.Options
    /// What the merge did so far.
    var report: MergeReport
    /// The keys whose table rows changed, per table.
    var changedKeys: [String: [DatabaseValue]] = [:]

    /// The statements of each of the change set's tables that merge here (nil for the others).
    var statements: [TableStatements?] = []
    /// How each of the change set's tables merges here.
    var matches: [TableMatch] = []
    /// Statements of tracked tables the change set does not name, made when an orphan is deleted.
    var otherStatements: [String: TableStatements] = [:]
    /// Every tracked table, by lower-cased name.
    var trackedTables: [String: TrackedTable] = [:]
    /// Foreign keys between tracked tables, by child table name; empty when SQLite does not
    /// enforce foreign keys on this connection.
    var foreignKeys: [String: [TrackedForeignKey]] = [:]
    /// The vec0 indexes of each table: the embedding column's index and the index.
    var vectorColumns: [String: [(column: Int, index: VectorIndex)]] = [:]
    /// Keys of live rows in the change set, by table name: parents that arrive with their children.
    var liveKeys: [String: Set<DatabaseValue>] = [:]
    /// The change set's records with local keys (``translateKeys()``), by position; a record
    /// whose key cannot be translated keeps its own, and ``untranslatable`` says why.
    var records: [ChangeSet.Record] = []
    /// Why a record's key has no local id here, by position.
    var untranslatable: [Int: String] = [:]
    /// Identities to local ids, when a tracked table has local keys.
    var identities: IdentityMap.Incoming?
    /// Foreign keys of tracked tables whose parent has local keys, by child table name.
    var identityLinks: [String: [TrackedForeignKey]] = [:]
    /// Whether this merge deleted a row (then orphans are looked for in whole tables, and
    /// rows SQLite deleted by a cascade are recorded; otherwise only the rows it wrote can
    /// lack their parent).
    var deletedRows = false
    /// Records that created their row here in this merge, by table name and key: a child
    /// whose parent turns out not to be here after all goes back to quarantine.
    var createdRows: [String: [DatabaseValue: ChangeSet.Record]] = [:]
    /// The wall clock in milliseconds, for the versions of deletes this merge makes.
    var wallMilliseconds: Int64 = 0
    var sites: [Int64: SiteID] = [:]
    var ordinals: [SiteID: Int64] = [:]
    /// The origin's cursor here: how far its changes were merged, and how far it merged ours.
    var received: Int64 = 0
    var acknowledged: Int64 = 0
    var hasPeer = false
    /// Whether this replica refuses local writes (it then stamps no DEFAULT of its own).
    var readOnly = false
    /// The local sequence number, advanced once per clock row written.
    var seq: Int64 = 0
    /// The greatest version seen: the local clock moves up to it.
    var newest: Int64 = 0

    /// A merge of `changeSet` into `db` on the replica `localSite`.
    init(_ db: Database, _ changeSet: ChangeSet, localSite: SiteID, options: Replica.Options) {
        self.db = db
        self.changeSet = changeSet
        self.localSite = localSite
        self.options = options
        report = MergeReport(origin: changeSet.origin)
        report.records = changeSet.records.count
    }

    /// Runs every step; the report and changed keys are then final.
    mutating func run() throws {
        try matchTables()
        if try readCursor() == .merged { return }
        try checkClocks()
        try beginMerging()
        try translateKeys()
        for index in recordsInMergeOrder() {
            try merge(index)
        }
        try deleteOrphans()
        try recomputeCounters()
        try recordCursor()
    }

    /// The change set's records with parents before children: by the depth of their table
    /// in the graph of foreign keys between tracked tables (``TrackedForeignKey``), in the
    /// change set's order within one depth. A change set whose tables are not related keeps
    /// its order. Returns the records' positions.
    func recordsInMergeOrder() -> [Int] {
        let inOrder = Array(changeSet.records.indices)
        guard !foreignKeys.isEmpty, changeSet.tables.count > 1 else { return inOrder }
        let depths = TrackedForeignKey.depths(of: Array(foreignKeys.keys), links: foreignKeys)
        let tableDepth = changeSet.tables.map { table in
            trackedTables[table.name.lowercased()].flatMap { depths[$0.name] } ?? 0
        }
        guard Set(tableDepth).count > 1 else { return inOrder }
        return changeSet.records.enumerated().sorted { a, b in
            let da = tableDepth.indices.contains(a.element.table) ? tableDepth[a.element.table] : 0
            let db = tableDepth.indices.contains(b.element.table) ? tableDepth[b.element.table] : 0
            return da != db ? da < db : a.offset < b.offset
        }.map(\.offset)
    }
}
