/// Whether a message was approved or refused. Unknown statuses are kept as they are.
public struct ApprovalStatus: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral, StoredName {
    /// The status as stored in `messages.approval_status`.
    public var rawValue: String

    /// A status from its stored name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A status from a literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// A status from `messages.approval_status`; NULL reads as ``pending``.
    init(storedText text: String?) { self.rawValue = text ?? Self.pending.rawValue }

    /// Not yet judged (every new message).
    public static let pending: ApprovalStatus = "pending"
    /// Approved: raises k0 and alpha, lowers m.
    public static let approved: ApprovalStatus = "approved"
    /// Refused: lowers k0 and alpha, raises m.
    public static let refused: ApprovalStatus = "refused"
}
