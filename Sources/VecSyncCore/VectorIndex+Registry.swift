import Foundation
import GRDB

extension VectorIndex {
    /// The table where ``create(_:)`` records each index, so that tools (`vecsync-cli verify`,
    /// `rebuild`) and the sync engine find every derived vector index of a database.
    public static let registryTable = "vecsync_vector_indexes"

    /// Every index recorded in the database by ``create(_:)``, by name.
    public static func registered(in db: Database) throws -> [VectorIndex] {
        guard try db.tableExists(registryTable) else { return [] }
        let rows = try VecSyncError.wrap {
            // A registry written before ivf indexes has no ivf column: none of its indexes has one.
            let ivf = try hasIVFColumn(db) ? "ivf" : "NULL AS ivf"
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT name, source_table, primary_key, embedding_column, dimensions, metric, metadata, \(ivf)
                    FROM \(registryTable.quotedSQLIdentifier) ORDER BY name
                    """)
        }
        return try rows.map { row in try VectorIndex(registryRow: row) }
    }

    /// The index recorded under `name`, or nil.
    public static func registered(named name: String, in db: Database) throws -> VectorIndex? {
        try registered(in: db).first { $0.name == name }
    }

    /// The indexes derived from `table`.
    public static func registered(forTable table: String, in db: Database) throws -> [VectorIndex] {
        try registered(in: db).filter { $0.table.lowercased() == table.lowercased() }
    }

    func register(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(Self.registryTable.quotedSQLIdentifier)(
                  name TEXT PRIMARY KEY,
                  source_table TEXT NOT NULL,
                  primary_key TEXT NOT NULL,
                  embedding_column TEXT NOT NULL,
                  dimensions INTEGER NOT NULL,
                  metric TEXT NOT NULL,
                  metadata TEXT NOT NULL DEFAULT '[]',
                  ivf TEXT)
                """)
        if try !Self.hasIVFColumn(db) {
            try db.execute(sql: "ALTER TABLE \(Self.registryTable.quotedSQLIdentifier) ADD COLUMN ivf TEXT")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let metadataJSON = String(decoding: try encoder.encode(metadata), as: UTF8.self)
        let ivfJSON = try ivf.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO \(Self.registryTable.quotedSQLIdentifier)
                  (name, source_table, primary_key, embedding_column, dimensions, metric, metadata, ivf)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [name, table, primaryKey, embeddingColumn, dimensions, metric.rawValue, metadataJSON, ivfJSON])
    }

    /// Whether the registry has its `ivf` column (JSON of ``IVF``, NULL for none).
    private static func hasIVFColumn(_ db: Database) throws -> Bool {
        try db.columns(in: registryTable).contains { $0.name.lowercased() == "ivf" }
    }

    init(registryRow row: Row) throws {
        let name: String? = row["name"]
        let table: String? = row["source_table"]
        let primaryKey: String? = row["primary_key"]
        let embeddingColumn: String? = row["embedding_column"]
        let dimensions: Int? = row["dimensions"]
        let metricName: String? = row["metric"]
        let metadataJSON: String? = row["metadata"]
        let ivfJSON: String? = row["ivf"]
        guard let name, let table, let primaryKey, let embeddingColumn, let dimensions,
            let metric = metricName.flatMap(DistanceMetric.init(rawValue:))
        else {
            throw VecSyncError.schemaMismatch(table: Self.registryTable, reason: "unreadable row \(row)")
        }
        let metadata = try JSONDecoder().decode(
            [MetadataColumn].self, from: Data((metadataJSON ?? "[]").utf8))
        let ivf = try ivfJSON.map { try JSONDecoder().decode(IVF.self, from: Data($0.utf8)) }
        self.init(
            table: table, primaryKey: primaryKey, embeddingColumn: embeddingColumn,
            dimensions: dimensions, metric: metric, name: name, metadata: metadata, ivf: ivf)
    }
}
