/// What a live token opens: one space, as any device or as one.
public struct TokenGrant: Sendable, Hashable {
    /// The token's public id (the key of its rate limit).
    public var tokenID: String
    /// The space's internal id.
    public var spaceID: Int64
    /// The space's name.
    public var spaceName: String
    /// The one device id the token may register and push as; nil: any.
    public var device: String?

    /// A grant.
    public init(tokenID: String, spaceID: Int64, spaceName: String, device: String? = nil) {
        self.tokenID = tokenID
        self.spaceID = spaceID
        self.spaceName = spaceName
        self.device = device
    }

    /// Whether the token may act as device `site`.
    public func allows(site: String) -> Bool {
        device == nil || device == site
    }
}
