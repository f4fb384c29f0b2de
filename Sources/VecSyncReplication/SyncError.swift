import Foundation
import GRDB

/// What went wrong while tracking, exchanging or merging changes, with what a person needs
/// to act on it: the table, the site, the offending value, the SQL and SQLite's message.
public enum SyncError: Error, Sendable, Hashable {
    /// The table cannot be tracked safely; `reason` says why and what to change.
    case untrackableTable(table: String, reason: String)
    /// The operation names a table that is not tracked on this replica.
    case tableNotTracked(table: String)
    /// A tracked table's columns changed since it was tracked (an `ALTER TABLE`).
    case schemaChanged(table: String, reason: String)
    /// The database was set up for another site id than the one asked for.
    case siteMismatch(stored: SiteID, requested: SiteID)
    /// The database has no replication state yet (it was never tracked).
    case notAReplica(reason: String)
    /// A change set's bytes are damaged or cut short; nothing was applied.
    case corruptChangeSet(reason: String, offset: Int)
    /// A change set was written in a format version this build cannot read.
    case incompatibleFormat(found: UInt16, supported: UInt16)
    /// A change set was made from a different definition of a table (columns, key, types
    /// or authority differ), so it cannot be merged column by column.
    case schemaMismatch(table: String, local: String, remote: String)
    /// A change set carries clock values further in the future than the allowed drift.
    case clockTooFarAhead(site: SiteID, version: HybridLogicalClock, now: HybridLogicalClock, allowedDriftMilliseconds: Int64)
    /// A change set carries only the changed columns of a row this replica does not have in
    /// that incarnation: it was made for a receiver that had merged the origin's earlier
    /// change sets, and this one has merged them only through `received`. Nothing was
    /// applied; merge the origin's change sets in order.
    case missingEarlierChanges(origin: SiteID, since: Int64, received: Int64)
    /// A change set was made by this very site: merging it back is refused.
    case ownChangeSet(site: SiteID)
    /// The operation needs a replica that may write, and this one is read-only.
    case readOnlyReplica(site: SiteID, operation: String)
    /// An argument is out of range.
    case invalidArgument(name: String, value: String, reason: String)
    /// A derived index is not registered, or its definition is unusable.
    case derivedIndex(name: String, reason: String)
    /// A file could not be read or written.
    case io(path: String, reason: String)
    /// SQLite refused a statement: its message, extended result code and the SQL.
    case sqlite(message: String, resultCode: Int32, sql: String?)

    /// Converts GRDB's `DatabaseError` into ``sqlite(message:resultCode:sql:)``; other
    /// errors pass through.
    static func wrapping(_ error: any Error) -> any Error {
        guard let dbError = error as? DatabaseError else { return error }
        return SyncError.sqlite(
            message: dbError.message ?? "\(dbError.resultCode)",
            resultCode: dbError.extendedResultCode.rawValue,
            sql: dbError.sql)
    }

    /// Runs `body`, converting GRDB errors with ``wrapping(_:)``.
    static func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw wrapping(error)
        }
    }
}

extension SyncError: CustomStringConvertible, LocalizedError {
    /// A sentence that says what went wrong and with which input.
    public var description: String {
        switch self {
        case let .untrackableTable(table, reason):
            "cannot track table \(table): \(reason)"
        case let .tableNotTracked(table):
            "table \(table) is not tracked on this replica; track it first (vecsync-cli track --table \(table))"
        case let .schemaChanged(table, reason):
            "tracked table \(table) changed since it was tracked: \(reason); untrack and track it again on every replica"
        case let .siteMismatch(stored, requested):
            "this database belongs to site '\(stored)', not '\(requested)'; a database keeps the site id it was first given"
        case let .notAReplica(reason):
            "not a replica: \(reason)"
        case let .corruptChangeSet(reason, offset):
            "corrupt change set at byte \(offset): \(reason); nothing was applied"
        case let .incompatibleFormat(found, supported):
            "change set format version \(found) is not supported (this build reads versions up to \(supported)); upgrade the replica that cannot read it"
        case let .schemaMismatch(table, local, remote):
            "change set for table \(table) was made from another schema (local \(local); remote \(remote)); nothing was applied"
        case let .clockTooFarAhead(site, version, now, drift):
            "site '\(site)' sent clock \(version), more than \(drift) ms ahead of this replica's clock \(now); fix that device's clock, nothing was applied"
        case let .missingEarlierChanges(origin, since, received):
            "change set from '\(origin)' after its sequence \(since) needs its earlier changes, and this replica has merged them only through \(received); merge '\(origin)''s change sets in order (nothing was applied)"
        case let .ownChangeSet(site):
            "change set was made by this site ('\(site)'); it is not merged back"
        case let .readOnlyReplica(site, operation):
            "replica '\(site)' is read-only: cannot \(operation)"
        case let .invalidArgument(name, value, reason):
            "invalid \(name) '\(value)': \(reason)"
        case let .derivedIndex(name, reason):
            "derived index \(name): \(reason)"
        case let .io(path, reason):
            "\(path): \(reason)"
        case let .sqlite(message, resultCode, sql):
            "SQLite error \(resultCode): \(message)" + (sql.map { " — SQL: \($0)" } ?? "")
        }
    }

    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
