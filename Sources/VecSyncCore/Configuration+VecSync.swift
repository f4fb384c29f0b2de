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
    /// It registers the extension for the whole process (``VecSyncExtension/register()``,
    /// through `sqlite3_auto_extension`) and adds a check, run as each connection opens, that
    /// fails with ``VecSyncError/extensionMissing(feature:sql:)`` if the extension did not
    /// reach it (as when GRDB is linked against another SQLite than the extension). Each
    /// connection also gets `PRAGMA threads = ` ``VecSyncExtension/helperThreads``, so a
    /// vec0 search of a large table (and SQLite's sorter) runs on every core; a
    /// `prepareDatabase` added after this one can set another value.
    public mutating func enableVecSync() {
        VecSyncExtension.register()
        prepareDatabase { db in
            try VecSyncDatabase.checkExtension(db)
            try db.execute(sql: "PRAGMA threads = \(VecSyncExtension.helperThreads)")
        }
    }
}
