import Foundation
import GRDB

/// What went wrong in VecSync, with what a person needs to fix it: the expected and actual
/// dimensions, the offending input, the table or site, or the SQL that failed and SQLite's
/// message.
///
/// The package's APIs throw this one type (`SyncError`, the sync engine's old name for it,
/// is deprecated), so a caller pattern-matches one set of cases whichever layer failed: a
/// merge's SQLite failure is ``sqlite(message:resultCode:sql:)`` whether it came from the
/// engine or from an index refresh. Three kinds of error pass through as they are:
/// `HTTPTransportError` (what a sync server answered, or that it could not be reached),
/// `CancellationError` (a sync whose `SyncEventSink` was cancelled) and whatever your own
/// event handler throws; and the `Decodable` conformances (`Vector`, `ChangeSet`'s JSON)
/// throw `DecodingError`, as `Decoder`s expect.
///
/// ```swift
/// do {
///     try replica.merge(changeSet)
/// } catch VecSyncError.sqlite(let message, let code, _) where code & 0xFF == 5 /* SQLITE_BUSY */ {
///     retryLater(message)
/// } catch VecSyncError.clockTooFarAhead(let site, _, _, _) {
///     warn("\(site)'s clock is wrong")
/// }
/// ```
public enum VecSyncError: Error, Sendable, Hashable {
    /// A vector has the wrong number of elements for its column or index.
    case dimensionMismatch(expected: Int, got: Int)
    /// A vector element is NaN or infinite, which no vector column accepts.
    case nonFiniteElement(index: Int, value: Float)
    /// A blob is not a valid F32 vector (its length is not a multiple of 4).
    case invalidBlob(byteCount: Int, reason: String)
    /// Text is not a vector such as `[1, 2.5, -3e-2]`; carries (an excerpt of) the text.
    case invalidVectorText(String, reason: String)
    /// An argument is out of range, e.g. a search limit of 0.
    case invalidArgument(name: String, value: String, reason: String)
    /// A row that the operation needs does not exist.
    case notFound(kind: String, key: String)
    /// The database schema does not match what the caller asked for.
    case schemaMismatch(table: String, reason: String)
    /// The connection lacks the VecSync extension (or the named part of it).
    case extensionMissing(feature: String, sql: String)
    /// SQLite refused to install the VecSync extension: on one connection
    /// (``VecSyncExtension/install(on:)``), or for the whole process
    /// (``VecSyncExtension/register()``, which Apple's SQLite does not support).
    case extensionInstall(resultCode: Int32, reason: String)
    /// A derived index is not registered, or its definition is unusable.
    case derivedIndex(name: String, reason: String)
    /// SQLite refused a statement: its message, extended result code and the SQL.
    case sqlite(message: String, resultCode: Int32, sql: String?)

    // MARK: Sync

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
    /// or authority differ), so it cannot be merged column by column. (Before errors had
    /// one type, this was `SyncError.schemaMismatch(table:local:remote:)`.)
    case changeSetSchemaMismatch(table: String, local: String, remote: String)
    /// A change set carries clock values further in the future than the allowed drift.
    case clockTooFarAhead(
        site: SiteID, version: HybridLogicalClock, now: HybridLogicalClock, allowedDriftMilliseconds: Int64)
    /// A change set carries only the changed columns of a row this replica does not have in
    /// that incarnation: it was made for a receiver that had merged the origin's earlier
    /// change sets, and this one has merged them only through `received`. Nothing was
    /// applied; merge the origin's change sets in order.
    case missingEarlierChanges(origin: SiteID, since: Int64, received: Int64)
    /// A change set was made by this very site: merging it back is refused.
    case ownChangeSet(site: SiteID)
    /// A change set given to `Replica.recoverLostChanges(_:)` was made by another site.
    case notOwnChangeSet(site: SiteID, origin: SiteID)
    /// The operation needs a replica that may write, and this one is read-only.
    case readOnlyReplica(site: SiteID, operation: String)
    /// A file could not be read or written.
    case io(path: String, reason: String)
    /// A push found this replica's own changes at `destination` past its push cursor
    /// (`published`), through `held`: changes it made before its database was restored from
    /// a backup. They are taken back before anything is pushed (`Replica.sync` does it, through
    /// the transport's `recoverLostChanges(of:events:)`); nothing was pushed.
    case lostChangesNotRecovered(destination: String, published: Int64, held: Int64)

    /// At most 80 characters of `text`, for error messages.
    static func excerpt(_ text: String) -> String {
        text.count <= 80 ? text : String(text.prefix(77)) + "..."
    }

