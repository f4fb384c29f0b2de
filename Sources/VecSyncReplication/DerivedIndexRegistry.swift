import GRDB
import VecSyncCore

/// Finds the derived indexes of tracked tables — VecSyncCore's `VectorIndex` registry for
/// `vec0` tables, `vecsync_derived_indexes` for the others — and refreshes them.
enum DerivedIndexRegistry {
    /// The indexes recorded in `vecsync_derived_indexes`.
    private static func recorded(_ db: Database) throws -> [DerivedIndex] {
        guard try db.tableExists("vecsync_derived_indexes") else { return [] }
        return try Row.fetchAll(db, sql: "SELECT name, kind, source_table, columns FROM vecsync_derived_indexes ORDER BY name")
            .compactMap { row -> DerivedIndex? in
                guard let kind = DerivedIndex.Kind(rawValue: row["kind"]) else { return nil }
                let columns = Replica.decodeList(row["columns"])
                return DerivedIndex(kind: kind, name: row["name"], table: row["source_table"],
                                    keyColumn: columns.first ?? "rowid", columns: Array(columns.dropFirst()))
            }
    }

    /// The indexes recorded in `vecsync_derived_indexes`, and the libSQL vector indexes of
    /// tracked tables found in the schema, by name.
    static func registered(_ db: Database) throws -> [DerivedIndex] {
        guard try db.tableExists("vecsync_derived_indexes") else { return [] }
        var indexes = try recorded(db)
        let tracked = Set(try Replica.trackedTables(db, checkingSchema: false).map { $0.name.lowercased() })
        let known = Set(indexes.map(\.name))
        for index in try LibSQLVectorIndex.all(in: db)
        where tracked.contains(index.table.lowercased()) && !known.contains(index.name) {
            indexes.append(DerivedIndex(libsqlVectorIndex: index.name, on: index.table))
        }
        return indexes.sorted { $0.name < $1.name }
    }

    /// Records `index` (replacing an index of the same name).
    static func register(_ db: Database, _ index: DerivedIndex) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO vecsync_derived_indexes (name, kind, source_table, columns) VALUES (?, ?, ?, ?)",
            arguments: [index.name, index.kind.rawValue, index.table, Replica.encodeList([index.keyColumn] + index.columns)])
    }

    /// Refreshes every derived index of the tables in `changedKeys` for exactly those keys,
    /// once each; returns the rows refreshed per index.
    static func refresh(_ db: Database, changedKeys: [String: [DatabaseValue]]) throws -> [String: Int] {
        guard !changedKeys.isEmpty else { return [:] }
        var refreshed: [String: Int] = [:]
        for (tableName, keys) in changedKeys {
            for index in try VectorIndex.registered(forTable: tableName, in: db) {
                try index.refresh(db, keys: keys)
                refreshed[index.name] = keys.count
            }
        }
        // libSQL vector indexes follow the merge's writes through their own triggers: only
        // the recorded FTS5 tables need refreshing, so the schema is not searched here.
        let indexes = try recorded(db).filter { $0.kind == .fts5 }
        guard !indexes.isEmpty else { return refreshed }
        let tables = try Replica.trackedTables(db, checkingSchema: false)
        for index in indexes {
            guard let keys = changedKeys[index.table],
                  let source = tables.first(where: { $0.name.lowercased() == index.table.lowercased() })
            else { continue }
            try index.refresh(db, source: source, keys: keys)
            refreshed[index.name] = keys.count
        }
        return refreshed
    }
}
