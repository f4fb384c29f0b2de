import Foundation
import GRDB

/// Every derived index of a database, found in one place: the vec0 indexes recorded by
/// ``VectorIndex/create(_:)`` (`vecsync_vector_indexes`), the FTS5 tables recorded by
/// ``register(_:in:)`` (`vecsync_derived_indexes`), and the libSQL vector indexes of the
/// schema. Merges refresh them through it, and `Replica`'s and `vecsync-cli`'s verify and
/// rebuild check and rebuild them through it.
///
/// While a merge runs, ``MergingFlag`` silences the index triggers, and the merge then calls
/// ``refresh(_:changedKeys:)`` for the rows it changed.
///
/// ```swift
/// let catalogue = try DerivedIndexCatalogue(db)
/// for check in try catalogue.verify(db) where !check.isConsistent { print(check) }
/// ```
public struct DerivedIndexCatalogue: Sendable, Hashable {
    /// The table where ``register(_:in:)`` records FTS5 (and libSQL) indexes.
    public static let registryTable = "vecsync_derived_indexes"

    /// The vec0 indexes, by name.
    public var vectorIndexes: [VectorIndex]
    /// The FTS5 indexes recorded by ``register(_:in:)``, and the libSQL vector indexes of the
    /// schema, by name.
    public var indexes: [DerivedIndex]

    /// Reads the catalogue of `db`.
    public init(_ db: Database) throws {
        vectorIndexes = try VectorIndex.registered(in: db)
        var indexes = try Self.recorded(db)
        let known = Set(indexes.map(\.name))
        for index in try LibSQLVectorIndex.all(in: db) where !known.contains(index.name) {
            indexes.append(DerivedIndex(libsqlVectorIndex: index.name, on: index.table))
        }
        self.indexes = indexes.sorted { $0.name < $1.name }
    }

    /// The names of every index in the catalogue, sorted.
    public var names: [String] { (vectorIndexes.map(\.name) + indexes.map(\.name)).sorted() }

    /// True when the database has no derived index.
    public var isEmpty: Bool { vectorIndexes.isEmpty && indexes.isEmpty }

    // MARK: Registration