    /// Converts a GRDB error into ``sqlite(message:resultCode:sql:)``, or into
    /// ``extensionMissing(feature:sql:)`` when SQLite reports a missing vector function or
    /// module. Other errors pass through unchanged.
    public static func wrapping(_ error: any Error) -> any Error {
        guard let dbError = error as? DatabaseError else { return error }
        let message = dbError.message ?? "\(dbError.resultCode)"
        let sql = dbError.sql
        for marker in [
            "no such module: vec0", "no such function: vector", "no such function: libsql_vector_idx",
            "no such table: vector_top_k", "no such function: vec_", "no such function: vecsync_",
        ]
        where message.contains(marker) {
            let feature = message.components(separatedBy: ": ").last ?? message
            return VecSyncError.extensionMissing(feature: feature, sql: sql ?? "")
        }
        return VecSyncError.sqlite(
            message: message, resultCode: dbError.extendedResultCode.rawValue, sql: sql)
    }

    /// Runs `body`, converting a GRDB error with ``wrapping(_:)``.
    @discardableResult
    public static func wrap<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw wrapping(error)
        }
    }
}

extension VecSyncError: CustomStringConvertible, LocalizedError {
    /// A sentence that says what went wrong and with which input.
    public var description: String {
        switch self {
        case .dimensionMismatch(let expected, let got):
            "wrong vector dimension: expected \(expected), got \(got)"
        case .nonFiniteElement(let index, let value):
            "vector element \(index) is \(value); vectors must be finite"
        case .invalidBlob(let byteCount, let reason):
            "invalid vector blob of \(byteCount) bytes: \(reason)"
        case .invalidVectorText(let text, let reason):
            "invalid vector text '\(text)': \(reason)"
        case .invalidArgument(let name, let value, let reason):
            "invalid \(name) \(value): \(reason)"
        case .notFound(let kind, let key):
            "no \(kind) with key '\(key)'"
        case .schemaMismatch(let table, let reason):
            "table \(table) does not match: \(reason)"
        case .extensionMissing(let feature, let sql):
            "the VecSync extension is not installed on this connection (\(feature)); "
                + VecSyncExtension.installAdvice + " SQL: \(sql)"
        case .extensionInstall(let resultCode, let reason):
            "the VecSync extension could not be installed (SQLite result \(resultCode)): \(reason)"
        case .derivedIndex(let name, let reason):
            "derived index \(name): \(reason)"
        case .sqlite(let message, let resultCode, let sql):
            "SQLite error \(resultCode): \(message)" + (sql.map { " — SQL: \($0)" } ?? "")
        case .untrackableTable(let table, let reason):
            "cannot track table \(table): \(reason)"
        case .tableNotTracked(let table):
            "table \(table) is not tracked on this replica; track it first (vecsync-cli track --table \(table))"
        case .schemaChanged(let table, let reason):
            "tracked table \(table) changed since it was tracked: \(reason); untrack and track it again on every replica"
        case .siteMismatch(let stored, let requested):
            "this database belongs to site '\(stored)', not '\(requested)'; a database keeps the site id it was first given"
        case .notAReplica(let reason):
            "not a replica: \(reason)"
        case .corruptChangeSet(let reason, let offset):
            "corrupt change set at byte \(offset): \(reason); nothing was applied"
        case .incompatibleFormat(let found, let supported):
            "change set format version \(found) is not supported (this build reads versions up to \(supported)); upgrade the replica that cannot read it"
        case .changeSetSchemaMismatch(let table, let local, let remote):
            "change set for table \(table) was made from another schema (local \(local); remote \(remote)); nothing was applied"
        case .clockTooFarAhead(let site, let version, let now, let drift):
            "site '\(site)' sent clock \(version), more than \(drift) ms ahead of this replica's clock \(now); fix that device's clock, nothing was applied"
        case .missingEarlierChanges(let origin, let since, let received):
            "change set from '\(origin)' after its sequence \(since) needs its earlier changes, and this replica has merged them only through \(received); merge '\(origin)''s change sets in order (nothing was applied)"
        case .ownChangeSet(let site):
            "change set was made by this site ('\(site)'); it is not merged back"
        case .notOwnChangeSet(let site, let origin):
            "change set was made by '\(origin)', not by this site ('\(site)'): only a site's own lost changes are recovered; nothing was applied"
        case .readOnlyReplica(let site, let operation):
            "replica '\(site)' is read-only: cannot \(operation)"
        case .io(let path, let reason):
            "\(path): \(reason)"
        case .lostChangesNotRecovered(let destination, let published, let held):
            "\(destination) holds this replica's changes through \(held), past the \(published) it published: changes made before its database was restored; sync (which takes them back first) instead of pushing alone; nothing was pushed"
        }
    }

    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
