import Foundation
import VecSyncCore

/// A conversation thread with its current FQAHO parameters (`threads` table).
///
/// Named `ChatThread` so that it does not shadow Foundation's `Thread`.
public struct ChatThread: Sendable, Hashable, Codable, FetchableRecord {
    /// The thread's id.
    public var id: String
    /// Its title.
    public var title: String
    /// When it was created.
    public var createdAt: Date
    /// When it last changed (new message, new parameters).
    public var updatedAt: Date
    /// The current K₀, α and m.
    public var parameters: ParameterSet

    /// Creates a thread value.
    public init(id: String, title: String, createdAt: Date, updatedAt: Date, parameters: ParameterSet) {
        self.id = id
        self.title = title
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.parameters = parameters
    }

    /// Decodes a `threads` row.
    public init(row: Row) throws {
        id = try row.decode(forColumn: "id")
        title = try row.text("title")
        createdAt = try row.date("created_at")
        updatedAt = try row.date("updated_at")
        parameters = try row.parameters()
    }
}
