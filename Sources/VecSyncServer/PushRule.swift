/// The one rule every back end applies to a push, so both decide alike.
///
/// An origin's change sets are held without a hole from sequence 0 up to its *head*. A
/// change set `(since, through]` is
/// - a duplicate when that exact range is stored with the same SHA-256 (the retry of a push
///   whose answer was lost), and a conflict when it is stored with other bytes;
/// - refused as a gap when `since > head`: the server would hold a hole that no puller
///   can merge past;
/// - covered when `through <= head`: every row is already held, nothing is stored;
/// - stored otherwise, and the head moves to `through`. It may overlap the stored ones
///   (`since < head`): after a restore from backup the client renumbers its new changes
///   above the head and pushes them from its older cursor, and a puller merges the
///   overlap twice, harmlessly.
public enum PushRule {
    /// What to do with a change set, given the origin's head and the entry stored under the
    /// same range if any. Nil means: store it.
    public static func decide(_ incoming: IncomingChangeSet, head: Int64, sameRange: ChangeSetEntry?) -> PushOutcome? {
        if let sameRange {
            return sameRange.sha256 == incoming.sha256 ? .duplicate(sameRange) : .conflict(sameRange)
        }
        if incoming.since > head { return .gap(head: head) }
        if incoming.through <= head { return .covered(head: head) }
        return nil
    }
}
