import GRDB
import VecSyncCore

/// The SQL that captures writes to a tracked table: its clock table and its triggers.
///
/// The triggers are plain SQL, with no function from the VecSync extension, so writes from
/// any SQLite client — the `sqlite3` shell without the extension included — are captured.
///
/// How it works: each tracked table `T` has a clock table `vecsync_clock_T` with one row per
/// key: the causal length `cl` (odd while the row exists, even once deleted; a re-insert
/// makes it odd again), the clock and site of the last change of `cl`, the local sequence
/// number `seq` of the row's last change (what `changes(since:)` scans), for each column
/// `i` its version `v<i>` and writer `s<i>` (a local ordinal in `vecsync_sites`, 0 for this
/// site), the authority counts `ra` and `a<i>` (see below), and `q<i>`, the local sequence
/// number at which column `i` last changed here, by a local write or a merge (so a change set
/// after `since` carries only the columns with `q<i> > since`). Each captured write
/// advances the hybrid logical clock kept in `vecsync_replica`:
/// `hlc = max(hlc + 1, now_ms << 16)`, and the sequence `seq + 1`.
///
/// Authority: in a table with an authoritative site, that site's triggers raise the row's
/// `ra` on every insert and delete and a column's `a<i>` on every write to it; other sites
/// carry the counts along unchanged. Merges order a row's incarnations by `(ra, cl)` and a
/// column's writes by `(a<i>, version, site)`, so the authority's writes beat every write
/// made concurrently elsewhere, while a write made after seeing the authority's still wins
/// over it — and every local write moves its row up in that order, which is what keeps
/// replicas convergent. Tables without an authority keep the counts at 0 (NULL).
///
/// The clock table has no index on `seq`: a secondary index there slows every captured
/// write, the more so in large transactions (bench/sync/README.md has the figures);
/// `changes(since:)` sorts the keys it needs instead.
///
/// Keys: the insert trigger, and the trigger of an UPDATE that changes a key, first refuse a
/// key that is NULL or not of the table's kind (a blob bound into a TEXT key), naming the
/// table and the column: such a row would match no row on another replica, or make its
/// change sets unreadable there. In a table with integer keys, only the authoritative site
/// may create keys (it alone assigns them, so two devices never pick the same id); the other
/// sites' triggers refuse inserts and key changes. In a table with local keys every site
/// inserts; the triggers drop a reservation of the id a row takes (see ``IdentityMap``).
///
/// The triggers stay silent inside a merge: while the row `('merging', 1)` of
/// `vecsync_state` exists, which only a merge sets, inside its own transaction, through
/// `MergingFlag.set`. It is the one merging flag: VecSyncCore's index
/// triggers read it too (`MergingFlag.notMergingCondition`). The statements test
/// it in their own WHERE clauses, where SQLite evaluates it once per statement.
struct TriggerSQL {
    /// The table the SQL is for.
    let table: TrackedTable
    /// Whether this replica is the table's authoritative site.
    let isAuthority: Bool

    /// The SQL for `table` on the replica `site`.
    init(table: TrackedTable, site: SiteID) {
        self.table = table
        self.isAuthority = table.authority == site
    }

    private var t: String { table.name.quotedSQLIdentifier }
    private var clock: String { table.clockTable.quotedName }
    private var key: String { table.primaryKey.quotedSQLIdentifier }

    /// `vecsync_<table>_<suffix>`, quoted.
    private func triggerName(_ suffix: String) -> String {
        EngineNames.trigger(of: table.name, suffix).quotedSQLIdentifier
    }

    /// The names of the capture triggers, for dropping them.
    var triggerNames: [String] {
        ["replace_check", "insert", "update", "update_key", "delete"].map { EngineNames.trigger(of: table.name, $0) }
    }

    /// The names of the read-only guard triggers.
    var guardTriggerNames: [String] {
        ["guard_insert", "guard_update", "guard_delete"].map { EngineNames.trigger(of: table.name, $0) }
    }

    /// Advances the clock and the sequence: the first statement of every trigger body.
    static let tick = """
        UPDATE \(EngineNames.replica) SET hlc = max(hlc + 1, coalesce(wall_override, \
        CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)) << 16), seq = seq + 1 WHERE id = 1 AND \(notMerging)
        """

    /// The condition under which every trigger acts: not inside a merge.
    static let notMerging = MergingFlag.notMergingCondition

