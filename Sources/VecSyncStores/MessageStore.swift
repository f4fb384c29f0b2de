import Foundation
import VecSyncCore

/// Threads, messages and FQAHO parameter history (the Choir schema, libSQL style), with
/// semantic recall over message embeddings through `vector_top_k`.
///
/// ```swift
/// let db = try VecSyncDatabase(path: "choir.db")
/// let messages = try MessageStore(db, dimensions: 1536)
/// try messages.createThread(id: "t1", title: "Trip", k0: 1, alpha: 1.5, m: 1)
/// try messages.addMessage(id: "m1", threadId: "t1", userId: "u1", content: "Kyoto temples",
///                         embedding: embedding, phase: .experience)
/// try messages.setApprovalStatus(.approved, ofMessage: "m1")
/// let recalled = try messages.similar(to: query, inThread: "t1", approvedOnly: true, limit: 5)
/// ```
///
/// The schema is created if missing: `users`, `threads` (k0, alpha, m), `messages` with
/// `embedding F32_BLOB(n)` and the libSQL vector index `messages_embedding_idx`, and
/// `parameter_history`. Times are stored as integer milliseconds since 1970.
public struct MessageStore: StoreDatabase {
    /// The database.
    public let writer: any DatabaseWriter
    /// The number of elements of every message embedding.
    public let dimensions: Int
    /// The clock that stamps new rows.
    let clock: @Sendable () -> Date

    /// The name of the libSQL vector index over `messages.embedding`.
    public static let indexName = "messages_embedding_idx"

    /// Opens the store on a VecSync database, creating the schema if needed.
    ///
    /// Throws ``VecSyncCore/VecSyncError/schemaMismatch(table:reason:)`` when the database
    /// already holds messages of another dimension.
    public init(
        _ database: VecSyncDatabase, dimensions: Int = 1536,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        try self.init(writer: database.writer, dimensions: dimensions, clock: clock)
    }

    /// Opens the store on a GRDB database whose connections have the extension
    /// (`Configuration.vecSync()`), creating the schema if needed.
    public init(
        writer: any DatabaseWriter, dimensions: Int = 1536,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        try Self.prepare(writer, dimensions: dimensions) { db in try Self.createSchema(db, dimensions: dimensions) }
        self.writer = writer
        self.dimensions = dimensions
        self.clock = clock
    }
}
