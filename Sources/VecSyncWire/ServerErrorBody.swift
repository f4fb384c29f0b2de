/// The body of every error a sync server answers (schema `ServerErrorBody`):
/// `{"error": code, "message": text}`, plus `head` where it helps the client.
public struct ServerErrorBody: WireBody, Hashable {
    /// A stable, machine-readable word: `gap`, `sha256-mismatch`, `malformed`, …
    public var error: String
    /// A sentence for people.
    public var message: String
    /// For `gap` and `overreach`: how far the server holds the origin's changes.
    public var head: Int64?

    /// An error body.
    public init(error: String, message: String, head: Int64? = nil) {
        self.error = error
        self.message = message
        self.head = head
    }

    /// A refused push that would leave a hole.
    public static let example = ServerErrorBody(
        error: "gap", message: "'phone-1' has changes through 42 here; push from 42 or before", head: 42)
}
