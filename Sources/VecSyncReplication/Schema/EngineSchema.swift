import GRDB
import VecSyncCore

/// The engine's own tables. None of them syncs.
///
/// - `vecsync_replica`: one row — this site, the hybrid logical clock, the local sequence,
///   the read-only role, the floors
///   `cl_floor` and `ra_floor` (the greatest causal length and authority count of a
///   compacted tombstone: rows new to the clock tables start above them, so a key whose
///   tombstone was compacted here and is still held elsewhere comes back), and a
///   wall-clock override for tests.
/// - `vecsync_state(key, value)`: shared with VecSyncCore's `VectorIndex`; the row
///   `('merging', 1)`, present only inside a merge transaction, silences every capture
///   and index trigger.
/// - `vecsync_sites`: local ordinals for site ids (0 is this site), used in clock tables.
/// - `vecsync_tables`: the tracked tables and their definitions (`local_keys`: 1 for an
///   integer key tracked without an authority, whose ids are each replica's own).
/// - `vecsync_ids(tbl, local, origin, oid)`: the identities of rows of tables with local keys
///   that came from elsewhere (see `IdentityMap`).
/// - `vecsync_peers`: per peer, how far its changes were merged (`received`) and how far it
///   has merged ours (`acknowledged`).
/// - `vecsync_published(destination, through)`: per destination (a shared folder), the
///   last local sequence number published there: the push cursor. It lives here, not in
///   the destination's file names, so a stray file cannot make a push skip rows, and a
///   database restored from a backup re-publishes what it may have lost.
/// - `vecsync_quarantine`: rows of change sets that could not be merged here (see
///   `QuarantinedRecord`), each kept as a one-row change set with its reason, in arrival
///   order, until a later merge releases it; `waits_tbl`/`waits_pk` name the row it waits
///   for (a parent row, or its own row's earlier change), so a merge retries it only when
///   that row changes (NULL: retried at every merge).
/// - `vecsync_unchanged(tbl, pk)`: keys an `INSERT OR REPLACE` is about to rewrite with
///   the values they already hold, noted by a BEFORE INSERT trigger so the capture
///   trigger records no change for them.
/// - `vecsync_pending(tbl, pk, col, …)`: values a peer with a wider schema sent for columns
///   this replica does not have yet (its table lacks the column), with the write's
///   incarnation, authority count, version and site; the winning write per row and column
///   is kept, and applied when the column is added here (see `Replica+Schema.swift`).
/// - `vecsync_retired(tbl, col, renamed_to)`: columns dropped (`renamed_to` NULL) or renamed
///   by ``Replica/alter(_:renamingColumns:_:)``, and whole tables dropped by it (`col` empty):
///   incoming values for them are mapped to the new name, or ignored and reported.
/// - `vecsync_suspended(tbl, reason)`: tracked tables found with a schema the engine cannot
///   follow alone; change scans skip them, so when one syncs again all its rows are sent again.
/// - `vecsync_unverified(tbl, reason)`: tracked tables found re-created while capture was off
///   (SQLite's 12-step rebuild outside ``Replica/alter(_:renamingColumns:_:)``) with rows that
///   existed before: values the copy step changed were not recorded. Cleared by
///   ``Replica/restamp(_:columns:)``.
/// - `vecsync_gaps(origin, since, through, reason, noted)`: per origin, the range after its
///   cursor that could not be merged in order (damaged, refused or absent), until it merges
///   (see `SyncGap`); what `vecsync-cli sync` and `Replica.syncStatus()` say they wait for.
/// - `vecsync_sync_log(destination, finished, succeeded, summary, runs, rows_merged,
///   first_caught_up, first_started)`: per destination, how the last sync through it ended,
///   how many ran and merged how many rows, and when the first sync started and finished
///   (caught up), for `Replica.syncStatus()`.
/// - `vecsync_forced_compactions(peer, acknowledged, horizon, compacted)`: per known peer
///   that a forced `compactTombstones(acknowledgedThrough:force:)` passed, what it had
///   acknowledged, the horizon compacted and when: that peer may keep rows deleted here, for
///   good; `Replica.syncStatus()` reports it.
/// - `vecsync_derived_indexes`: created here, owned by VecSyncCore's `DerivedIndexCatalogue`
///   (FTS5 indexes registered with the engine; vec0 indexes are in `vecsync_vector_indexes`).
enum EngineSchema {
    /// Creates the tables when missing and records `site`, or checks it against the stored one.
    static func install(_ db: Database, site: SiteID) throws {
        try DerivedIndexCatalogue.createTables(db)
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(EngineNames.replica) (
                  id INTEGER PRIMARY KEY CHECK (id = 1),
                  site TEXT NOT NULL,
                  hlc INTEGER NOT NULL DEFAULT 0,
                  seq INTEGER NOT NULL DEFAULT 0,
                  read_only INTEGER NOT NULL DEFAULT 0,
                  cl_floor INTEGER NOT NULL DEFAULT 0,
                  ra_floor INTEGER NOT NULL DEFAULT 0,
                  wall_override INTEGER);
                CREATE TABLE IF NOT EXISTS \(EngineNames.sites) (ordinal INTEGER PRIMARY KEY, site TEXT NOT NULL UNIQUE);
                CREATE TABLE IF NOT EXISTS \(EngineNames.tables) (
                  name TEXT PRIMARY KEY,
                  primary_key TEXT NOT NULL,
                  key_kind TEXT NOT NULL,
                  columns TEXT NOT NULL,
                  declared_types TEXT NOT NULL,
                  authority TEXT);
                CREATE TABLE IF NOT EXISTS \(EngineNames.peers) (
                  site TEXT PRIMARY KEY,
                  received INTEGER NOT NULL DEFAULT 0,
                  acknowledged INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE IF NOT EXISTS \(EngineNames.published) (
                  destination TEXT PRIMARY KEY,
                  through INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS \(EngineNames.quarantine) (
                  id INTEGER PRIMARY KEY,
                  origin TEXT NOT NULL,
                  tbl TEXT NOT NULL,
                  pk,
                  reason TEXT NOT NULL,
                  change_set BLOB NOT NULL,
                  waits_tbl TEXT,
                  waits_pk);
                CREATE TABLE IF NOT EXISTS \(EngineNames.pending) (
                  tbl TEXT NOT NULL,
                  pk NOT NULL,
                  col TEXT NOT NULL,
                  ra INTEGER NOT NULL,
                  cl INTEGER NOT NULL,
                  authority INTEGER NOT NULL,
                  version INTEGER NOT NULL,
                  site TEXT NOT NULL,
                  value,
                  PRIMARY KEY (tbl, pk, col)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS \(EngineNames.suspended) (tbl TEXT PRIMARY KEY, reason TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS \(EngineNames.retired) (
                  tbl TEXT NOT NULL,
                  col TEXT NOT NULL,
                  renamed_to TEXT,
                  PRIMARY KEY (tbl, col)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS \(EngineNames.unverified) (tbl TEXT PRIMARY KEY, reason TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS \(EngineNames.gaps) (
                  origin TEXT PRIMARY KEY,
                  since INTEGER NOT NULL,
                  through INTEGER NOT NULL,
                  reason TEXT NOT NULL,
                  noted INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS \(EngineNames.forcedCompactions) (
                  peer TEXT PRIMARY KEY,
                  acknowledged INTEGER NOT NULL,
                  horizon INTEGER NOT NULL,
                  compacted INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS \(EngineNames.syncLog) (
                  destination TEXT PRIMARY KEY,
                  finished INTEGER NOT NULL,
                  succeeded INTEGER NOT NULL,
                  summary TEXT NOT NULL,
                  runs INTEGER NOT NULL DEFAULT 1,
                  rows_merged INTEGER NOT NULL DEFAULT 0,
                  first_caught_up INTEGER,
                  first_started INTEGER);
                """)
        if let stored = try String.fetchOne(db, sql: "SELECT site FROM \(EngineNames.replica) WHERE id = 1") {
            guard stored == site.rawValue else {
                throw VecSyncError.siteMismatch(stored: SiteID(stored), requested: site)
            }
        } else {
            try db.execute(
                sql: "INSERT INTO \(EngineNames.replica) (id, site) VALUES (1, ?)", arguments: [site.rawValue])
            try db.execute(
                sql: "INSERT INTO \(EngineNames.sites) (ordinal, site) VALUES (0, ?)", arguments: [site.rawValue])
        }
        try upgrade(db, site: site)
    }

    /// Brings a database set up by an earlier version to the current layout: authority
    /// counts and per-column change sequence numbers in the clock tables (NULL for the rows
    /// already there, which then travel whole), no `seq` index, current triggers.
    /// A database from before `vecsync_unchanged` gets the table and current triggers; one
    /// from before `vecsync_published` gets an empty table, so its first push to a folder
    /// publishes every change once more (harmless: merges are idempotent).
    ///
    /// Earlier versions also kept a `merging` column in `vecsync_replica`, which their
    /// capture triggers read: such a database gets current triggers (which read the one
    /// flag in `vecsync_state`), and then the column is dropped.
    private static func upgrade(_ db: Database, site: SiteID) throws {
        try addIdentityMap(db)  // first: the steps below read vecsync_tables
        try addUnchangedAndClockColumns(db, site: site)
        try dropMergingColumn(db, site: site)
        try addQuarantineWaits(db)
        try addSyncHistory(db)
    }

    /// The sync log's run count, rows merged and first sync's start and end (for a
    /// database from before them: one run, none merged, first sync unknown until the next
    /// sync that catches up).
    private static func addSyncHistory(_ db: Database) throws {
        let columns = Set(try db.columns(in: EngineNames.syncLog).map(\.name))
        guard !columns.contains("runs") else { return }
        try db.execute(
            sql: """
                ALTER TABLE \(EngineNames.syncLog) ADD COLUMN runs INTEGER NOT NULL DEFAULT 1;
                ALTER TABLE \(EngineNames.syncLog) ADD COLUMN rows_merged INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE \(EngineNames.syncLog) ADD COLUMN first_caught_up INTEGER;
                ALTER TABLE \(EngineNames.syncLog) ADD COLUMN first_started INTEGER;
                """)
    }

    /// `vecsync_ids` and `vecsync_tables.local_keys`. Tables recorded before have 0 there: an
    /// integer key an earlier version tracked without an authority keeps ids the same on every
    /// replica, as then.
    private static func addIdentityMap(_ db: Database) throws {
        try db.execute(sql: IdentityMap.createSQL)
        if try !db.columns(in: EngineNames.tables).contains(where: { $0.name == "local_keys" }) {
            try db.execute(sql: "ALTER TABLE \(EngineNames.tables) ADD COLUMN local_keys INTEGER NOT NULL DEFAULT 0")
        }
    }

    /// The quarantine's `waits_tbl`/`waits_pk` (NULL for rows kept before: retried at every
    /// merge, as then) and its indexes by row, by what a row waits for, and of the rows that
    /// wait for nothing named (a merge reads those alone, not the whole quarantine).
    private static func addQuarantineWaits(_ db: Database) throws {
        if try !db.columns(in: EngineNames.quarantine).contains(where: { $0.name == "waits_tbl" }) {
            try db.execute(sql: "ALTER TABLE \(EngineNames.quarantine) ADD COLUMN waits_tbl TEXT")
            try db.execute(sql: "ALTER TABLE \(EngineNames.quarantine) ADD COLUMN waits_pk")
        }
        try db.execute(
            sql: """
                CREATE INDEX IF NOT EXISTS \(EngineNames.quarantineRowIndex) ON \(EngineNames.quarantine) (tbl, pk);
                CREATE INDEX IF NOT EXISTS \(EngineNames.quarantineWaitsIndex) ON \(EngineNames.quarantine) (waits_tbl, waits_pk)
                  WHERE waits_tbl IS NOT NULL;
                CREATE INDEX IF NOT EXISTS \(EngineNames.quarantineUnnamedIndex) ON \(EngineNames.quarantine) (tbl, pk)
                  WHERE waits_tbl IS NULL;
                """)
    }

    /// `vecsync_unchanged`, `ra_floor` and the clock tables' authority and change columns.
    private static func addUnchangedAndClockColumns(_ db: Database, site: SiteID) throws {
        if try !db.tableExists(EngineNames.unchanged) {
            try db.execute(
                sql:
                    "CREATE TABLE \(EngineNames.unchanged) (tbl TEXT NOT NULL, pk, PRIMARY KEY (tbl, pk)) WITHOUT ROWID"
            )
            if try db.columns(in: EngineNames.replica).contains(where: { $0.name == "ra_floor" }) {
                for table in try Replica.trackedTables(db, checkingSchema: false) {
                    try TriggerSQL(table: table, site: site).install(db)
                }
            }
        }
        guard try !db.columns(in: EngineNames.replica).contains(where: { $0.name == "ra_floor" }) else { return }
        try db.execute(sql: "ALTER TABLE \(EngineNames.replica) ADD COLUMN ra_floor INTEGER NOT NULL DEFAULT 0")
        for table in try Replica.trackedTables(db, checkingSchema: false) {
            let clock = table.clockTable.quotedName
            try db.execute(
                sql: "DROP INDEX IF EXISTS \(EngineNames.clockSequenceIndex(of: table.name).quotedSQLIdentifier)")
            for column in table.clockTable.authorityAndChangeColumns {
                try db.execute(sql: "ALTER TABLE \(clock) ADD COLUMN \(column) INTEGER")
            }
            try TriggerSQL(table: table, site: site).install(db)
        }
    }

    /// Replaces the triggers of a database whose capture triggers read
    /// `vecsync_replica.merging`, then drops the column (SQLite refuses to while a trigger
    /// names it).
    private static func dropMergingColumn(_ db: Database, site: SiteID) throws {
        guard try db.columns(in: EngineNames.replica).contains(where: { $0.name == "merging" }) else { return }
        let readOnly = try Replica.isReadOnly(db)
        for table in try Replica.trackedTables(db, checkingSchema: false) {
            let sql = TriggerSQL(table: table, site: site)
            try sql.install(db)
            try db.execute(sql: TriggerSQL.drop(sql.guardTriggerNames))
            if readOnly { try db.execute(sql: sql.createGuardTriggers(site: site)) }
        }
        try db.execute(sql: "ALTER TABLE \(EngineNames.replica) DROP COLUMN merging")
    }

    /// The site stored in the database, or nil when it was never set up for sync.
    static func storedSite(_ db: Database) throws -> SiteID? {
        guard try db.tableExists(EngineNames.replica) else { return nil }
        return try String.fetchOne(db, sql: "SELECT site FROM \(EngineNames.replica) WHERE id = 1").map { SiteID($0) }
    }
}
