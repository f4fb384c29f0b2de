import CVecSync
import Foundation
import GRDBSQLite

/// Registers the VecSync SQLite extension with the SQLite library linked into the process.
///
/// After ``register()``, every connection opened by any SQLite client in the process —
/// GRDB's `DatabaseQueue` and `DatabasePool` included — has the vector functions, the `vec0`
/// module and `vector_top_k`:
///
/// ```swift
/// VecSyncExtension.register()
/// let dbQueue = try DatabaseQueue(path: "app.db")
/// try dbQueue.read { db in
///     try String.fetchOne(db, sql: "SELECT vector_extract(vector32('[1,2]'))")
/// }
/// ```
///
/// It is the same compiled C code the `libvecsync.so` loadable extension carries, handed to
/// `sqlite3_auto_extension`.
public enum VecSyncExtension {
    /// The extension's version, as `vecsync_version()` reports it.
    public static var version: String { String(cString: vecsync_version_string()) }

    /// Makes every SQLite connection opened from now on vector-capable.
    ///
    /// Calling it more than once is harmless: SQLite registers an entry point once.
    /// Connections that are already open are not affected.
    public static func register() {
        _ = registration
    }

    private static let registration: Int32 = sqlite3_auto_extension(vecsync_auto_extension_entry())

    /// The helper threads a statement may start (`PRAGMA threads`) on the connections
    /// ``Configuration/vecSync(_:)`` opens: one for each core after the first, at most 8
    /// (SQLite's limit). A vec0 search of a table of 32,768 rows or more then scans on up to
    /// `1 + helperThreads` threads; stock SQLite's default is 0, one thread.
    public static var helperThreads: Int {
        max(0, min(8, ProcessInfo.processInfo.activeProcessorCount - 1))
    }

    /// The memory, in bytes, the process may spend on the in-memory copies of vec0 tables
    /// that searches scan; `0` (the default) means no limit.
    ///
    /// A table whose vectors would take more keeps only 9 bytes a row in memory (row ids and
    /// liveness) and its searches read the vectors from the database, chunk by chunk:
    /// answers stay exact, searches get slower. It takes effect at each table's next search.
    /// The same setting is `SELECT vecsync_memory_budget(bytes)` in SQL.
    ///
    /// ```swift
    /// VecSyncExtension.memoryBudget = 64 << 20   // a phone: at most 64 MiB of vectors
    /// ```
    public static var memoryBudget: Int64 {
        get { Int64(vecsync_memory_budget(-1)) }
        set { _ = vecsync_memory_budget(max(0, newValue)) }
    }
}
