import GRDB

/// A derived, rebuildable vector index over a canonical table: the sync-safe pattern.
///
/// The canonical table keeps each embedding in an ordinary `F32_BLOB(n)` column, and that
/// column is what syncs. The index is a `vec0` table derived from it: ``create(_:)`` makes it,
/// fills it, and installs triggers that keep it current under local writes;
/// ``refresh(_:keys:)`` brings given rows up to date (the sync engine calls it after a merge,
/// during which the triggers stay silent); ``verify(_:)`` reports rows that are missing,
/// stale or extra; ``rebuild(_:)`` recreates it from the canonical rows with no loss.
///
/// ```swift
/// let index = VectorIndex(table: "photos", primaryKey: "source_id", embeddingColumn: "embedding",
///                         dimensions: 768, metric: .cosine, name: "photos_vec",
///                         metadata: [.init("capture_date", .integer)])
/// try db.write { db in try index.create(db) }
/// let nearest = try db.read { db in try index.search(db, near: query, limit: 10, as: String.self) }
/// ```
///
/// The triggers are plain SQL. They do nothing while the row `('merging', 1)` is in the
/// `vecsync_state(key, value)` table, which ``create(_:)`` creates when it is missing.
public struct VectorIndex: Sendable, Hashable, Codable {
    /// The canonical table.
    public var table: String
    /// The canonical table's primary key column (`rowid` for a table without one).
    public var primaryKey: String
    /// The canonical table's embedding column, holding F32 blobs.
    public var embeddingColumn: String
    /// The number of elements of every embedding.
    public var dimensions: Int
    /// The distance the index ranks by.
    public var metric: DistanceMetric
    /// The name of the derived `vec0` table.
    public var name: String
    /// Columns of the canonical table copied into the index, for filtering during the scan.
    public var metadata: [MetadataColumn]
    /// The approximate index of the vec0 table, or nil for the exact scan alone.
    public var ivf: IVF?

    /// Describes an index; nothing is written until ``create(_:)``.
    ///
    /// `name` defaults to `<table>_<embeddingColumn>_vec`.
    public init(
        table: String,
        primaryKey: String = "id",
        embeddingColumn: String = "embedding",
        dimensions: Int,
        metric: DistanceMetric = .cosine,
        name: String? = nil,
        metadata: [MetadataColumn] = [],
        ivf: IVF? = nil
    ) {
        self.table = table
        self.primaryKey = primaryKey
        self.embeddingColumn = embeddingColumn
        self.dimensions = dimensions
        self.metric = metric
        self.name = name ?? "\(table)_\(embeddingColumn)_vec"
        self.metadata = metadata
        self.ivf = ivf
    }

    /// The name of the state table whose `merging` row silences the triggers.
    public static let stateTable = "vecsync_state"

    // MARK: - SQL pieces

    /// True when the canonical table is keyed by its rowid rather than a declared column.
    var usesRowid: Bool { ["rowid", "_rowid_", "oid"].contains(primaryKey.lowercased()) }

    /// The key column inside the vec0 table.
    var indexKeyColumn: String { usesRowid ? "rowid" : primaryKey }

    /// Quoted identifiers.
    var qTable: String { table.quotedSQLIdentifier }
    var qName: String { name.quotedSQLIdentifier }
    var qKey: String { primaryKey.quotedSQLIdentifier }
    var qIndexKey: String { indexKeyColumn.quotedSQLIdentifier }
    var qEmbedding: String { embeddingColumn.quotedSQLIdentifier }

    /// The vec0 columns written by the triggers and the backfill, in order.
    var indexColumns: [String] {
        [indexKeyColumn, embeddingColumn] + metadata.map(\.name)
    }

    /// The matching canonical columns, prefixed by `prefix` (`NEW.`, `s.`, …).
    func sourceColumns(prefix: String) -> [String] {
        ([primaryKey, embeddingColumn] + metadata.map(\.name)).map { prefix + $0.quotedSQLIdentifier }
    }

    /// `INSERT INTO "idx"("k", "embedding", …)`
    var insertPrefix: String {
        "INSERT INTO \(qName)(" + indexColumns.map(\.quotedSQLIdentifier).joined(separator: ", ") + ")"
    }

    /// Trigger names.
    var insertTrigger: String { "\(name)_after_insert" }
    var updateTrigger: String { "\(name)_after_update" }
    var deleteTrigger: String { "\(name)_after_delete" }
}
