import Foundation
import VecSyncCore

/// A note a person wrote about a photo (`notes` table).
public struct Note: Sendable, Hashable, Codable, FetchableRecord {
    /// The note's id.
    public var id: String
    /// The photo's source id.
    public var photoId: String
    /// The text.
    public var content: String
    /// When it was written.
    public var createdAt: Date
    /// When it was last edited.
    public var updatedAt: Date

    /// Creates a note value.
    public init(id: String, photoId: String, content: String, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.photoId = photoId
        self.content = content
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Decodes a `notes` row.
    public init(row: Row) throws { try self.init(from: StoredRowDecoder(row: row, keyColumns: ["id", "photo_id"])) }
}
