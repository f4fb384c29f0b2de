import GRDB

/// The SQL that captures writes to a tracked table: its clock table and its triggers.
///
/// The triggers are plain SQL, with no function from the VecSync extension, so writes from
/// any SQLite client — the `sqlite3` shell without the extension included — are captured.
///
/// How it works: each tracked table `T` has a clock table `vecsync_clock_T` with one row per
/// key: the causal length `cl` (odd while the row exists, even once deleted; a re-insert
/// makes it odd again), the clock and site of the last change of `cl`, the local sequence
/// number `seq` of the row's last change (what `changes(since:)` scans), and for each
/// column `i` its version `v<i>` and writer `s<i>` (a local ordinal in `vecsync_sites`,
/// 0 for this site). Each captured write advances the hybrid logical clock kept in
/// `vecsync_replica`: `hlc = max(hlc + 1, now_ms << 16)`, and the sequence `seq + 1`.
/// The triggers stay silent while `vecsync_replica.merging` is 1, which only a merge sets,
/// inside its own transaction (together with the row `('merging', 1)` of `vecsync_state`
/// that VecSyncCore's index triggers check). The flag is read by the statements' own WHERE
/// clauses rather than a WHEN subquery: one lookup per captured row instead of two.
struct TriggerSQL {
    /// The table the SQL is for.
    let table: TrackedTable

    private var t: String { table.name.quotedDatabaseIdentifier }
    private var clock: String { table.clockTable.quotedDatabaseIdentifier }
    private var key: String { table.primaryKey.quotedDatabaseIdentifier }

    /// `vecsync_<table>_<suffix>`, quoted.
    private func triggerName(_ suffix: String) -> String {
        "vecsync_\(table.name)_\(suffix)".quotedDatabaseIdentifier
    }

    /// The names of the capture triggers, for dropping them.
    var triggerNames: [String] {
        ["insert", "update", "update_key", "delete"].map { "vecsync_\(table.name)_\($0)" }
    }

    /// The names of the read-only guard triggers.
    var guardTriggerNames: [String] {
        ["guard_insert", "guard_update", "guard_delete"].map { "vecsync_\(table.name)_\($0)" }
    }

    /// Advances the clock and the sequence: the first statement of every trigger body.
    static let tick = """
        UPDATE vecsync_replica SET hlc = max(hlc + 1, coalesce(wall_override, \
        CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)) << 16), seq = seq + 1 WHERE id = 1 AND merging = 0
        """

    /// The condition under which guard triggers run: not inside a merge.
    static let notMerging = "(SELECT merging FROM vecsync_replica WHERE id = 1) = 0"

    /// `v0, s0, v1, s1, …`
    private var versionColumns: String {
        table.columns.indices.map { "v\($0), s\($0)" }.joined(separator: ", ")
    }

    /// The clock table and its sequence index.
    var createClockTable: String {
        let keyType = table.keyKind == .integer ? "INTEGER PRIMARY KEY" : "TEXT PRIMARY KEY NOT NULL"
        let perColumn = table.columns.indices.map { ", v\($0) INTEGER, s\($0) INTEGER" }.joined()
        let rowid = table.keyKind == .integer ? "" : " WITHOUT ROWID"
        return """
            CREATE TABLE \(clock) (pk \(keyType), cl INTEGER NOT NULL, cl_version INTEGER NOT NULL, \
            cl_site INTEGER NOT NULL, seq INTEGER NOT NULL\(perColumn))\(rowid);
            CREATE INDEX \("vecsync_clock_\(table.name)_seq".quotedDatabaseIdentifier) ON \(clock)(seq);
            """
    }

    /// Drops the clock table (and with it its index).
    var dropClockTable: String { "DROP TABLE IF EXISTS \(clock)" }

    /// SQL that is true when column `index` changed in an UPDATE: by bytes and by type, so a
    /// NOCASE collation or `1` versus `1.0` cannot hide a change.
    private func changed(_ index: Int) -> String {
        let c = table.columns[index].quotedDatabaseIdentifier
        return "(old.\(c) IS NOT new.\(c) COLLATE BINARY OR typeof(old.\(c)) <> typeof(new.\(c)))"
    }

