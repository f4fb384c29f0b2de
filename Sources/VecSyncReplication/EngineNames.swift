import VecSyncCore

/// Every name the sync engine gives to what it creates in a database: its tables, their
/// indexes, each tracked table's clock table and triggers. The SQL of the engine spells them
/// through these constants, so a name is written once (what each table holds is described
/// in `EngineSchema.swift`). Tests may spell them out in the SQL they state.
enum EngineNames {
    /// The prefix of every name the engine creates.
    static let prefix = "vecsync_"

    // MARK: Tables

    /// One row: this site, the clock, the local sequence, the role, the floors.
    static let replica = "vecsync_replica"
    /// Local ordinals for site ids (0 is this site).
    static let sites = "vecsync_sites"
    /// The tracked tables and their definitions.
    static let tables = "vecsync_tables"
    /// The identities of rows of tables with local keys that came from elsewhere.
    static let ids = "vecsync_ids"
    /// Per peer, how far its changes were merged and how far it merged ours.
    static let peers = "vecsync_peers"
    /// Cursors of the transports (``SyncCursor``), by stored name.
    static let published = "vecsync_published"
    /// Rows of change sets that could not be merged here (``Quarantine``).
    static let quarantine = "vecsync_quarantine"
    /// Keys an `INSERT OR REPLACE` is about to rewrite with the values they already hold.
    static let unchanged = "vecsync_unchanged"
    /// Values for columns this replica does not have yet.
    static let pending = "vecsync_pending"
    /// Columns and tables dropped or renamed by `Replica.alter`.
    static let retired = "vecsync_retired"
    /// Tracked tables whose schema the engine cannot follow alone.
    static let suspended = "vecsync_suspended"
    /// Tracked tables re-created while capture was off.
    static let unverified = "vecsync_unverified"
    /// Per origin, the range it waits for (``SyncGap``).
    static let gaps = "vecsync_gaps"
    /// Per destination, how the last sync through it ended.
    static let syncLog = "vecsync_sync_log"
    /// Peers a forced compaction passed.
    static let forcedCompactions = "vecsync_forced_compactions"
    /// Each site's contributions to counter columns (a tracked table).
    static let counters = "vecsync_counters"
    /// VecSyncCore's key-value table, shared with the engine (the merging flag, the
    /// quarantine's last retry).
    static let state = VectorIndex.stateTable
    /// The TEMP table holding a table's rows before an `alter` body runs.
    static let alterBefore = "vecsync_alter_before"
    /// The TEMP table of the keys a re-stamp wrote.
    static let stamped = "vecsync_stamped"

    // MARK: Indexes

    /// `vecsync_ids (tbl, origin, oid)`: one local id per identity.
    static let idsIdentityIndex = "vecsync_ids_identity"
    /// `vecsync_quarantine (tbl, pk)`.
    static let quarantineRowIndex = "vecsync_quarantine_row"
    /// `vecsync_quarantine (waits_tbl, waits_pk)`.
    static let quarantineWaitsIndex = "vecsync_quarantine_waits"
    /// An index of `vecsync_quarantine` that older versions made.
    static let quarantineUnnamedIndex = "vecsync_quarantine_unnamed"

    // MARK: Per tracked table

    /// The clock table of `table`: `vecsync_clock_<table>`.
    static func clockTable(of table: String) -> String {
        "\(prefix)clock_\(table)"
    }

    /// The index on the sequence column that older versions made on `table`'s clock table.
    static func clockSequenceIndex(of table: String) -> String {
        "\(clockTable(of: table))_seq"
    }

    /// A capture or guard trigger of `table`: `vecsync_<table>_<suffix>`.
    static func trigger(of table: String, _ suffix: String) -> String {
        "\(prefix)\(table)_\(suffix)"
    }

    /// A counter trigger of `table`: `vecsync_<table>_count_<suffix>`.
    static func counterTrigger(of table: String, _ suffix: String) -> String {
        trigger(of: table, "count_\(suffix)")
    }

    /// The renamed copy of `table` an `alter` rebuild reads from: `vecsync_alter_<table>`.
    static func alterCopy(of table: String) -> String {
        "\(prefix)alter_\(table)"
    }
}
