import Foundation
import VecSyncCore

/// What the message and photo stores share: the database they write, the clock that stamps
/// rows, GRDB errors turned into ``VecSyncCore/VecSyncError``, and the statements every
/// store runs the same way (opening, updating one row by key, reading an embedding).
protocol StoreDatabase: Sendable {
    /// The database.
    var writer: any DatabaseWriter { get }
    /// The number of elements of every embedding of the store.
    var dimensions: Int { get }
    /// The clock that stamps new and changed rows.
    var clock: @Sendable () -> Date { get }
}

extension StoreDatabase {
    /// Checks `dimensions`, then creates what `schema` creates on `writer` (a store's
    /// schema: created if missing, refused when it holds another dimension).
    static func prepare(_ writer: any DatabaseWriter, dimensions: Int, schema: (Database) throws -> Void) throws {
        guard dimensions > 0 else {
            throw VecSyncError.invalidArgument(name: "dimensions", value: "\(dimensions)", reason: "must be at least 1")
        }
        do { try writer.write(schema) } catch { throw VecSyncError.wrapping(error) }
    }

    /// Runs `body` with GRDB errors turned into ``VecSyncCore/VecSyncError``.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try writer.write(body) } catch { throw VecSyncError.wrapping(error) }
    }

    /// Runs `body` with GRDB errors turned into ``VecSyncCore/VecSyncError``.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try writer.read(body) } catch { throw VecSyncError.wrapping(error) }
    }

    /// The clock's time, in the integer milliseconds since 1970 the tables store.
    var now: Int64 { clock().millisecondsSince1970 }

    /// Runs `sql`, an UPDATE of the row of `kind` whose key is `key`, and throws
    /// ``VecSyncCore/VecSyncError/notFound(kind:key:)`` when it changed no row.
    func updateExisting(_ kind: String, key: String, sql: String, arguments: StatementArguments) throws {
        try write { db in
            try db.execute(sql: sql, arguments: arguments)
            guard db.changesCount > 0 else { throw VecSyncError.notFound(kind: kind, key: key) }
        }
    }

    /// Runs `statements`, each a DELETE bound to `key`, in one transaction (a row's
    /// dependents first, the row last); returns whether the last one deleted a row.
    func deleteRows(_ statements: [String], key: String) throws -> Bool {
        try write { db in
            for sql in statements { try db.execute(sql: sql, arguments: [key]) }
            return db.changesCount > 0
        }
    }

    /// The `embedding` column of the row of `table` whose `keyColumn` is `key`; nil when the
    /// row has none, or there is no such row.
    func storedEmbedding(in table: String, keyColumn: String, key: String) throws -> Vector? {
        try read { db in
            try Vector.fetchOne(
                db,
                sql: "SELECT embedding FROM \(table.quotedSQLIdentifier) WHERE \(keyColumn.quotedSQLIdentifier) = ?",
                arguments: [key])
        }
    }
}
