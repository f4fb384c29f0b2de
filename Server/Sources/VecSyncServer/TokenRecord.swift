/// A stored token: its id (printed at issue, used to revoke) and SHA-256, never the secret.
/// A space token opens the whole space; a device token (``device`` set) is bound to one
/// device id: it registers and pushes as that device only.
public struct TokenRecord: Sendable, Hashable, Codable {
    /// A short public id.
    public var id: String
    /// Hex SHA-256 of the token.
    public var hash: String
    /// Free text: whom or what it was issued to.
    public var label: String
    /// When it was issued.
    public var createdAt: Int64
    /// When it was revoked; nil while live.
    public var revokedAt: Int64?
    /// The device id (sync site id) a device token is bound to; nil for a space token.
    public var device: String?

    /// Creates a token record.
    public init(
        id: String, hash: String, label: String, createdAt: Int64, revokedAt: Int64? = nil, device: String? = nil
    ) {
        self.id = id
        self.hash = hash
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.device = device
    }
}
