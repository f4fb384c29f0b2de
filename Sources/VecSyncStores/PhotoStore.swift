import Foundation
import VecSyncCore

/// A photo library that understands its photos (PhotoBrain's schema): photo metadata with
/// 768-d embeddings, notes and albums; vector search through a derived `vec0` index,
/// full-text search through a derived FTS5 index, and hybrid search fusing both.
///
/// ```swift
/// let photos = try PhotoStore(db, dimensions: 768)
/// try photos.upsert(Photo(sourceId: "PH-1", captureDate: date, description: "Sunset on the beach",
///                         tags: ["beach"]), embedding: v)
/// let near = try photos.search(similarTo: v, limit: 20, filter: .album("Japan") && .takenAfter(date))
/// let both = try photos.search(text: "sunset beach", similarTo: v, limit: 20)
/// ```
///
/// The canonical tables — `photos` (embedding in an `F32_BLOB(n)` column), `notes`,
/// `albums`, `album_photos` — are what syncs. `photos_vec` (vec0, a ``VectorIndex``) and
/// `photos_fts` (FTS5 over description, tags, OCR text and notes) are derived: kept current
/// by triggers and rebuilt with ``rebuildIndexes()``.
///
/// The tables declare no foreign keys: rows of a synced library arrive in any order (a note
/// before its photo), which a foreign key would refuse. The store deletes a photo's notes
/// and album memberships with it, and every query joins, so an orphan is never shown.
public struct PhotoStore: StoreDatabase {
    /// The database.
    public let writer: any DatabaseWriter
    /// The number of elements of every photo embedding.
    public let dimensions: Int
    /// The derived vec0 index over `photos.embedding`, with `capture_date`, `scene_type`
    /// and `mood` as metadata columns for filtered search.
    public let vectorIndex: VectorIndex
    /// The clock that stamps `updated_at`.
    let clock: @Sendable () -> Date

    /// The name of the FTS5 table.
    public static let textIndexName = "photos_fts"

    /// Opens the store on a VecSync database, creating the schema and indexes if needed.
    public init(
        _ database: VecSyncDatabase, dimensions: Int = 768,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        try self.init(writer: database.writer, dimensions: dimensions, clock: clock)
    }

    /// Opens the store on a GRDB database whose connections have the extension
    /// (`Configuration.vecSync()`), creating the schema and indexes if needed.
    public init(
        writer: any DatabaseWriter, dimensions: Int = 768,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        let index = VectorIndex(
            table: "photos", primaryKey: "source_id", embeddingColumn: "embedding",
            dimensions: dimensions, metric: .cosine, name: "photos_vec",
            metadata: [.init("capture_date", .integer), .init("scene_type", .text), .init("mood", .text)])
        try Self.prepare(writer, dimensions: dimensions) { db in
            try Self.createSchema(db, dimensions: dimensions, index: index)
        }
        self.writer = writer
        self.dimensions = dimensions
        self.clock = clock
        self.vectorIndex = index
    }
}
