import Foundation

/// The bounded-merge loop every transport runs: what it reads (files, listed change sets)
/// is gathered, in order, into groups that stay within ``Replica/Options/maximumMergeRows``
/// and ``Replica/Options/maximumMergeBytes``, and each group is handed whole to `commit`,
/// which merges it in one transaction (``Replica/mergeGroup(_:bytes:events:)``, or
/// ``Replica/recoverLostChanges(_:)``).
///
/// A group is committed before an item would take it over the limits, so one item larger
/// than the limits is a group of its own. Items that carry no rows and no bytes (a listed
/// change set that is skipped) ride along with the next group.
///
/// ```swift
/// var groups = BoundedMerge<ChangeSet>(replica) { group, bytes in
///     _ = try replica.mergeGroup(group, bytes: bytes, events: events)
/// }
/// for changeSet in read { try groups.add(changeSet, rows: changeSet.records.count, bytes: size) }
/// try groups.finish()
/// ```
package struct BoundedMerge<Item> {
    private let replica: Replica
    private let commit: (_ items: [Item], _ bytes: Int) throws -> Void
    private var items: [Item] = []
    private var rows = 0
    private var bytes = 0

    /// Groups for `replica`'s limits, each handed to `commit` with its bytes.
    package init(_ replica: Replica, commit: @escaping (_ items: [Item], _ bytes: Int) throws -> Void) {
        self.replica = replica
        self.commit = commit
    }

    /// Adds `item`, of `rows` rows and `bytes` bytes, committing the group held first when the
    /// item would take it over the limits.
    package mutating func add(_ item: Item, rows itemRows: Int, bytes itemBytes: Int) throws {
        if rows > 0 || bytes > 0,
            replica.mergeGroupExceedsLimits(rows: rows + itemRows, bytes: bytes + itemBytes)
        {
            try flush()
        }
        items.append(item)
        rows += itemRows
        bytes += itemBytes
    }

    /// Commits the group held (even an empty one: `commit` may record a cursor).
    package mutating func finish() throws {
        try flush()
    }

    private mutating func flush() throws {
        let group = items
        let groupBytes = bytes
        items.removeAll()
        rows = 0
        bytes = 0
        try commit(group, groupBytes)
    }
}
