import Foundation
import VecSyncCore

/// A participant in threads (`users` table).
public struct ChatUser: Sendable, Hashable, Codable, FetchableRecord {
    /// The user's id.
    public var id: String
    /// The display name, if known.
    public var name: String?
    /// When the user last wrote a message.
    public var lastActive: Date?

    /// Creates a user value.
    public init(id: String, name: String? = nil, lastActive: Date? = nil) {
        self.id = id
        self.name = name
        self.lastActive = lastActive
    }

    /// Decodes a `users` row.
    public init(row: Row) throws {
        id = try row.decode(forColumn: "id")
        name = try row.decode(forColumn: "name")
        lastActive = try row.optionalDate("last_active")
    }
}
