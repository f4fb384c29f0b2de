import GRDB
import PostgresNIO

/// What kind of failure a store's error is, for its answer and its metric: the disk of the
/// store is full (SQLite's `SQLITE_FULL`, PostgreSQL's `disk_full`, SQLSTATE 53100) — 507
/// `storage-full` — or the store did not answer in time (``ServerStoreError/unavailable(_:)``)
/// — 503 — or anything else (500).
enum StoreFailure: String {
    case full, unavailable, other

    /// The kind of `error`.
    static func of(_ error: any Error) -> StoreFailure {
        if case ServerStoreError.unavailable = error { return .unavailable }
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_FULL { return .full }
        if let error = error as? PSQLError, error.serverInfo?[.sqlState] == "53100" { return .full }
        return .other
    }
}
