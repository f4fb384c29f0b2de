import Foundation
import Testing
import VecSyncCore
import VecSyncReplication
import ServerTestSupport

/// `ChangeSet.folded`, which the server's snapshots rest on: the same state whatever the
/// order or grouping, and the state a replica holds after merging everything.
@Suite("Folding change sets")
struct FoldingTests {
    @Test func foldIsOrderIndependentAndMatchesAMerge() throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_000C)
        let seed = random.seed
        let left = try PhotoDevice("left", options: Replica.Options(maximumBatchRows: 5))
        let right = try PhotoDevice("right", options: Replica.Options(maximumBatchRows: 5))
        try left.addPhotos(12, prefix: "l", random: &random)
        try right.merge(everythingFrom: left)
        // Concurrent edits of the same rows, a delete, and new rows on both sides.
        try left.database.writer.write { db in
            try db.execute(sql: "UPDATE photos SET mood = 'left' WHERE source_id IN ('l-1', 'l-2')")
        }
        try right.database.writer.write { db in
            try db.execute(sql: "UPDATE photos SET mood = 'right', location_name = 'Oslo' WHERE source_id = 'l-2'")
        }
        _ = try right.photos.delete(sourceId: "l-5")
        try right.addPhotos(4, prefix: "r", random: &random)
        var history: [ChangeSet] = []
        try left.replica.forEachChangeSet(since: 0) { history.append($0) }
        try right.replica.forEachChangeSet(since: 0) { history.append($0) }
        #expect(history.count >= 4, "seed \(seed)")

        let forward = try ChangeSet.folded(history, origin: "fold", since: 0, through: 1)
        var shuffled = history
        shuffled.shuffle(using: &random)
        let backward = try ChangeSet.folded(shuffled, origin: "fold", since: 0, through: 1)
        let half = history.count / 2
        let inTwoSteps = try ChangeSet.folded(
            [try ChangeSet.folded(Array(history[..<half]), origin: "fold", since: 0, through: 1)]
                + history[half...], origin: "fold", since: 0, through: 1)
        for other in [backward, inTwoSteps] {
            #expect(Self.rows(other) == Self.rows(forward), "seed \(seed)")
        }
        // One record per row, and merging the fold gives what merging the history gives.
        #expect(Set(forward.records.map { "\($0.table) \($0.key)" }).count == forward.records.count)
        let fromFold = try PhotoDevice("from-fold")
        let fromHistory = try PhotoDevice("from-history")
        var carrier = forward
        carrier.origin = "left"
        try fromFold.replica.merge(carrier)
        try fromHistory.replica.merge(history.filter { $0.origin.rawValue == "left" })
        try fromHistory.replica.merge(history.filter { $0.origin.rawValue == "right" })
        #expect(try fromFold.snapshot() == fromHistory.snapshot(), "seed \(seed)")
        #expect(try fromFold.photos.photo(sourceId: "l-2")?.locationName == "Oslo")
        #expect(try fromFold.photos.photo(sourceId: "l-5") == nil)
    }

    /// Parts of a snapshot: every row in exactly one, folded part by part they hold what the
    /// whole fold holds, and the part of a row never changes between versions (a snapshot
    /// made again in as many parts reads each previous part alone).
    @Test func partsSplitTheRowsOnceAndForAll() throws {
        var random = SeededRandom(defaultSeed: 0x5E4F_0031)
        let seed = random.seed
        let device = try PhotoDevice("parts", options: Replica.Options(maximumBatchRows: 7))
        try device.addPhotos(60, prefix: "p", random: &random)
        try device.database.writer.write { db in
            try db.execute(sql: "UPDATE photos SET mood = 'later' WHERE rowid % 4 = 0")
        }
        var history: [ChangeSet] = []
        try device.replica.forEachChangeSet(since: 0) { history.append($0) }
        let whole = try ChangeSet.folded(history, origin: "fold", since: 0, through: 1)
        var union: Set<String> = []
        var records = 0
        for part in 0..<5 {
            let folded = try ChangeSet.folded(
                history.map { $0.rows(inPart: part, of: 5) }, origin: "fold", since: 0, through: 1)
            #expect(!folded.records.isEmpty, "seed \(seed): part \(part) of 5 is empty")
            union.formUnion(Self.rows(folded))
            records += folded.records.count
        }
        #expect(union == Self.rows(whole) && records == whole.records.count, "seed \(seed)")
        #expect(history[0].rows(inPart: 0, of: 1) == history[0])
        // Fixed values: FNV-1a of the table's name, a 0, a type byte and the key's bytes.
        #expect(ChangeSet.part(ofRowIn: "photos", key: .integer(1), among: 1_000) == 642)
        #expect(ChangeSet.part(ofRowIn: "photos", key: .text("p-1"), among: 1_000) == 977)
        #expect(ChangeSet.part(ofRowIn: "notes", key: .identity(site: "phone", id: 7), among: 1_000) == 102)
    }

    @Test func foldRefusesATableDefinedTwoWays() throws {
        let table = ChangeSet.Table(name: "t", primaryKey: "id", columns: ["a"], fingerprint: 1)
        var other = table
        other.columns = ["a", "b"]
        other.fingerprint = 2
        let first = ChangeSet(origin: "a", since: 0, through: 1, tables: [table])
        let second = ChangeSet(origin: "b", since: 0, through: 1, tables: [other])
        #expect(throws: VecSyncError.self) {
            _ = try ChangeSet.folded([first, second], origin: "fold", since: 0, through: 1)
        }
    }

    /// The records of a change set as a set of lines (records are in first-seen order).
    static func rows(_ changeSet: ChangeSet) -> Set<String> {
        Set(changeSet.records.map { "\(changeSet.tables[$0.table].name) \($0)" })
    }
}

extension PhotoDevice {
    /// Merges every change set `other` has made so far.
    func merge(everythingFrom other: PhotoDevice) throws {
        try other.replica.forEachChangeSet(since: 0) { try replica.merge($0) }
    }
}
