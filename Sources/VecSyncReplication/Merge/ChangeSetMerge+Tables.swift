import Foundation
import GRDB
import VecSyncCore

/// Step 1 of a merge (``ChangeSetMerge`` lists the steps): how each table of a change set
/// merges here, and what the merge must respect between tables (foreign keys, vec0 indexes).
/// Made once, before anything is written; read-only after.
struct MergeTables {
    /// How the records of one of the change set's tables merge here.
    enum TableMatch {
        /// Into the local table, through these statements.
        case merge(ChangeSetMerge.TableStatements)
        /// Not at all for now: each record is quarantined with the reason.
        case quarantine(String)
        /// Not at all: the table was dropped here with `Replica.alter`.
        case retired
    }

    /// How each of the change set's tables merges here, by position.
    let matches: [TableMatch]
    /// Every tracked table, by lower-cased name.
    let tracked: [String: TrackedTable]
    /// Foreign keys between tracked tables, by child table name; empty when SQLite does not
    /// enforce foreign keys on this connection.
    let foreignKeys: [String: [TrackedForeignKey]]
    /// The vec0 indexes of each table: the embedding column's index and the index.
    let vectorColumns: [String: [(column: Int, index: VectorIndex)]]
    /// Columns (or whole tables: an empty list) of the change set dropped here, by table.
    let retiredIgnored: [String: [String]]

    /// The statements of the change set's table at `position`, when it merges here.
    func statements(_ position: Int) -> ChangeSetMerge.TableStatements? {
        guard matches.indices.contains(position), case .merge(let statements) = matches[position] else { return nil }
        return statements
    }

    /// Step 1: adopts local schema changes (a column added to a tracked table), then matches
    /// each table of the change set with the local one. One with the same definition merges
    /// by position; one whose definition differs (columns added, dropped or renamed on one
    /// side: the change set carries the origin's whole definition from format 3 on) merges
    /// the columns both know, when key, key kind, authority and the shared columns' types
    /// agree, keeping values of columns not here yet for later (``keep(_:mapping:table:)``).
    /// A table that cannot merge here — not tracked, incompatible — has its records
    /// quarantined with the reason, and the other tables merge (one table's schema never
    /// stops the others'); a table dropped here with `Replica.alter` is ignored, as reported.
    init(_ db: Database, _ changeSet: ChangeSet, localSite: SiteID) throws {
        if try !MergingFlag.isSet(db) {
            _ = try Replica.adoptSchemaChanges(db, site: localSite)
        }
        var localTables: [String: TrackedTable] = [:]
        var trackedTables: [String: TrackedTable] = [:]
        var suspended: [String: String] = [:]
        var matches: [TableMatch] = []
        var retiredIgnored: [String: [String]] = [:]
        for table in try Replica.recordedTables(db) {
            if let reason = try Replica.schemaState(db, of: table).suspension {
                suspended[table.name] = reason
                continue
            }
            localTables[table.name] = table
            trackedTables[table.name.lowercased()] = table
        }
        (vectorColumns, foreignKeys) = try Self.readConstraints(db, trackedTables)
        self.tracked = trackedTables
        let retired = try Replica.retiredColumns(db)
        for remote in changeSet.tables {
            guard let local = localTables[remote.name] ?? Self.renamedTable(remote.name, retired, localTables) else {
                if retired[remote.name]?[""] != nil {
                    matches.append(.retired)
                    retiredIgnored[remote.name] = []
                } else if let reason = suspended[remote.name] {
                    matches.append(
                        .quarantine("table \(remote.name) does not sync here until its schema is fixed: \(reason)"))
                } else {
                    matches.append(.quarantine(VecSyncError.tableNotTracked(table: remote.name).description))
                }
                continue
            }
            if local.fingerprint == remote.fingerprint, local.columns == remote.columns,
                local.primaryKey == remote.primaryKey
            {
                matches.append(.merge(try ChangeSetMerge.TableStatements(db, local)))
                continue
            }
            switch ChangeSetMerge.mapping(from: remote, to: local, retired: retired[local.name] ?? [:]) {
            case .success(let mapping):
                matches.append(.merge(try ChangeSetMerge.TableStatements(db, local, mapping: mapping)))
                if !mapping.retired.isEmpty { retiredIgnored[local.name] = mapping.retired }
            case .failure(let reason):
                let mismatch = VecSyncError.changeSetSchemaMismatch(
                    table: remote.name,
                    local:
                        "fingerprint \(local.fingerprintHex), key \(local.primaryKey), columns \(local.columns.joined(separator: ","))"
                        + (local.authority.map { ", authority \($0)" } ?? ""),
                    remote:
                        "fingerprint \(FNV1a.hex(remote.fingerprint)), key \(remote.primaryKey), columns \(remote.columns.joined(separator: ","))"
                        + (remote.definition?.authority.map { ", authority \($0)" } ?? ""))
                matches.append(.quarantine("\(mismatch.description) (\(reason))"))
            }
        }
        self.matches = matches
        self.retiredIgnored = retiredIgnored
    }

    /// The local table a table of another name became here with `Replica.alter` (`ALTER
    /// TABLE … RENAME TO`, recorded in `vecsync_retired` with an empty column), following
    /// renames of renames; nil when `name` was not renamed here.
    static func renamedTable(
        _ name: String, _ retired: [String: [String: String?]], _ tables: [String: TrackedTable]
    ) -> TrackedTable? {
        var current = name
        for _ in 0..<8 {
            guard case .some(.some(let next)) = retired[current]?[""] else { return nil }
            if let table = tables[next] { return table }
            current = next
        }
        return nil
    }

    /// Reads the vec0 indexes of the tracked tables and the foreign keys between them
    /// (single-column, referencing the parent's key).
    private static func readConstraints(_ db: Database, _ trackedTables: [String: TrackedTable]) throws -> (
        [String: [(column: Int, index: VectorIndex)]], [String: [TrackedForeignKey]]
    ) {
        var vectorColumns: [String: [(column: Int, index: VectorIndex)]] = [:]
        for index in try VectorIndex.registered(in: db) {
            guard let table = trackedTables[index.table.lowercased()],
                let column = table.columns.firstIndex(where: { $0.lowercased() == index.embeddingColumn.lowercased() })
            else { continue }
            vectorColumns[table.name, default: []].append((column, index))
        }
        guard try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true else { return (vectorColumns, [:]) }
        return (vectorColumns, try TrackedForeignKey.read(db, tables: trackedTables.values.sorted { $0.name < $1.name }))
    }

    /// The change set's records with parents before children: by the depth of their table
    /// in the graph of foreign keys between tracked tables (``TrackedForeignKey``), in the
    /// change set's order within one depth. A change set whose tables are not related keeps
    /// its order. Returns the records' positions.
    func mergeOrder(of changeSet: ChangeSet) -> [Int] {
        let inOrder = Array(changeSet.records.indices)
        guard !foreignKeys.isEmpty, changeSet.tables.count > 1 else { return inOrder }
        let depths = TrackedForeignKey.depths(of: Array(foreignKeys.keys), links: foreignKeys)
        let tableDepth = changeSet.tables.map { table in
            tracked[table.name.lowercased()].flatMap { depths[$0.name] } ?? 0
        }
        guard Set(tableDepth).count > 1 else { return inOrder }
        return changeSet.records.enumerated().sorted { a, b in
            let da = tableDepth.indices.contains(a.element.table) ? tableDepth[a.element.table] : 0
            let db = tableDepth.indices.contains(b.element.table) ? tableDepth[b.element.table] : 0
            return da != db ? da < db : a.offset < b.offset
        }.map(\.offset)
    }
}