    /// Creates `vecsync_derived_indexes` and `vecsync_state` when missing.
    public static func createTables(_ db: Database) throws {
        try VectorIndex.createStateTable(db)
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(registryTable.quotedSQLIdentifier) (
                  name TEXT PRIMARY KEY,
                  kind TEXT NOT NULL,
                  source_table TEXT NOT NULL,
                  columns TEXT NOT NULL)
                """)
    }

    /// Records `index` (replacing an index of the same name), so merges refresh it and
    /// verify and rebuild include it. An external-content FTS5 index gets the triggers that
    /// keep it current (``ExternalContentFTS``) unless the application's triggers do; its key
    /// is the `content_rowid` column.
    public static func register(_ index: DerivedIndex, in db: Database) throws {
        if let external = try index.externalContent(db) {
            guard index.keyColumn.lowercased() == "rowid" else {
                throw VecSyncError.derivedIndex(
                    name: index.name,
                    reason: "an external-content FTS5 table is keyed by its rowid, not \(index.keyColumn)")
            }
            try external.install(db, columns: index.columns)
        }
        try createTables(db)
        try db.execute(
            sql:
                "INSERT OR REPLACE INTO \(registryTable.quotedSQLIdentifier) (name, kind, source_table, columns) VALUES (?, ?, ?, ?)",
            arguments: [index.name, index.kind.rawValue, index.table, encodeList([index.keyColumn] + index.columns)])
    }

    /// The indexes recorded in `vecsync_derived_indexes`.
    private static func recorded(_ db: Database) throws -> [DerivedIndex] {
        guard try db.tableExists(registryTable) else { return [] }
        return try Row.fetchAll(
            db, sql: "SELECT name, kind, source_table, columns FROM \(registryTable.quotedSQLIdentifier) ORDER BY name"
        ).compactMap { row -> DerivedIndex? in
            guard let kind = DerivedIndex.Kind(rawValue: row["kind"]) else { return nil }
            let columns = decodeList(row["columns"])
            return DerivedIndex(
                kind: kind, name: row["name"], table: row["source_table"],
                keyColumn: columns.first ?? "rowid", columns: Array(columns.dropFirst()))
        }
    }

    /// Refreshes every index of the tables in `changedKeys` for exactly those keys (each
    /// given once); returns the rows refreshed per index. libSQL vector indexes follow a
    /// merge's writes through their own triggers and are not touched.
    public func refresh(_ db: Database, changedKeys: [String: [DatabaseValue]]) throws -> [String: Int] {
        var refreshed: [String: Int] = [:]
        var keysByTable: [String: [DatabaseValue]] = [:]
        for (table, keys) in changedKeys where !keys.isEmpty {
            keysByTable[table.lowercased(), default: []] += keys
        }
        for index in vectorIndexes {
            guard let keys = keysByTable[index.table.lowercased()] else { continue }
            try index.refresh(db, keys: keys)
            refreshed[index.name] = keys.count
        }
        for index in indexes where index.kind == .fts5 {
            guard let keys = keysByTable[index.table.lowercased()] else { continue }
            try VecSyncError.wrap { try index.refresh(db, keys: keys) }
            refreshed[index.name] = keys.count
        }
        return refreshed
    }

    // MARK: Verify and rebuild

    /// What ``verify(_:only:)`` found for one index.
    public struct Check: Sendable, Hashable, CustomStringConvertible {
        /// The index's name.
        public var name: String
        /// `vec0`, `fts5` or `libsql_vector_idx`.
        public var kind: String
        /// The table it derives from.
        public var table: String
        /// Rows out of step: missing, stale, extra (and, for vec0, stored vectors that
        /// cannot be indexed). 0 when the index is in step.
        public var outOfStep: Int
        /// The row-level report of a vector index.
        public var report: VectorIndexReport?
        /// True for a libSQL index not built yet: the extension builds it on its first search.
        public var isUnbuilt: Bool

        /// True when nothing is out of step.
        public var isConsistent: Bool { outOfStep == 0 }

        /// One line, as `vecsync-cli verify` prints it.
        public var description: String {
            if isUnbuilt {
                return "\(name): not built yet (\(report?.canonicalRows ?? 0) rows); the first search builds it"
            }
            if let report { return report.description }
            return "\(name) (\(kind) over \(table)): \(outOfStep) rows out of step — "
                + (isConsistent ? "consistent" : "out of step")
        }
    }

    /// Checks every index (or only the one named `name`) against its table.
    public func verify(_ db: Database, only name: String? = nil) throws -> [Check] {
        try VecSyncError.wrap {
            var checks: [Check] = []
            for index in vectorIndexes where name == nil || name == index.name {
                let report = try index.verify(db)
                checks.append(
                    Check(
                        name: index.name, kind: "vec0", table: index.table,
                        outOfStep: report.missing.count + report.stale.count + report.extra.count
                            + report.invalid.count,
                        report: report, isUnbuilt: false))
            }
            for index in indexes where name == nil || name == index.name {
                switch index.kind {
                case .fts5:
                    checks.append(
                        Check(
                            name: index.name, kind: index.kind.rawValue, table: index.table,
                            outOfStep: try index.verify(db), report: nil, isUnbuilt: false))
                case .libsqlVectorIndex:
                    guard let libsql = try LibSQLVectorIndex.named(index.name, in: db) else {
                        throw VecSyncError.derivedIndex(
                            name: index.name, reason: "no libsql_vector_idx index of that name")
                    }
                    let report = try libsql.verify(db)
                    checks.append(
                        Check(
                            name: index.name, kind: index.kind.rawValue, table: index.table,
                            outOfStep: report.exists
                                ? report.missing.count + report.stale.count + report.extra.count : 0,
                            report: report, isUnbuilt: !report.exists))
                }
            }
            return checks.sorted { $0.name < $1.name }
        }
    }

    /// Rebuilds every index (or only the one named `name`) from its table; returns the
    /// names rebuilt.
    @discardableResult
    public func rebuild(_ db: Database, only name: String? = nil) throws -> [String] {
        try VecSyncError.wrap {
            var rebuilt: [String] = []
            for index in vectorIndexes where name == nil || name == index.name {
                try index.rebuild(db)
                rebuilt.append(index.name)
            }
            for index in indexes where name == nil || name == index.name {
                try index.rebuild(db)
                rebuilt.append(index.name)
            }
            return rebuilt.sorted()
        }
    }

    // MARK: Internals

    static func encodeList(_ list: [String]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: list) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }

    static func decodeList(_ text: String) -> [String] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String] ?? []
    }
}
