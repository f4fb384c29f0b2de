import Foundation
import Testing

@testable import VecSyncReplication

/// The one bounded-merge loop both transports run: how it cuts what they read into
/// transactions.
@Suite("Bounded merge groups")
struct BoundedMergeTests {
    /// The groups `items` (name, rows, bytes) are committed in, under the given limits.
    static func groups(_ items: [(String, Int, Int)], rows: Int, bytes: Int) throws -> [[String]] {
        let replica = try Fixture.replica(
            "a", options: Replica.Options(maximumMergeRows: rows, maximumMergeBytes: bytes))
        var committed: [[String]] = []
        var groups = BoundedMerge<String>(replica) { group, groupBytes in
            committed.append(group + ["\(groupBytes) bytes"])
        }
        for (name, itemRows, itemBytes) in items { try groups.add(name, rows: itemRows, bytes: itemBytes) }
        try groups.finish()
        return committed
    }

    @Test("a group is committed before an item would take it over the row limit; a larger item is a group alone")
    func rowLimit() throws {
        let items = [("a", 2, 10), ("b", 1, 10), ("c", 1, 10), ("d", 9, 10), ("e", 1, 10)]
        #expect(
            try Self.groups(items, rows: 3, bytes: 1_000)
                == [["a", "b", "20 bytes"], ["c", "10 bytes"], ["d", "10 bytes"], ["e", "10 bytes"]])
    }

    @Test("the byte limit cuts groups the same way")
    func byteLimit() throws {
        let items = [("a", 1, 400), ("b", 1, 500), ("c", 1, 200), ("d", 1, 100)]
        #expect(
            try Self.groups(items, rows: 100, bytes: 1_000)
                == [["a", "b", "900 bytes"], ["c", "d", "300 bytes"]])
    }

    @Test("items without rows or bytes ride with the next group, and finish commits even an empty group")
    func emptyItems() throws {
        #expect(try Self.groups([("skip", 0, 0), ("a", 3, 10)], rows: 3, bytes: 1_000) == [["skip", "a", "10 bytes"]])
        #expect(try Self.groups([], rows: 3, bytes: 1_000) == [["0 bytes"]])
    }
}
