import VecSyncWire

/// What a push did.
public enum PushOutcome: Sendable, Hashable {
    /// Stored under this sequence number.
    case stored(ServerChangeSet)
    /// The same range with the same bytes is already stored (under this entry): nothing stored.
    case duplicate(ServerChangeSet)
    /// Every row of the range is already held (it ends at or before the origin's head):
    /// nothing stored.
    case covered(head: Int64)
    /// The change set starts after the origin's head: storing it would leave a hole.
    case gap(head: Int64)
    /// The same range is stored with different bytes.
    case conflict(ServerChangeSet)
    /// The same range was stored and marked damaged: the incoming bytes replaced the stored
    /// ones under the same sequence number (this entry, as it is now) and the mark is cleared.
    case repaired(ServerChangeSet)
    /// The origin has not registered in this space.
    case unregisteredOrigin
    /// The change set claims more of its origin's range than it carries (``PushRule``): an
    /// empty one that would move the head, or one reaching implausibly far past it.
    case overreach(head: Int64)
    /// A row inside claims a write its origin did not make and the server does not hold
    /// from its author, or an authority count past the authority's (``WriteAttestation``).
    case forged(String)
    /// Storing it would take the space's change sets past ``IncomingChangeSet/quotaBytes``:
    /// they hold `held` bytes now; nothing stored.
    case overQuota(held: Int64, quota: Int64)
}
