import GRDB
import VecSyncCore

/// Counter columns (``CounterColumns``): how a tracked table's counters sync as PN-counters.
///
/// How it works: each site keeps its own contribution to each counter of each row, in the
/// tracked table `vecsync_counters` (key: `json_array(table, key, column, site)`; only that
/// site ever writes the row, so last-writer-wins never drops a contribution). Triggers on the
/// table make a local write this site's contribution: after a write of value `v`, this
/// site's contribution is `v` less the others' (for an update of a value that was the sum,
/// its old contribution plus the step `new - old`), and the column holds the sum. A merge that
/// changes contributions (or the row) sets the column to the sum of every site's
/// contribution, added in site order, so every replica that has seen the same contributions
/// holds the same value, to the bit.
///
/// The value of a counter is a function of the contributions alone (NULL while no site has
/// contributed), so replicas that have merged the same contributions hold the same value,
/// whatever order the writes and merges came in. A local write of NULL counts as 0 once some
/// site has contributed (a counter nobody has set stays NULL). Contributions outlive their row:
/// a row deleted and created again counts from the value written when it is created.
///
/// Clamping: a site adds what its write actually changed, so an application that clamps
/// (`min(10, k0 + 0.05)`) clamps each site's steps; the merged sum of several sites' steps
/// may still pass the bound, and is read through the same clamp where it matters. (For the
/// same reason a counter column should carry no CHECK constraint: a merged sum that broke
/// it would make the merge fail.)
struct CounterSQL {
    /// The table of contributions.
    static let contributions = EngineNames.counters

    /// The tracked table whose counters these are.
    let table: TrackedTable
    /// Its counter columns.
    let columns: [String]
    /// This site, baked into the triggers.
    let site: SiteID

    /// The trigger names (for ``TriggerSQL/drop(_:)``): insert, a key change, the update of
    /// one column (one per counter column, after the first four); "update" and "delete" are
    /// names earlier versions installed, dropped with the others.
    var triggerNames: [String] {
        ["insert", "update", "delete", "rekey"].map { EngineNames.counterTrigger(of: table.name, $0) }
            + columns.map { EngineNames.counterTrigger(of: table.name, "update_\($0)") }
    }

