import GRDB

/// A full-text or libSQL vector index derived from a table: never synced, brought up to
/// date after each merge for exactly the rows the merge changed.
///
/// ``DerivedIndexCatalogue`` lists every derived index of a database: ``VectorIndex`` (vec0)
/// and this type, whose FTS5 tables are recorded in `vecsync_derived_indexes` (by
/// `Replica.register(_:)` or ``DerivedIndexCatalogue/register(_:in:)``) so that every
/// tool and replica opening the database knows them.
///
/// ```swift
/// // CREATE VIRTUAL TABLE notes_fts USING fts5(body, title)   -- rowid = notes.id
/// try replica.register(DerivedIndex(fts5: "notes_fts", on: "notes", columns: ["body", "title"]))
/// // CREATE VIRTUAL TABLE files_fts USING fts5(name, path, content='files', content_rowid='id')
/// try replica.register(DerivedIndex(fts5: "files_fts", on: "files", columns: ["name", "path"]))
/// ```
public struct DerivedIndex: Sendable, Hashable {
    /// The kind of index.
    public enum Kind: String, Sendable, Hashable {
        /// An FTS5 table over the source columns: self-contained (holding copies of them, the
        /// merge refreshes it for the rows it changed) or external-content (`content=` the
        /// source table, kept current by triggers on the source: ``ExternalContentFTS``).
        case fts5
        /// A libSQL vector index (`CREATE INDEX … (libsql_vector_idx(col))`). The extension
        /// keeps it current by itself — its triggers run during a merge for exactly the rows
        /// the merge writes — and replicas find it in the schema, so it needs no
        /// registration; ``DerivedIndexCatalogue`` includes it.
        case libsqlVectorIndex = "libsql_vector_idx"
    }

    /// The index's name: the FTS5 table, or the SQL index.
    public var name: String
    /// Its kind.
    public var kind: Kind
    /// The tracked table it derives from.
    public var table: String
    /// For FTS5, the column of the index that holds the source key: `rowid` (the source key
    /// must then be an integer) or an `UNINDEXED` column.
    public var keyColumn: String
    /// For FTS5, the source columns copied, with the same names in the index.
    public var columns: [String]

    /// An FTS5 table over `columns` of `table`, keyed by `keyColumn` of the FTS5 table.
    public init(fts5 name: String, on table: String, keyColumn: String = "rowid", columns: [String]) {
        self.init(kind: .fts5, name: name, table: table, keyColumn: keyColumn, columns: columns)
    }

    /// A libSQL vector index on `table`.
    public init(libsqlVectorIndex name: String, on table: String) {
        self.init(kind: .libsqlVectorIndex, name: name, table: table, keyColumn: "rowid", columns: [])
    }

    init(kind: Kind, name: String, table: String, keyColumn: String, columns: [String]) {
        self.name = name
        self.kind = kind
        self.table = table
        self.keyColumn = keyColumn
        self.columns = columns
    }

    /// The index's external-content declaration, when it has one whose content table is the
    /// source table (nil for a self-contained index).
    func externalContent(_ db: Database) throws -> ExternalContentFTS? {
        guard kind == .fts5, let external = try ExternalContentFTS.declared(name, in: db) else { return nil }
        guard external.contentTable.lowercased() == table.lowercased() else {
            throw VecSyncError.derivedIndex(
                name: name, reason: "its content= table is \(external.contentTable), not \(table)")
        }
        return external
    }

    private var columnList: String { columns.map(\.quotedSQLIdentifier).joined(separator: ", ") }

    /// The key column of the source table that `keyColumn` holds: its single-column
    /// primary key, or `rowid`.
    private func sourceKey(_ db: Database) throws -> String {
        let keys = try String.fetchAll(
            db, sql: "SELECT name FROM pragma_table_info(?) WHERE pk > 0", arguments: [table])
        return keys.count == 1 ? keys[0] : "rowid"
    }

    /// Brings the index up to date for these source keys: each is removed, then re-added
    /// from its source row if that row exists.
    /// An external-content index is current already: its triggers saw every write.
    func refresh(_ db: Database, keys: [DatabaseValue]) throws {
        guard kind == .fts5, !keys.isEmpty, try externalContent(db) == nil else { return }
        let index = name.quotedSQLIdentifier
        let key = keyColumn.quotedSQLIdentifier
        let sourceKey = try sourceKey(db).quotedSQLIdentifier
        let delete = try db.cachedStatement(sql: "DELETE FROM \(index) WHERE \(key) = ?")
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO \(index) (\(key), \(columnList)) SELECT \(sourceKey), \(columnList)
                FROM \(table.quotedSQLIdentifier) WHERE \(sourceKey) = ?
                """)
        for value in keys {
            try delete.execute(arguments: [value])
            try insert.execute(arguments: [value])
        }
    }

    /// The number of source rows missing from the index or differing from it, plus index
    /// rows with no source row: 0 when the index is in step.
    func verify(_ db: Database) throws -> Int {
        guard kind == .fts5 else {
            // Its search data is built from the rows on first search; until then there is
            // nothing to be out of step.
            guard let index = try LibSQLVectorIndex.named(name, in: db) else {
                throw VecSyncError.derivedIndex(name: name, reason: "no libsql_vector_idx index of that name")
            }
            let report = try index.verify(db)
            return report.exists ? report.missing.count + report.stale.count + report.extra.count : 0
        }
        if let external = try externalContent(db) {
            if let count = try external.outOfStep(db) { return count }
            // No _docsize to count with: FTS5's own check of the index.
            do {
                try db.execute(sql: "INSERT INTO \(name.quotedSQLIdentifier) (\(name.quotedSQLIdentifier)) VALUES ('integrity-check')")
                return 0
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
                return 1
            }
        }
        let sourceRows =
            "SELECT \(try sourceKey(db).quotedSQLIdentifier), \(columnList) FROM \(table.quotedSQLIdentifier)"
        let indexRows = "SELECT \(keyColumn.quotedSQLIdentifier), \(columnList) FROM \(name.quotedSQLIdentifier)"
        let missing = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(sourceRows) EXCEPT \(indexRows))") ?? 0
        let extra = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(indexRows) EXCEPT \(sourceRows))") ?? 0
        return missing + extra
    }

    /// Empties the index and fills it again from every source row.
    func rebuild(_ db: Database) throws {
        switch kind {
        case .fts5:
            if let external = try externalContent(db) {
                try external.rebuild(db)
                return
            }
            try db.execute(sql: "DELETE FROM \(name.quotedSQLIdentifier)")
            try db.execute(
                sql: """
                    INSERT INTO \(name.quotedSQLIdentifier) (\(keyColumn.quotedSQLIdentifier), \(columnList))
                    SELECT \(try sourceKey(db).quotedSQLIdentifier), \(columnList) FROM \(table.quotedSQLIdentifier)
                    """)
        case .libsqlVectorIndex:
            _ = try DatabaseValue.fetchOne(db, sql: "SELECT vecsync_rebuild(?)", arguments: [name])
        }
    }
}