    /// `v0, s0, v1, s1, …`
    private var versionColumns: String {
        table.columns.indices.map { "\(v($0)), \(w($0))" }.joined(separator: ", ")
    }

    /// `, a0, a1, …`
    private var authorityColumns: String {
        table.columns.indices.map { ", \(a($0))" }.joined()
    }

    /// `, q0, q1, …`
    private var changeColumns: String {
        table.columns.indices.map { ", \(q($0))" }.joined()
    }

    /// The clock table's column names for tracked column `i`: version, writer, authority
    /// count, change number.
    private func v(_ i: Int) -> String { ClockTable.version(i) }
    private func w(_ i: Int) -> String { ClockTable.writer(i) }
    private func a(_ i: Int) -> String { ClockTable.authority(i) }
    private func q(_ i: Int) -> String { ClockTable.changedAt(i) }

    /// SQL that is true when column `index` changed in an UPDATE: by bytes and by type, so a
    /// NOCASE collation or `1` versus `1.0` cannot hide a change.
    private func changed(_ index: Int) -> String {
        let c = table.columns[index].quotedSQLIdentifier
        return "(old.\(c) IS NOT new.\(c) COLLATE BINARY OR typeof(old.\(c)) <> typeof(new.\(c)))"
    }

    /// The `ra` of a clock row this site creates with an insert or delete.
    private var newRowAuthority: String { isAuthority ? "s.ra_floor + 1" : "s.ra_floor" }

    /// The SET clause that raises `ra` on an insert or delete by the authority.
    private var raiseRowAuthority: String { isAuthority ? ", ra = coalesce(ra, 0) + 1" : "" }

    /// `INSERT INTO clock (…) SELECT …` of a clock row whose every column this site wrote
    /// now, as change number `seq` (SQL over `vecsync_replica AS s`): an insert's, or a
    /// backfilled row's. `key` is the row's key; `from` follows `FROM vecsync_replica AS s`.
    private func insertWholeRow(key rowKey: String, seq: String, from: String = "") -> String {
        let columns =
            (table.columns.isEmpty ? "" : ", " + versionColumns) + ", ra" + (isAuthority ? authorityColumns : "")
            + changeColumns
        let values =
            table.columns.indices.map { _ in ", s.hlc, 0" }.joined() + ", \(newRowAuthority)"
            + (isAuthority ? table.columns.indices.map { _ in ", 1" }.joined() : "")
            + table.columns.indices.map { _ in ", \(seq)" }.joined()
        return """
            INSERT INTO \(clock) (pk, cl, cl_version, cl_site, seq\(columns)) \
            SELECT \(rowKey), s.cl_floor + 1, s.hlc, 0, \(seq)\(values) FROM \(EngineNames.replica) AS s\(from)
            """
    }

    /// The clock row for a row that `new` inserts (or resurrects, or replaces).
    private var recordInsert: String {
        "\(insertWholeRow(key: "new.\(key)", seq: "s.seq")) WHERE s.id = 1 AND \(Self.notMerging) \(reviveRow)"
    }

    /// The upsert clause of an insert over an existing clock row: the next odd causal
    /// length, every column written now by this site.
    private var reviveRow: String {
        let updates = table.columns.indices.map { ", \(v($0)) = excluded.\(v($0)), \(w($0)) = 0" }.joined()
        let authorityUpdates =
            isAuthority ? table.columns.indices.map { ", \(a($0)) = coalesce(\(a($0)), 0) + 1" }.joined() : ""
        let changeUpdates = table.columns.indices.map { ", \(q($0)) = excluded.\(q($0))" }.joined()
        return """
            ON CONFLICT(pk) DO UPDATE SET cl = cl + 1 - (cl % 2), cl_version = excluded.cl_version, cl_site = 0, \
            seq = excluded.seq\(updates)\(raiseRowAuthority)\(authorityUpdates)\(changeUpdates)
            """
    }

    /// The condition, over the table row `t`, of a row no live clock row accounts for: one
    /// written while the capture triggers were missing.
    private var uncaptured: String {
        "t.\(key) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(clock) AS c WHERE c.pk = t.\(key) AND c.cl % 2 = 1)"
    }

    /// How many table rows no live clock row accounts for.
    var countUncapturedRows: String { "SELECT count(*) FROM \(t) AS t WHERE \(uncaptured)" }