    /// The clock row for a row that `new` inserts (or resurrects, or replaces).
    private var recordInsert: String {
        let values = table.columns.indices.map { _ in ", s.hlc, 0" }.joined()
        let updates = table.columns.indices.map { ", v\($0) = excluded.v\($0), s\($0) = 0" }.joined()
        return """
            INSERT INTO \(clock) (pk, cl, cl_version, cl_site, seq\(table.columns.isEmpty ? "" : ", " + versionColumns)) \
            SELECT new.\(key), s.cl_floor + 1, s.hlc, 0, s.seq\(values) FROM vecsync_replica AS s WHERE s.id = 1 AND s.merging = 0 \
            ON CONFLICT(pk) DO UPDATE SET cl = cl + 1 - (cl % 2), cl_version = excluded.cl_version, cl_site = 0, \
            seq = excluded.seq\(updates)
            """
    }

    /// The clock row for a row that `old` deleted.
    private var recordDelete: String {
        """
        INSERT INTO \(clock) (pk, cl, cl_version, cl_site, seq) \
        SELECT old.\(key), s.cl_floor + 2, s.hlc, 0, s.seq FROM vecsync_replica AS s WHERE s.id = 1 AND s.merging = 0 \
        ON CONFLICT(pk) DO UPDATE SET cl = cl + (cl % 2), cl_version = excluded.cl_version, cl_site = 0, \
        seq = excluded.seq
        """
    }

    /// The capture triggers.
    var createTriggers: String {
        var sql = """
            CREATE TRIGGER \(triggerName("insert")) AFTER INSERT ON \(t) BEGIN
              \(Self.tick);
              \(recordInsert);
            END;
            CREATE TRIGGER \(triggerName("delete")) AFTER DELETE ON \(t) BEGIN
              \(Self.tick);
              \(recordDelete);
            END;
            CREATE TRIGGER \(triggerName("update_key")) AFTER UPDATE ON \(t) \
            WHEN old.\(key) IS NOT new.\(key) BEGIN
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
                ", v\($0) = coalesce(excluded.v\($0), v\($0)), s\($0) = coalesce(excluded.s\($0), s\($0))"
            }.joined()
            sql += """
                CREATE TRIGGER \(triggerName("update")) AFTER UPDATE ON \(t) \
                WHEN old.\(key) IS new.\(key) AND (\(anyChange)) BEGIN
                  \(Self.tick);
                  INSERT INTO \(clock) (pk, cl, cl_version, cl_site, seq, \(versionColumns)) \
                  SELECT new.\(key), s.cl_floor + 1, s.hlc, 0, s.seq\(values) FROM vecsync_replica AS s WHERE s.id = 1 AND s.merging = 0 \
                  ON CONFLICT(pk) DO UPDATE SET seq = excluded.seq\(updates);
                END;

                """
        }
        return sql
    }

    /// Gives every existing row a clock entry, as if this site had just inserted it.
    var backfill: String {
        let values = table.columns.indices.map { _ in ", s.hlc, 0" }.joined()
        return """
            \(Self.tick);
            INSERT INTO \(clock) (pk, cl, cl_version, cl_site, seq\(table.columns.isEmpty ? "" : ", " + versionColumns)) \
            SELECT t.\(key), s.cl_floor + 1, s.hlc, 0, s.seq + row_number() OVER (ORDER BY t.\(key))\(values) \
            FROM \(t) AS t, vecsync_replica AS s WHERE s.id = 1 AND t.\(key) IS NOT NULL;
            UPDATE vecsync_replica SET seq = seq + (SELECT count(*) FROM \(t) WHERE \(key) IS NOT NULL) WHERE id = 1;
            """
    }

    /// Guard triggers that refuse local writes on a read-only replica.
    func createGuardTriggers(site: SiteID) -> String {
        let message = "vecsync: table \(table.name) is read-only on replica '\(site.rawValue)'; its rows change only by sync"
        let literal = "'" + message.replacingOccurrences(of: "'", with: "''") + "'"
        return ["INSERT", "UPDATE", "DELETE"].map { operation in
            """
            CREATE TRIGGER IF NOT EXISTS \(triggerName("guard_" + operation.lowercased())) BEFORE \(operation) ON \(t) \
            WHEN \(Self.notMerging) BEGIN SELECT RAISE(ABORT, \(literal)); END;

            """
        }.joined()
    }

    /// Drops triggers by name.
    static func drop(_ names: [String]) -> String {
        names.map { "DROP TRIGGER IF EXISTS \($0.quotedDatabaseIdentifier);" }.joined(separator: "\n")
    }
}
