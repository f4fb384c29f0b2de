import GRDB

extension Database {
    /// The `k` rows nearest to `query` in a libSQL vector index, nearest first:
    /// `SELECT id, distance FROM vector_top_k(index, query, k)`.
    ///
    /// ```swift
    /// let hits = try db.vectorTopK(index: "messages_embedding_idx", near: query, k: 10)
    /// // hits[0].key is the rowid of the nearest row of the indexed table
    /// ```
    ///
    /// The index name, the vector and `k` are bound. Fewer than `k` rows come back only when
    /// the index holds fewer. Ties are ordered by rowid.
    public func vectorTopK(index: String, near query: Vector, k: Int) throws -> [VectorMatch<Int64>] {
        try Self.checkK(k)
        let sql = "SELECT id, distance FROM vector_top_k(?, ?, ?)"
        return try VecSyncError.wrap {
            try Row.fetchAll(self, sql: sql, arguments: [index, query, k])
        }.map { row in
            guard let key: Int64 = row[0], let distance: Double = row[1] else {
                throw VecSyncError.sqlite(
                    message: "vector_top_k returned a NULL id or distance: \(row)",
                    resultCode: 0, sql: sql)
            }
            return VectorMatch(key: key, distance: distance)
        }
    }

    /// The `k` rows nearest to `query` in a `vec0` table, nearest first, among rows that
    /// pass every `filters` condition (applied inside the scan: `k` rows come back whenever
    /// `k` rows match):
    ///
    /// ```sql
    /// SELECT "photo_id", distance FROM "photos_vec"
    /// WHERE "embedding" MATCH ? AND k = ? AND "album" = ? ORDER BY distance
    /// ```
    ///
    /// Identifiers are quoted and values bound. Keys that cannot be read as `Key` throw.
    /// `probes`, for a table with an ivf index, adds `AND nprobe = ?`: the lists the query
    /// scans.
    public func vec0Search<Key: DatabaseValueConvertible & Sendable & Hashable>(
        table: String,
        keyColumn: String,
        embeddingColumn: String = "embedding",
        near query: Vector,
        k: Int,
        where filters: [VectorFilter] = [],
        probes: Int? = nil,
        as keyType: Key.Type
    ) throws -> [VectorMatch<Key>] {
        try Self.checkK(k)
        var sql =
            "SELECT \(keyColumn.quotedSQLIdentifier), distance FROM \(table.quotedSQLIdentifier)"
            + " WHERE \(embeddingColumn.quotedSQLIdentifier) MATCH ? AND k = ?"
        var arguments: StatementArguments = [query, k]
        for filter in filters {
            sql += " AND " + filter.sql
            arguments += [filter.value]
        }
        if let probes {
            sql += " AND nprobe = ?"
            arguments += [probes]
        }
        sql += " ORDER BY distance"
        let rows = try VecSyncError.wrap { try Row.fetchAll(self, sql: sql, arguments: arguments) }
        return try rows.map { row in
            let dbValue: DatabaseValue = row[0]
            guard let key = Key.fromDatabaseValue(dbValue), let distance: Double = row[1] else {
                throw VecSyncError.schemaMismatch(
                    table: table, reason: "row \(row) has no \(Key.self) key in column \(keyColumn) or no distance")
            }
            return VectorMatch(key: key, distance: distance)
        }
    }

    /// The same search returning keys as `DatabaseValue`, whatever their type.
    public func vec0Search(
        table: String,
        keyColumn: String,
        embeddingColumn: String = "embedding",
        near query: Vector,
        k: Int,
        where filters: [VectorFilter] = [],
        probes: Int? = nil
    ) throws -> [VectorMatch<DatabaseValue>] {
        try vec0Search(
            table: table, keyColumn: keyColumn, embeddingColumn: embeddingColumn,
            near: query, k: k, where: filters, probes: probes, as: DatabaseValue.self)
    }

    static func checkK(_ k: Int) throws {
        guard k > 0 else {
            throw VecSyncError.invalidArgument(name: "k", value: "\(k)", reason: "must be at least 1")
        }
    }
}