    /// Records every table row that no live clock row accounts for as inserted by this site
    /// now (after a ``tick``; then the sequence moves past them with ``advanceSequence``):
    /// how tracking is restored after a table was rebuilt without its triggers.
    var recordUncapturedRows: String {
        """
        \(insertWholeRow(key: "t.\(key)", seq: "s.seq + row_number() OVER (ORDER BY t.\(key))", from: ", \(t) AS t")) \
        WHERE s.id = 1 AND \(uncaptured) \(reviveRow)
        """
    }

    /// Moves the sequence past rows numbered after it (bound parameter: how many).
    static let advanceSequence = "UPDATE \(EngineNames.replica) SET seq = seq + ? WHERE id = 1"

    /// Records as this site's writes, made now, the columns that `source` flags: `source` is
    /// a SELECT of `pk` and, per tracked column `i`, a flag `d<i>` (true: the column was
    /// written). Each flagged column of a live row gets what the update trigger would have
    /// given it — a new version, this site as writer, the authority's count raised, a change
    /// number — and each row a sequence number of its own, under one tick of the clock.
    /// Returns how many rows it stamped. What `alter` (values changed in its body) and
    /// `restamp` (every value of chosen columns) record.
    ///
    /// With `atVersionZero`, the columns get version 0 instead, and no authority count: what
    /// a column added to a table with rows records for the DEFAULT those rows took, so that
    /// every real write wins over it and two replicas' defaults are ordered by site.
    func stampColumns(_ db: Database, from source: String, atVersionZero: Bool = false) throws -> Int {
        let stamped = "temp.\(EngineNames.stamped.quotedSQLIdentifier)"
        try db.execute(sql: "DROP TABLE IF EXISTS \(stamped)")
        try db.execute(
            sql: """
                CREATE TABLE \(stamped) AS SELECT f.*, row_number() OVER (ORDER BY f.pk) AS r
                FROM (\(source)) AS f JOIN \(clock) AS c ON c.pk = f.pk AND c.cl % 2 = 1
                """)
        let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(stamped)") ?? 0
        if count > 0 {
            let sets = table.columns.indices.map { (i: Int) -> String in
                let flagged = "ch.d\(i)"
                let authority =
                    isAuthority && !atVersionZero
                    ? ", \(a(i)) = CASE WHEN \(flagged) THEN coalesce(\(clock).\(a(i)), 0) + 1 ELSE \(clock).\(a(i)) END"
                    : ""
                return """
                    \(v(i)) = CASE WHEN \(flagged) THEN \(atVersionZero ? "0" : "s.hlc") ELSE \(clock).\(v(i)) END, \
                    \(w(i)) = CASE WHEN \(flagged) THEN 0 ELSE \(clock).\(w(i)) END\(authority), \
                    \(q(i)) = CASE WHEN \(flagged) THEN s.seq + ch.r ELSE \(clock).\(q(i)) END,
                    """
            }.joined()
            try db.execute(sql: Self.tick)
            try db.execute(
                sql: """
                    UPDATE \(clock) SET \(sets) seq = s.seq + ch.r
                    FROM \(stamped) AS ch, \(EngineNames.replica) AS s WHERE s.id = 1 AND \(clock).pk = ch.pk
                    """)
            try db.execute(sql: Self.advanceSequence, arguments: [count])
        }
        try db.execute(sql: "DROP TABLE \(stamped)")
        return count
    }

