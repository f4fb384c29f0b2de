/// Which token a registered device belongs to: the one that registered it first (or last
/// claimed it), so that no other token of the space can push, register or record pulls as
/// that device — a space token that could would make the device's changes vanish (see
/// ``PushRule``) or rename it.
///
/// A device token issued for the device (`token issue --device`) may always act as it, and
/// claims it when it registers; a device whose token was revoked may be claimed by the next
/// token that registers it. A device registered before owners were recorded has none: the
/// next token that registers it claims it.
public struct DeviceOwner: Sendable, Hashable {
    /// The owning token's id; nil: none recorded.
    public var tokenID: String?
    /// Whether that token is live (not revoked).
    public var isLive: Bool

    /// An owner record.
    public init(tokenID: String?, isLive: Bool) {
        self.tokenID = tokenID
        self.isLive = isLive
    }

    /// Whether `grant` may act as the device (the grant's device binding, if any, is
    /// checked apart: a token bound to another device is refused before this).
    public func allows(_ grant: TokenGrant) -> Bool {
        grant.device != nil || tokenID == nil || tokenID == grant.tokenID || !isLive
    }
}
