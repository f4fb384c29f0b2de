/// What a sync server answers to an accepted push (`POST /v1/spaces/{space}/changesets`,
/// schema `PushResult`).
public struct PushResult: WireBody, Hashable {
    /// `stored`, `duplicate`, `covered` or `repaired`.
    public var result: String
    /// The change set's place in the space's order; nil for `covered` (nothing stored).
    public var seq: Int64?
    /// How far the server holds the origin's changes now.
    public var head: Int64

    /// A push's answer.
    public init(result: String, seq: Int64?, head: Int64) {
        self.result = result
        self.seq = seq
        self.head = head
    }

    /// A change set stored as the space's third.
    public static let example = PushResult(result: "stored", seq: 3, head: 42)
}