    /// Whether the capture triggers are in place: false once the table was dropped and
    /// re-created (SQLite's 12-step rebuild), which drops them, so capture stopped.
    func isCapturing(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ? AND tbl_name = ?",
            arguments: [EngineNames.trigger(of: table.name, "insert"), table.name]) ?? false
    }

    /// The clock row for a row that `old` deleted.
    private var recordDelete: String {
        """
        INSERT INTO \(clock) (pk, cl, cl_version, cl_site, seq, ra) \
        SELECT old.\(key), s.cl_floor + 2, s.hlc, 0, s.seq, \(newRowAuthority) \
        FROM \(EngineNames.replica) AS s WHERE s.id = 1 AND \(Self.notMerging) \
        ON CONFLICT(pk) DO UPDATE SET cl = cl + (cl % 2), cl_version = excluded.cl_version, cl_site = 0, \
        seq = excluded.seq\(raiseRowAuthority)
        """
    }

    /// Whether this site may not create keys at all: integer keys owned by another site.
    /// (A table tracked with integer keys and no authority by an earlier version keeps
    /// its old behaviour: only the key's type is checked.)
    private var refusesNewKeys: Bool { table.keyKind == .integer && table.authority != nil && !isAuthority }

    /// The message a key check raises, as an SQL literal.
    private var keyErrorMessage: String {
        let message: String
        if refusesNewKeys {
            message =
                "vecsync: table \(table.name) takes new keys only from site '\(table.authority?.rawValue ?? "")', "
                + "which assigns its integer keys (column \(table.primaryKey)); insert the row there"
        } else {
            message =
                "vecsync: table \(table.name), key column \(table.primaryKey): a key must be a non-NULL "
                + "\(table.keyKind.storageClass.uppercased()) value to sync; the row was not written"
        }
        return message.quotedSQLString
    }

    /// The statement that refuses a new key `new.<key>` this site may not create: the
    /// first statement of the insert and key-change triggers.
    private var checkNewKey: String {
        let refused = refusesNewKeys ? "1" : "typeof(new.\(key)) <> \(table.keyKind.storageClass.quotedSQLString)"
        return
            "SELECT RAISE(ABORT, \(keyErrorMessage)) FROM \(EngineNames.replica) WHERE id = 1 AND \(Self.notMerging) AND \(refused)"
    }

    /// The condition under which every value of `new` equals the row `o` holds.
    private var sameValues: String {
        (["o.\(key) = new.\(key)"]
            + table.columns.map(\.quotedSQLIdentifier).map {
                "o.\($0) IS new.\($0) COLLATE BINARY AND typeof(o.\($0)) = typeof(new.\($0))"
            }).joined(separator: " AND ")
    }

    /// The BEFORE INSERT trigger that notes in `vecsync_unchanged` a key about to be
    /// rewritten with the values it holds (an `INSERT OR REPLACE` of an unchanged row), and
    /// clears a note left for the key by an insert that did not happen (OR IGNORE, upsert).
    private var replaceCheck: String {
        let name = table.name.quotedSQLString
        return """
            CREATE TRIGGER \(triggerName("replace_check")) BEFORE INSERT ON \(t) BEGIN
              DELETE FROM \(EngineNames.unchanged) WHERE tbl = \(name) AND pk = new.\(key);
              INSERT INTO \(EngineNames.unchanged) (tbl, pk) SELECT \(name), new.\(key) FROM \(t) AS o, \(EngineNames.replica) AS s \
              WHERE s.id = 1 AND \(Self.notMerging) AND \(sameValues);
            END;

            """
    }

    /// True unless the inserted row replaced a live row holding the same values.
    private var insertChangesRow: String {
        """
        NOT EXISTS (SELECT 1 FROM \(EngineNames.unchanged) AS u, \(clock) AS c WHERE u.tbl = \(table.name.quotedSQLString) \
        AND u.pk = new.\(key) AND c.pk = new.\(key) AND c.cl % 2 = 1)
        """
    }

    /// In a table with local keys, the statement that drops a reservation of the id the row
    /// takes (``IdentityMap/releaseReservationSQL(_:)``), with its separator; empty otherwise.
    private var releaseReservation: String {
        table.hasLocalKeys ? "\n  \(IdentityMap.releaseReservationSQL(table));" : ""
    }

    /// The capture triggers. An `INSERT OR REPLACE` that rewrites a row with the values it
    /// holds changes nothing, so it is not captured: a BEFORE INSERT trigger notes the key,
    /// and the insert trigger skips it.
    var createTriggers: String {
        var sql =
            replaceCheck + """
                CREATE TRIGGER \(triggerName("insert")) AFTER INSERT ON \(t) WHEN \(insertChangesRow) BEGIN
                  \(checkNewKey);\(releaseReservation)
                  \(Self.tick);
                  \(recordInsert);
                END;
                CREATE TRIGGER \(triggerName("delete")) AFTER DELETE ON \(t) BEGIN
                  \(Self.tick);
                  \(recordDelete);
                END;
                CREATE TRIGGER \(triggerName("update_key")) AFTER UPDATE ON \(t) \
                WHEN old.\(key) IS NOT new.\(key) BEGIN
                  \(checkNewKey);\(releaseReservation)
                  \(Self.tick);
                  \(recordDelete);
                  \(Self.tick);
                  \(recordInsert);
                END;

                """
        if !table.columns.isEmpty {
            let anyChange = table.columns.indices.map(changed).joined(separator: " OR ")
            let values = table.columns.indices.map {
                ", CASE WHEN \(changed($0)) THEN s.hlc END, CASE WHEN \(changed($0)) THEN 0 END"
            }.joined()
            let updates = table.columns.indices.map {
                ", \(v($0)) = coalesce(excluded.\(v($0)), \(v($0))), \(w($0)) = coalesce(excluded.\(w($0)), \(w($0)))"
            }.joined()
            let authorityValues =
                isAuthority
                ? table.columns.indices.map { ", CASE WHEN \(changed($0)) THEN 1 END" }.joined() : ""
            let authorityUpdates =
                isAuthority
                ? table.columns.indices.map {
                    ", \(a($0)) = CASE WHEN excluded.\(v($0)) IS NULL THEN \(a($0)) ELSE coalesce(\(a($0)), 0) + 1 END"
                }.joined()
                : ""
            // A row with no clock row yet travels whole; otherwise the changed columns (those
            // given a version) take this sequence number.
            let changeValues = table.columns.indices.map { _ in ", s.seq" }.joined()
            let changeUpdates = table.columns.indices.map {
                ", \(q($0)) = CASE WHEN excluded.\(v($0)) IS NULL THEN \(q($0)) ELSE excluded.seq END"
            }.joined()
            sql += """
                CREATE TRIGGER \(triggerName("update")) AFTER UPDATE ON \(t) \
                WHEN old.\(key) IS new.\(key) AND (\(anyChange)) BEGIN
                  \(Self.tick);
                  INSERT INTO \(clock) (pk, cl, cl_version, cl_site, seq, \(versionColumns), ra\(isAuthority ? authorityColumns : "")\(changeColumns)) \
                  SELECT new.\(key), s.cl_floor + 1, s.hlc, 0, s.seq\(values), \(newRowAuthority)\(authorityValues)\(changeValues) \
                  FROM \(EngineNames.replica) AS s WHERE s.id = 1 AND \(Self.notMerging) \
                  ON CONFLICT(pk) DO UPDATE SET seq = excluded.seq\(updates)\(authorityUpdates)\(changeUpdates);
                END;

                """
        }
        return sql
    }

    /// Gives every existing row a clock entry, as if this site had just inserted it.
    var backfill: String {
        """
        \(Self.tick);
        \(insertWholeRow(key: "t.\(key)", seq: "s.seq + row_number() OVER (ORDER BY t.\(key))", from: ", \(t) AS t")) \
        WHERE s.id = 1 AND t.\(key) IS NOT NULL;
        UPDATE \(EngineNames.replica) SET seq = seq + (SELECT count(*) FROM \(t) WHERE \(key) IS NOT NULL) WHERE id = 1;
        """
    }

    /// Marks deleted the clock row of a key whose table row vanished without a trigger
    /// seeing it (bound parameter: the key), after a ``tick``.
    var recordMissingDelete: String {
        """
        UPDATE \(clock) SET cl = cl + 1, cl_site = 0\(raiseRowAuthority), \
        cl_version = (SELECT hlc FROM \(EngineNames.replica) WHERE id = 1), \
        seq = (SELECT seq FROM \(EngineNames.replica) WHERE id = 1) WHERE pk = ?
        """
    }

    /// Guard triggers that refuse local writes on a read-only replica.
    func createGuardTriggers(site: SiteID) -> String {
        let message =
            "vecsync: table \(table.name) is read-only on replica '\(site.rawValue)'; its rows change only by sync"
        let literal = message.quotedSQLString
        return ["INSERT", "UPDATE", "DELETE"].map { operation in
            """
            CREATE TRIGGER IF NOT EXISTS \(triggerName("guard_" + operation.lowercased())) BEFORE \(operation) ON \(t) \
            WHEN \(Self.notMerging) BEGIN SELECT RAISE(ABORT, \(literal)); END;

            """
        }.joined()
    }

    /// Creates the capture triggers, replacing earlier ones.
    func install(_ db: Database) throws {
        try db.execute(sql: Self.drop(triggerNames))
        try db.execute(sql: createTriggers)
    }

    /// Drops triggers by name.
    static func drop(_ names: [String]) -> String {
        names.map { "DROP TRIGGER IF EXISTS \($0.quotedSQLIdentifier);" }.joined(separator: "\n")
    }
}
