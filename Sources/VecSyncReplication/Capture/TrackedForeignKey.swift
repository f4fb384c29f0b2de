import GRDB

/// A foreign key from one column of a tracked table to the key of a tracked table: the
/// relation the change scan and the merge order rows by, so parents come before children
/// whatever order the tables were tracked in.
///
/// Only single-column constraints that refer to the parent's primary key count (those are
/// the ones a row can wait for); a table may refer to itself.
struct TrackedForeignKey {
    /// The referencing column's index in the child table's columns.
    let column: Int
    /// The referenced table.
    let parent: TrackedTable

    /// The foreign keys between `tables`, by child table name (as recorded).
    static func read(_ db: Database, tables: [TrackedTable]) throws -> [String: [TrackedForeignKey]] {
        var byName: [String: TrackedTable] = [:]
        for table in tables { byName[table.name.lowercased()] = table }
        var result: [String: [TrackedForeignKey]] = [:]
        for child in tables {
            let rows = try Row.fetchAll(
                db,
                sql:
                    "SELECT id, \"table\" AS parent, \"from\" AS source, \"to\" AS target FROM pragma_foreign_key_list(?)",
                arguments: [child.name])
            let byConstraint = Dictionary(grouping: rows) { $0["id"] as Int64 }
            for id in byConstraint.keys.sorted() {
                guard let parts = byConstraint[id], parts.count == 1 else { continue }
                let row = parts[0]
                let source: String = row["source"]
                guard let parent = byName[(row["parent"] as String).lowercased()],
                    let column = child.columns.firstIndex(where: { $0.lowercased() == source.lowercased() })
                else { continue }
                let target: String? = row["target"]
                guard target == nil || target?.lowercased() == parent.primaryKey.lowercased() else { continue }
                result[child.name, default: []].append(TrackedForeignKey(column: column, parent: parent))
            }
        }
        return result
    }

    /// Each table's depth in the graph of `links`: 0 for a table that refers to no other
    /// tracked table, otherwise one more than its deepest parent. Sorting by depth puts
    /// parents before children; a cycle (or a table referring to itself) is cut where it
    /// closes, so every table gets a depth.
    static func depths(of tables: [String], links: [String: [TrackedForeignKey]]) -> [String: Int] {
        var depth: [String: Int] = [:]
        var visiting = Set<String>()
        func visit(_ name: String) -> Int {
            if let known = depth[name] { return known }
            guard visiting.insert(name.lowercased()).inserted else { return 0 }
            var result = 0
            for link in links[name] ?? [] where link.parent.name.lowercased() != name.lowercased() {
                if visiting.contains(link.parent.name.lowercased()) { continue }
                result = max(result, visit(link.parent.name) + 1)
            }
            visiting.remove(name.lowercased())
            depth[name] = result
            return result
        }
        for name in tables { _ = visit(name) }
        return depth
    }
}
