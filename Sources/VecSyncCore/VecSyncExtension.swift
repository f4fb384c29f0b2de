import CVecSync
import Foundation
import GRDB

/// The VecSync SQLite extension, compiled into the app: vector functions, the `vec0` module
/// and `vector_top_k`, installed on the connections of the SQLite library the app links.
///
/// Connections opened with ``GRDB/Configuration/vecSync(_:)`` or by ``VecSyncDatabase`` have
/// it already. A connection the app opened another way gets it with ``install(on:)``:
///
/// ```swift
/// var configuration = Configuration()
/// configuration.prepareDatabase { db in try VecSyncExtension.install(on: db) }
/// let dbQueue = try DatabaseQueue(path: "app.db", configuration: configuration)
/// try dbQueue.read { db in
///     try String.fetchOne(db, sql: "SELECT vector_extract(vector32('[1,2]'))")
/// }
/// ```
///
/// It is the C code the `libvecsync` loadable extension carries, compiled with `SQLITE_CORE`
/// so that it calls the app's SQLite directly: Apple's system SQLite (which can neither load
/// extensions nor run `sqlite3_auto_extension`), Debian's, SQLCipher or a custom build.
public enum VecSyncExtension {
    /// The extension's version, as `vecsync_version()` reports it.
    public static var version: String { String(cString: vecsync_version_string()) }

    /// Installs the extension on one open connection.
    ///
    /// Installing it again on the same connection does nothing. Throws
    /// ``VecSyncError/extensionInstall(resultCode:reason:)`` when SQLite refuses a function or
    /// module (out of memory, or a connection that is closed).
    public static func install(on db: Database) throws {
        guard let connection = db.sqliteConnection else {
            throw VecSyncError.extensionInstall(resultCode: SQLITE_MISUSE_CODE, reason: "the connection is closed")
        }
        var reason = [CChar](repeating: 0, count: 512)
        let rc = vecsync_install(connection, &reason, Int32(reason.count))
        guard rc == 0 else {
            let text = reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            throw VecSyncError.extensionInstall(resultCode: rc, reason: String(decoding: text, as: UTF8.self))
        }
    }

    /// Asks SQLite to install the extension on every connection the process opens from now
    /// on, GRDB's or not (`sqlite3_auto_extension`), and throws
    /// ``VecSyncError/extensionInstall(resultCode:reason:)`` when it refuses.
    ///
    /// Apple's system SQLite always refuses (SQLITE_MISUSE): on iOS and macOS open
    /// connections with ``GRDB/Configuration/vecSync(_:)`` or ``VecSyncDatabase``, which
    /// install the extension on each connection, or call ``install(on:)``. Those work on
    /// every platform and need no call to `register()`. Calling it more than once is
    /// harmless: SQLite registers an entry point once.
    public static func register() throws {
        let rc = vecsync_register_auto_extension()
        guard rc == 0 else {
            throw VecSyncError.extensionInstall(
                resultCode: rc,
                reason: "this SQLite library does not support process-wide extensions (sqlite3_auto_extension); "
                    + "install the extension on each connection instead: "
                    + "Configuration.vecSync(), VecSyncDatabase or VecSyncExtension.install(on:)")
        }
    }

    /// Undoes ``register()`` (`sqlite3_cancel_auto_extension`), for tests that must not
    /// leave every later connection of the process with the extension.
    static func unregister() {
        vecsync_unregister_auto_extension()
    }

    /// SQLite's SQLITE_MISUSE, without importing SQLite's module (its name depends on how
    /// GRDB is set up: system SQLite, SQLCipher, a custom build).
    private static let SQLITE_MISUSE_CODE: Int32 = 21

    /// What to do about a connection without the extension, on this platform.
    static var installAdvice: String {
        #if canImport(Darwin)
        "open it with Configuration.vecSync() or VecSyncDatabase, or call VecSyncExtension.install(on:) "
            + "on it (Apple's SQLite ignores VecSyncExtension.register() and cannot load extensions)."
        #else
        "open it with Configuration.vecSync() or VecSyncDatabase, or call VecSyncExtension.install(on:) on it."
        #endif
    }

    /// The helper threads a statement may start (`PRAGMA threads`) on the connections
    /// ``GRDB/Configuration/vecSync(_:)`` opens: one for each core after the first, at most 8
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
    /// answers stay exact, searches get slower. A connection's lists of an ivf index
    /// (`indexed by ivf(...)`) are held to it too: the least recently scanned are given back
    /// and read again when a query needs them. It takes effect at each table's next search.
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
