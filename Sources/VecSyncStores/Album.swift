import Foundation
import VecSyncCore

/// A named album (`albums` table). Membership lives in `album_photos`, one row per photo,
/// so that two devices adding photos to the same album concurrently both keep their adds.
public struct Album: Sendable, Hashable, Codable, FetchableRecord {
    /// The album's id.
    public var id: String
    /// Its name (not unique: two devices may each create a “Japan” album).
    public var name: String
    /// When it was created.
    public var createdAt: Date
    /// When it was last renamed or its membership changed.
    public var updatedAt: Date

    /// Creates an album value.
    public init(id: String, name: String, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Decodes an `albums` row.
    public init(row: Row) throws {
        id = try row.decode(forColumn: "id")
        name = try row.text("name")
        createdAt = try row.date("created_at")
        updatedAt = try row.date("updated_at")
    }
}
