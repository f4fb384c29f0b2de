import GRDB

extension Configuration {
    /// A GRDB configuration whose connections have the VecSync extension, for apps that
    /// keep their own `DatabaseQueue` or `DatabasePool`:
    ///
    /// ```swift
    /// let dbPool = try DatabasePool(path: "app.db", configuration: .vecSync())
    /// let store = try PhotoStore(VecSyncDatabase(dbPool), dimensions: 768)
    /// ```
    public static func vecSync(_ base: Configuration = Configuration()) -> Configuration {
        var configuration = base
        configuration.enableVecSync()
        return configuration
    }

    /// Makes every connection opened with this configuration vector-capable.
    ///
    /// Each connection gets the extension as it opens (``VecSyncExtension/install(on:)``, in
    /// GRDB's `prepareDatabase`), on whatever SQLite GRDB links: Apple's system SQLite
    /// included, which supports neither `sqlite3_auto_extension` nor loading extensions.
    /// Each connection also gets `PRAGMA threads = ` ``VecSyncExtension/helperThreads``, so a
    /// vec0 search of a large table (and SQLite's sorter) runs on every core; a
    /// `prepareDatabase` added after this one can set another value.
    public mutating func enableVecSync() {
        prepareDatabase { db in
            try VecSyncExtension.install(on: db)
            try db.execute(sql: "PRAGMA threads = \(VecSyncExtension.helperThreads)")
        }
    }
}
