import Foundation
import GRDB
import VecSyncCore

extension ChangeSetMerge {
    /// How a change set's columns of one table map onto the local table when the two
    /// definitions differ (columns added, dropped or renamed on one side).
    struct ColumnMapping {
        /// For each of the change set's columns, the local column it writes (nil: none).
        let local: [Int?]
        /// The change set's columns this replica does not have yet: kept for later, by name.
        let kept: [(index: Int, name: String)]
        /// The change set's columns dropped here with `Replica.alter`: ignored.
        let retired: [String]
        /// Local columns the origin does not have: a new row takes their DEFAULT.
        let lacking: Set<Int>
    }

    /// A reason a change set's table cannot merge into the local one.
    struct Incompatible: Error { let reason: String }

    /// How `remote`'s columns map onto `local`'s, or why they cannot: the key, its kind and
    /// the authority must be the same, and every column both have (by name, or by a rename
    /// recorded in `retired`: old name to new name, nil for a dropped column) the same
    /// declared type.
    static func mapping(
        from remote: ChangeSet.Table, to local: TrackedTable, retired: [String: String?]
    ) -> Result<ColumnMapping, Incompatible> {
        guard let origin = remote.trackedTable else {
            return .failure(
                Incompatible(reason: "the change set does not carry the origin's column types (format 2 or older)"))
        }
        guard origin.primaryKey.lowercased() == local.primaryKey.lowercased(), origin.keyKind == local.keyKind else {
            return .failure(Incompatible(reason: "the keys differ"))
        }
        guard origin.authority == local.authority else {
            return .failure(Incompatible(reason: "the authorities differ"))
        }
        guard origin.hasLocalKeys == local.hasLocalKeys else {
            return .failure(
                Incompatible(
                    reason: local.hasLocalKeys
                        ? "its integer ids are local to each replica here and the same on every replica there"
                        : "its integer ids are the same on every replica here and local to each replica there"))
        }
        var positions: [String: Int] = [:]
        for (index, name) in local.columns.enumerated() { positions[name.lowercased()] = index }
        var map: [Int?] = []
        var kept: [(index: Int, name: String)] = []
        var dropped: [String] = []
        var used = Set<Int>()
        for (index, name) in origin.columns.enumerated() {
            var target = positions[name.lowercased()]
            if target == nil, let renamed = retired.first(where: { $0.key.lowercased() == name.lowercased() }) {
                guard let newName = renamed.value else {
                    dropped.append(name)
                    map.append(nil)
                    continue
                }
                target = positions[newName.lowercased()]
            }
            guard let target else {
                kept.append((index, name))
                map.append(nil)
                continue
            }
            guard !used.contains(target) else {
                return .failure(
                    Incompatible(
                        reason: "column \(name) and another column there both map to \(local.columns[target]) here"))
            }
            guard origin.declaredTypes[index] == local.declaredTypes[target] else {
                return .failure(
                    Incompatible(
                        reason:
                            "column \(name) is \(origin.declaredTypes[index]) there and \(local.columns[target]) is \(local.declaredTypes[target]) here"
                    ))
            }
            used.insert(target)
            map.append(target)
        }
        let lacking = Set(local.columns.indices).subtracting(used)
        return .success(ColumnMapping(local: map, kept: kept, retired: dropped, lacking: lacking))
    }
}
