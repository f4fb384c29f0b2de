import GRDB

/// The columns an application declares as counters: columns that sync by adding up what each
/// device added (a PN-counter), not by last writer wins.
///
/// A store declares them with its schema (`MessageStore` declares a thread's `k0`, `alpha`
/// and `m`, which every approval moves by a step); the replication engine reads the
/// declaration when the table is tracked. The declaration lives in
/// `vecsync_counter_columns(tbl, col)`, beside the application's tables, and does not change
/// them.
///
/// ```swift
/// try CounterColumns.declare(db, table: "threads", columns: ["k0", "alpha", "m"])
/// ```
public enum CounterColumns {
    /// The table holding the declarations.
    public static let table = "vecsync_counter_columns"

    /// Records `columns` of `table` as counters (declaring one twice is harmless).
    public static func declare(_ db: Database, table: String, columns: [String]) throws {
        try db.execute(
            sql:
                "CREATE TABLE IF NOT EXISTS \(Self.table) (tbl TEXT NOT NULL, col TEXT NOT NULL, PRIMARY KEY (tbl, col)) WITHOUT ROWID"
        )
        for column in columns {
            try db.execute(
                sql: "INSERT OR IGNORE INTO \(Self.table) (tbl, col) VALUES (?, ?)", arguments: [table, column])
        }
    }

    /// The counter columns declared for `table`, in name order (none when nothing was declared).
    public static func declared(_ db: Database, table: String) throws -> [String] {
        guard try db.tableExists(Self.table) else { return [] }
        return try String.fetchAll(
            db, sql: "SELECT col FROM \(Self.table) WHERE tbl = ? COLLATE NOCASE ORDER BY col", arguments: [table])
    }
}
