import GRDB
import PostgresNIO

/// What kind of failure a store's error is, for its answer and its metric: the disk of the
/// store is full (SQLite's `SQLITE_FULL`, PostgreSQL's `disk_full`, SQLSTATE 53100) — 507
/// `storage-full` — or the store cannot be reached now — 503 `store-unavailable`, with
/// `Retry-After` — or anything else (500 `internal`).
///
/// Unavailable: no answer in time (``ServerStoreError/unavailable(_:)``, ``TimedStore``);
/// PostgreSQL away — a connection refused, lost or closed, the pool closed, the pool's
/// circuit breaker open after its connections kept failing (PostgresNIO's
/// `ConnectionPoolError`), or the server shutting down or starting (SQLSTATE classes 08 and
/// 57P).
enum StoreFailure: String {
    case full, unavailable, other

    /// The kind of `error`.
    static func of(_ error: any Error) -> StoreFailure {
        if case ServerStoreError.unavailable = error { return .unavailable }
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_FULL { return .full }
        if let error = error as? PSQLError {
            return of(code: error.code, sqlState: error.serverInfo?[.sqlState])
        }
        // The pool's own errors (its circuit breaker, a shut-down pool) come from a module
        // PostgresNIO does not make public under a stable name: known by their type's name.
        if String(describing: type(of: error)) == "ConnectionPoolError" { return .unavailable }
        return .other
    }

    /// The kind of a PostgreSQL error with `code` and, for an error the server sent, its
    /// SQLSTATE.
    static func of(code: PSQLError.Code, sqlState: String?) -> StoreFailure {
        let connection: [PSQLError.Code] = [
            .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
        ]
        if connection.contains(code) { return .unavailable }
        guard let sqlState else { return .other }
        if sqlState == "53100" { return .full }
        if sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") { return .unavailable }
        return .other
    }
}
