/// What a sync server answers to an accepted push (`POST /v1/spaces/{space}/changesets`,
/// schema `PushResult`).
public struct PushResult: WireBody, Hashable {
    /// What the server did with an accepted change set; on the wire, the case's name.
    public enum Outcome: String, Codable, Hashable, Sendable, CaseIterable {
        /// Stored as a new change set of the space (`201 Created`).
        case stored
        /// The same range with the same bytes is held already.
        case duplicate
        /// Every row of the range is held already (from its authors): nothing stored.
        case covered
        /// The range was held damaged; these bytes replace it.
        case repaired
    }

    /// What the server did.
    public var result: Outcome
    /// The change set's place in the space's order; nil for `covered` (nothing stored).
    public var seq: Int64?
    /// How far the server holds the origin's changes now.
    public var head: Int64

    /// A push's answer.
    public init(result: Outcome, seq: Int64?, head: Int64) {
        self.result = result
        self.seq = seq
        self.head = head
    }

    /// A change set stored as the space's third.
    public static let example = PushResult(result: .stored, seq: 3, head: 42)
}
