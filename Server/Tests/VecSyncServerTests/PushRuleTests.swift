import Foundation
import Testing
import VecSyncServer

/// ``PushRule`` alone: what a push of `(since, through]` does against an origin's head and the
/// entry stored under the same range, marked damaged or not.
@Suite("Push rule")
struct PushRuleTests {
    static func incoming(_ since: Int64, _ through: Int64, _ tag: String = "", rows: Int64 = 1) -> IncomingChangeSet {
        let body = Data("\(since)-\(through)\(tag)".utf8)
        return IncomingChangeSet(
            origin: "o", since: since, through: through, rows: rows, sha256: sha256Hex(body), body: body)
    }

    static func stored(_ change: IncomingChangeSet, seq: Int64 = 1) -> ServerChangeSet {
        ServerChangeSet(
            seq: seq, origin: change.origin, since: change.since, through: change.through, rows: change.rows,
            size: Int64(change.body.count), sha256: change.sha256, receivedAt: 1)
    }

    @Test func newRangesAreStoredCoveredOrRefusedAsGaps() {
        #expect(PushRule.decide(Self.incoming(0, 5), head: 0, sameRange: nil) == nil)
        #expect(PushRule.decide(Self.incoming(3, 8), head: 5, sameRange: nil) == nil)
        #expect(PushRule.decide(Self.incoming(6, 9), head: 5, sameRange: nil) == .gap(head: 5))
        #expect(PushRule.decide(Self.incoming(2, 4), head: 5, sameRange: nil) == .covered(head: 5))
    }

    @Test func sameRangeIsDuplicateWithSameBytesAndConflictWithOthers() {
        let original = Self.stored(Self.incoming(0, 5))
        #expect(PushRule.decide(Self.incoming(0, 5), head: 5, sameRange: original) == .duplicate(original))
        #expect(PushRule.decide(Self.incoming(0, 5, "other"), head: 5, sameRange: original) == .conflict(original))
    }

    @Test func damagedRangeIsRepairedWithOtherBytesOrTheSame() {
        let original = Self.stored(Self.incoming(0, 5))
        #expect(
            PushRule.decide(Self.incoming(0, 5, "other"), head: 5, sameRange: original, sameRangeIsDamaged: true)
                == .repaired(original))
        #expect(
            PushRule.decide(Self.incoming(0, 5), head: 5, sameRange: original, sameRangeIsDamaged: true)
                == .repaired(original))
    }

    @Test func damageElsewhereDoesNotOpenOtherRanges() {
        // The mark belongs to one entry: a push of an overlapping but different range is
        // decided by the head alone, as without it.
        #expect(PushRule.decide(Self.incoming(0, 4, "other"), head: 5, sameRange: nil) == .covered(head: 5))
        #expect(PushRule.decide(Self.incoming(0, 6), head: 5, sameRange: nil) == nil)
    }

    @Test func rangesReachOnlyAsFarAsTheirRows() {
        // An empty change set never moves the head; a non-empty one at most 2^32 past it.
        #expect(PushRule.decide(Self.incoming(5, .max, rows: 0), head: 5, sameRange: nil) == .overreach(head: 5))
        #expect(PushRule.decide(Self.incoming(5, 6, rows: 0), head: 5, sameRange: nil) == .overreach(head: 5))
        #expect(PushRule.decide(Self.incoming(5, .max), head: 5, sameRange: nil) == .overreach(head: 5))
        #expect(
            PushRule.decide(Self.incoming(0, 5 + PushRule.maximumExtension + 1), head: 5, sameRange: nil)
                == .overreach(head: 5))
        #expect(PushRule.decide(Self.incoming(0, 5 + PushRule.maximumExtension), head: 5, sameRange: nil) == nil)
        // Covered or a repair stays what it was, empty or not.
        #expect(PushRule.decide(Self.incoming(0, 4, rows: 0), head: 5, sameRange: nil) == .covered(head: 5))
        let original = Self.stored(Self.incoming(0, 5))
        #expect(
            PushRule.decide(Self.incoming(0, 5, "x", rows: 0), head: 5, sameRange: original, sameRangeIsDamaged: true)
                == .repaired(original))
    }
}