    static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS \(contributions) (
          id TEXT PRIMARY KEY NOT NULL,
          tbl TEXT NOT NULL,
          pk,
          col TEXT NOT NULL,
          site TEXT NOT NULL,
          value NOT NULL DEFAULT 0);
        CREATE INDEX IF NOT EXISTS \(contributions)_row ON \(contributions) (tbl, pk, col);
        """

    /// The sum of the contributions to `column` of the row whose key is `key` (SQL), added
    /// in site order, so every replica computes it alike, to the bit; `sites` narrows it
    /// (SQL condition on `site`).
    static func sumSQL(table: String, column: String, key: String, sites: String = "1") -> String {
        """
        (SELECT sum(value) FROM (SELECT value FROM \(contributions)
          WHERE tbl = \(table.quotedSQLString) AND pk = \(key) AND col = \(column.quotedSQLString) AND \(sites)
          ORDER BY site))
        """
    }

    /// After a local write of `column`: this site's contribution becomes what makes the sum
    /// equal the written value (the written value less the other sites' contributions; for an
    /// update, the step taken), then the column takes the sum as every replica computes it.
    private func record(_ column: String) -> String {
        let c = column.quotedSQLIdentifier
        let key = "new.\(table.primaryKey.quotedSQLIdentifier)"
        let site = site.rawValue.quotedSQLString
        let others = Self.sumSQL(table: table.name, column: column, key: key, sites: "site <> \(site)")
        let sum = Self.sumSQL(table: table.name, column: column, key: key)
        let anyContribution = """
            EXISTS (SELECT 1 FROM \(Self.contributions) WHERE tbl = \(table.name.quotedSQLString) AND pk = \(key) \
            AND col = \(column.quotedSQLString))
            """
        return """
            INSERT INTO \(Self.contributions) (id, tbl, pk, col, site, value)
              SELECT json_array(\(table.name.quotedSQLString), \(key), \(column.quotedSQLString), \(site)),
                \(table.name.quotedSQLString), \(key), \(column.quotedSQLString), \(site),
                coalesce(new.\(c), 0) - coalesce(\(others), 0)
              WHERE new.\(c) IS NOT NULL OR \(anyContribution)
              ON CONFLICT(id) DO UPDATE SET value = excluded.value;
            UPDATE \(table.name.quotedSQLIdentifier) SET \(c) = \(sum)
              WHERE \(table.primaryKey.quotedSQLIdentifier) = \(key) AND \(c) IS NOT \(sum);
            """
    }

    /// The triggers, silent inside a merge. An `INSERT OR REPLACE` counts as setting the
    /// value, as an update does; so does a change of the row's key (the row at its new key
    /// holds the value it carried there).
    var createTriggersSQL: String {
        let t = table.name.quotedSQLIdentifier
        let key = table.primaryKey.quotedSQLIdentifier
        let names = triggerNames.map(\.quotedSQLIdentifier)
        let quiet = MergingFlag.notMergingCondition
        let updates = columns.map { column -> String in
            let c = column.quotedSQLIdentifier
            return
                "CREATE TRIGGER \(EngineNames.counterTrigger(of: table.name, "update_\(column)").quotedSQLIdentifier) "
                + "AFTER UPDATE OF \(c) ON \(t) WHEN \(quiet) AND new.\(c) IS NOT old.\(c) BEGIN\n\(record(column))\nEND;"
        }
        return """
            CREATE TRIGGER \(names[0]) AFTER INSERT ON \(t) WHEN \(quiet) BEGIN
            \(columns.map(record).joined(separator: "\n"))
            END;
            CREATE TRIGGER \(names[3]) AFTER UPDATE OF \(key) ON \(t) WHEN \(quiet) AND new.\(key) IS NOT old.\(key) BEGIN
            \(columns.map(record).joined(separator: "\n"))
            END;
            \(updates.joined(separator: "\n"))
            """
    }

    /// Gives this site the values of rows already there as its contributions (rows that
    /// have none yet), when the table starts syncing its counters.
    var seedSQL: String {
        let key = table.primaryKey.quotedSQLIdentifier
        return columns.map { column in
            let c = column.quotedSQLIdentifier
            return """
                INSERT OR IGNORE INTO \(Self.contributions) (id, tbl, pk, col, site, value)
                  SELECT json_array(\(table.name.quotedSQLString), \(key), \(column.quotedSQLString), \(site.rawValue.quotedSQLString)),
                    \(table.name.quotedSQLString), \(key), \(column.quotedSQLString), \(site.rawValue.quotedSQLString), \(c)
                  FROM \(table.name.quotedSQLIdentifier) AS r WHERE \(c) IS NOT NULL AND NOT EXISTS
                  (SELECT 1 FROM \(Self.contributions) AS k WHERE k.tbl = \(table.name.quotedSQLString) AND k.pk = r.\(key) AND k.col = \(column.quotedSQLString));
                """
        }.joined(separator: "\n")
    }

    /// Sets each counter of the row `key` of `table` to the sum of its contributions, added
    /// in site order (NULL when no site has contributed). Runs inside a merge.
    static func recompute(_ db: Database, table: TrackedTable, columns: [String], key: DatabaseValue) throws {
        for column in columns where table.columns.contains(column) {
            let sum = sumSQL(table: table.name, column: column, key: "?1")
            try db.execute(
                sql: """
                    UPDATE \(table.name.quotedSQLIdentifier) SET \(column.quotedSQLIdentifier) = \(sum)
                    WHERE \(table.primaryKey.quotedSQLIdentifier) = ?1 AND \(column.quotedSQLIdentifier) IS NOT \(sum)
                    """,
                arguments: [key])
        }
    }
}
