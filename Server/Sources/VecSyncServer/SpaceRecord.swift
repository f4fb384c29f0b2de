/// A space: one user's library, the unit of isolation.
public struct SpaceRecord: Sendable, Hashable, Codable {
    /// Internal id, used by the other tables.
    public var id: Int64
    /// The name in URLs (`/v1/spaces/{name}/…`).
    public var name: String
    /// When it was created.
    public var createdAt: Int64
}
