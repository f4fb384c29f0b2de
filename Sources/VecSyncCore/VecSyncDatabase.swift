import Foundation
import GRDB

/// A GRDB database whose every connection has the VecSync extension: vector functions,
/// `vec0` tables and `vector_top_k`.
///
/// ```swift
/// let db = try VecSyncDatabase(path: "app.db")   // a DatabasePool in WAL mode
/// let messages = try MessageStore(db, dimensions: 1536)
/// try db.read { db in try Vector.fetchAll(db, sql: "SELECT embedding FROM messages") }
/// ```
///
/// The underlying GRDB writer is ``writer``: use it for everything GRDB offers (migrations,
/// observation, async access). Apps that already own a `DatabaseQueue` or `DatabasePool`
/// open it with `Configuration.vecSync()` and wrap it with ``init(_:)``.
public struct VecSyncDatabase: Sendable {
    /// The GRDB database (a `DatabasePool` for files, a `DatabaseQueue` in memory).
    public let writer: any DatabaseWriter

    /// Opens (or creates) the database file at `path` as a GRDB `DatabasePool`.
    ///
    /// `configuration` is extended with ``GRDB/Configuration/enableVecSync()``; pass your own
    /// to set GRDB options such as `readonly` or `maximumReaderCount`. Unless it sets a
    /// `busyMode`, a write waits up to ``defaultBusyTimeout`` for another connection's (the
    /// app's own writes, a sync in another process) instead of failing at once with
    /// "database is locked".
    public init(path: String, configuration: Configuration = Configuration()) throws {
        var configuration = configuration
        if case .immediateError = configuration.busyMode {
            configuration.busyMode = .timeout(Self.defaultBusyTimeout)
        }
        configuration.enableVecSync()
        self.writer = try VecSyncError.wrap { try DatabasePool(path: path, configuration: configuration) }
    }

    /// How long a write to a database file waits for another writer before it fails, when
    /// the configuration does not say (GRDB's default is not to wait).
    public static let defaultBusyTimeout: TimeInterval = 10

    /// Opens a private in-memory database (a GRDB `DatabaseQueue`), for tests and tools.
    public static func inMemory(configuration: Configuration = Configuration()) throws -> VecSyncDatabase {
        var configuration = configuration
        configuration.enableVecSync()
        return try VecSyncDatabase(writer: VecSyncError.wrap { try DatabaseQueue(configuration: configuration) })
    }

    /// Wraps a database the app opened itself, after checking that its connections have the
    /// extension (throws ``VecSyncError/extensionMissing(feature:sql:)`` otherwise).
    public init(_ writer: any DatabaseWriter) throws {
        try writer.read { db in try VecSyncDatabase.checkExtension(db) }
        self.writer = writer
    }

    private init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// Runs `body` in a read-only access to the database.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.read(body)
    }

    /// Runs `body` in a write transaction, committed when it returns and rolled back when it
    /// throws.
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.write(body)
    }

    /// Throws ``VecSyncError/extensionMissing(feature:sql:)`` unless `db` has the extension.
    public static func checkExtension(_ db: Database) throws {
        let sql = "SELECT vecsync_version()"
        do {
            _ = try String.fetchOne(db, sql: sql)
        } catch {
            throw VecSyncError.extensionMissing(feature: "vecsync_version()", sql: sql)
        }
    }
}
