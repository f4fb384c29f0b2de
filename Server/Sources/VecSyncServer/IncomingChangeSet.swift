import Foundation

/// A change set a device pushed, with the header fields the server read from it.
public struct IncomingChangeSet: Sendable, Hashable {
    /// Its origin site.
    public var origin: String
    /// The origin sequence it starts after.
    public var since: Int64
    /// The origin sequence it runs through.
    public var through: Int64
    /// Its row count.
    public var rows: Int64
    /// Hex SHA-256 of `body`.
    public var sha256: String
    /// The serialized change set.
    public var body: Data
    /// Its writes, checked and recorded by the store when it would store the change set
    /// (``WriteAttestation``); nil: not checked (an administrator's or a test's push).
    public var writes: WriteAttestation?
    /// The most bytes of change sets the space may hold with this one stored (the server's
    /// per-space quota); past it the push is ``PushOutcome/overQuota(held:quota:)`` and
    /// nothing is stored. nil: no quota.
    public var quotaBytes: Int64?

    /// A change set with its header fields.
    public init(
        origin: String, since: Int64, through: Int64, rows: Int64, sha256: String, body: Data,
        writes: WriteAttestation? = nil
    ) {
        self.origin = origin
        self.since = since
        self.through = through
        self.rows = rows
        self.sha256 = sha256
        self.body = body
        self.writes = writes
    }
}
