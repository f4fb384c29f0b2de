import VecSyncWire

/// The one rule every back end applies to a push, so both decide alike.
///
/// An origin's change sets are held without a hole from sequence 0 up to its *head*. A
/// change set `(since, through]` is
/// - a repair when that exact range is stored and marked damaged (its stored bytes no longer
///   match their SHA-256, found when it was served): the incoming bytes, which the server has
///   checked against their own SHA-256, replace the stored ones under the same sequence number
///   and the mark is cleared. Only the origin can push its range, and it re-publishes what it
///   holds now, so the bytes usually differ from the original's; the same bytes repair too;
/// - otherwise a duplicate when that exact range is stored with the same SHA-256 (the retry
///   of a push whose answer was lost), and a conflict when it is stored with other bytes;
/// - refused as a gap when `since > head`: the server would hold a hole that no puller
///   can merge past;
/// - covered when `through <= head`: every row is already held, nothing is stored;
/// - refused as an overreach when it would move the head without carrying a row, or more than
///   ``maximumExtension`` past it: a change set's range is its origin's sequence numbers, and
///   a push may extend it only by the changes it carries. (An empty change set claiming
///   `(head, 2^63 − 1]` would otherwise make every later push of the real device "covered":
///   answered, and never stored.) Honest clients never push an empty change set; a non-empty
///   one can span many sequence numbers (each write of a row takes one, the row travels
///   once), so the bound is the one clients already use to tell a plausible head from a
///   forged one;
/// - stored otherwise, and the head moves to `through`. It may overlap the stored ones
///   (`since < head`): after a restore from backup the client renumbers its new changes
///   above the head and pushes them from its older cursor, and a puller merges the
///   overlap twice, harmlessly.
public enum PushRule {
    /// What to do with a change set, given the origin's head, the entry stored under the
    /// same range if any, and whether that entry is marked damaged. Nil means: store it;
    /// ``PushOutcome/repaired(_:)`` means: replace the stored entry's body, SHA-256 and row
    /// count with the incoming ones and clear its mark (the store answers the same case with
    /// the entry as it is then).
    public static func decide(
        _ incoming: IncomingChangeSet, head: Int64, sameRange: ServerChangeSet?, sameRangeIsDamaged: Bool = false
    ) -> PushOutcome? {
        if let sameRange {
            if sameRangeIsDamaged { return .repaired(sameRange) }
            return sameRange.sha256 == incoming.sha256 ? .duplicate(sameRange) : .conflict(sameRange)
        }
        if incoming.since > head { return .gap(head: head) }
        if incoming.through <= head { return .covered(head: head) }
        if incoming.rows == 0 || incoming.through - head > maximumExtension { return .overreach(head: head) }
        return nil
    }

    /// How far past its origin's head one push may move it: 2^32 sequence numbers, the range
    /// `FolderTransport` and `HTTPTransport` trust as an origin's own (a head further than this
    /// past a replica's own sequence is not one it made).
    public static let maximumExtension: Int64 = 1 << 32
}
