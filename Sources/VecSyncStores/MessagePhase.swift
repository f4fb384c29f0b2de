/// The Post Chain phase a message belongs to. Unknown phases (from a newer app version on
/// another device) are kept as they are.
public struct MessagePhase: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral, StoredName {
    /// The phase's name as stored in `messages.phase`.
    public var rawValue: String

    /// A phase from its stored name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A phase from a literal: `let phase: MessagePhase = "experience"`.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// A phase from `messages.phase`; NULL reads as the empty name.
    init(storedText text: String?) { self.rawValue = text ?? "" }

    /// The user's message and the first response.
    public static let action: MessagePhase = "action"
    /// Prior experiences recalled by semantic search.
    public static let experience: MessagePhase = "experience"
    /// Reactions and parameter adjustments.
    public static let understanding: MessagePhase = "understanding"
    /// Web search results kept for later recall.
    public static let webSearch: MessagePhase = "web_search"
    /// Tool use and its outcome.
    public static let toolUse: MessagePhase = "tool_use"
}
