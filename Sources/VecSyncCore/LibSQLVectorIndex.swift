import Foundation
import GRDB

/// A libSQL vector index (`CREATE INDEX … ON t(libsql_vector_idx(col))`) as found in a
/// database's schema: what `vector_top_k` searches.
///
/// ```swift
/// for index in try LibSQLVectorIndex.all(in: db) {
///     print(index.name, try index.verify(db))
///     try index.rebuild(db)                      // SELECT vecsync_rebuild(name)
/// }
/// ```
///
/// The extension keeps such an index current under every write, so it needs no triggers
/// from the host; these helpers are for tools: listing, checking and rebuilding.
public struct LibSQLVectorIndex: Sendable, Hashable {
    /// The index's name, as given to `vector_top_k`.
    public var name: String
    /// The indexed table.
    public var table: String
    /// The indexed column.
    public var column: String
    /// The dimensions declared by the column's `F32_BLOB(n)` type, or nil if it declares none.
    public var dimensions: Int?

    /// Describes an index.
    public init(name: String, table: String, column: String, dimensions: Int?) {
        self.name = name
        self.table = table
        self.column = column
        self.dimensions = dimensions
    }

    /// Every libSQL vector index of the main database, by name.
    public static func all(in db: Database) throws -> [LibSQLVectorIndex] {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT name, tbl_name, sql FROM sqlite_master
                WHERE type = 'index' AND sql LIKE '%libsql_vector_idx%' ORDER BY name
                """)
        return try rows.compactMap { row in
            guard let name: String = row["name"], let table: String = row["tbl_name"], let sql: String = row["sql"],
                let column = indexedColumn(in: sql)
            else { return nil }
            let declared = try db.columns(in: table).first { $0.name.lowercased() == column.lowercased() }?.type ?? ""
            return LibSQLVectorIndex(name: name, table: table, column: column, dimensions: declaredDimensions(declared))
        }
    }

    /// The index named `name`, or nil.
    public static func named(_ name: String, in db: Database) throws -> LibSQLVectorIndex? {
        try all(in: db).first { $0.name == name }
    }

    /// The `k` rows nearest to `query`, as rowids of ``table``: `vector_top_k(name, query, k)`.
    public func search(_ db: Database, near query: Vector, k: Int) throws -> [VectorMatch<Int64>] {
        if let dimensions { try query.validate(dimensions: dimensions) }
        return try db.vectorTopK(index: name, near: query, k: k)
    }

    /// Rebuilds the index's search data from the table: `SELECT vecsync_rebuild(name)`.
    public func rebuild(_ db: Database) throws {
        try VecSyncError.wrap { _ = try Row.fetchAll(db, sql: "SELECT vecsync_rebuild(?)", arguments: [name]) }
    }

    /// Compares the index's search data with the table, by rowid.
    ///
    /// The extension stores that data in the vec0 table `vecsync_idx_<name>`, built on the
    /// first search; before that the report says the index table does not exist.
    public func verify(_ db: Database) throws -> VectorIndexReport {
        guard let dimensions else {
            throw VecSyncError.schemaMismatch(
                table: table, reason: "column \(column) declares no F32_BLOB(n) dimensions")
        }
        var report = try VectorIndex(
            table: table, primaryKey: "rowid", embeddingColumn: column,
            dimensions: dimensions, name: "vecsync_idx_\(name)"
        ).verify(db)
        report.index = name
        return report
    }

    /// The first argument of `libsql_vector_idx(…)` in a CREATE INDEX statement.
    static func indexedColumn(in sql: String) -> String? {
        guard let call = sql.range(of: "libsql_vector_idx", options: .caseInsensitive),
            let open = sql[call.upperBound...].firstIndex(of: "(")
        else { return nil }
        let rest = sql[sql.index(after: open)...]
        let end = rest.firstIndex { $0 == "," || $0 == ")" } ?? rest.endIndex
        var column = rest[..<end].trimmingCharacters(in: .whitespacesAndNewlines)
        if let first = column.first, let last = column.last, column.count >= 2,
            (first == "\"" && last == "\"") || (first == "`" && last == "`") || (first == "[" && last == "]")
        {
            column = String(column.dropFirst().dropLast())
        }
        return column.isEmpty ? nil : column
    }

    /// `n` from a declared column type such as `F32_BLOB(768)`, or nil.
    public static func declaredDimensions(_ type: String) -> Int? {
        guard let open = type.firstIndex(of: "("), let close = type.lastIndex(of: ")"), open < close else { return nil }
        return Int(type[type.index(after: open)..<close].trimmingCharacters(in: .whitespaces))
    }
}
