import Foundation
import GRDB
import VecSyncCore

/// Step 4 of a merge (``ChangeSetMerge`` lists the steps): the change set's records with
/// local keys. A table with local keys (``TrackedTable/hasLocalKeys``) names its rows on the
/// wire by identity (origin site, origin's id); here each becomes the local id the
/// ``IdentityMap`` gives it, before any record merges, so a child translated later finds the
/// parents of the same change set. Read-only once made; the identities it reserves are kept
/// in the merge's ``MergeState``.
struct KeyTranslation {
    /// The change set's records with local keys, by position; a record whose key cannot be
    /// translated keeps its own, and ``untranslatable`` says why.
    let records: [ChangeSet.Record]
    /// Why a record's key has no local id here, by position.
    let untranslatable: [Int: String]
    /// Keys of live rows in the change set, by table name: parents that arrive with their children.
    let liveKeys: [String: Set<DatabaseValue>]
    /// Foreign keys of tracked tables whose parent has local keys, by child table name.
    let identityLinks: [String: [TrackedForeignKey]]
    let localSite: SiteID

    /// Gives every record of a table with local keys the local id of its identity (a new
    /// identity gets a new id and an entry in the map), and notes the keys of live rows. A
    /// key of the wrong form (an integer where an identity is due, an identity in a table
    /// whose ids are the same everywhere) leaves its record untranslated, to be quarantined.
    init(_ db: Database, _ changeSet: ChangeSet, tables: MergeTables, localSite: SiteID, state: inout MergeState)
        throws
    {
        self.localSite = localSite
        let tracked = tables.tracked.values.sorted { $0.name < $1.name }
        var identityLinks: [String: [TrackedForeignKey]] = [:]
        if tracked.contains(where: \.hasLocalKeys) {
            state.translateIdentities(with: try IdentityMap.Incoming(db, localSite: localSite))
            identityLinks = try IdentityMap.links(db, tables: tracked)
        }
        self.identityLinks = identityLinks
        var records = changeSet.records
        var untranslatable: [Int: String] = [:]
        var liveKeys: [String: Set<DatabaseValue>] = [:]
        for index in records.indices {
            let record = records[index]
            let remote = changeSet.tables[record.table]
            if let table = tables.statements(record.table)?.table {
                switch (record.key, table.hasLocalKeys) {
                case (.identity(let site, let id), true):
                    records[index].key = .integer(
                        try state.localID(site: site, id: id, in: table, localSite: localSite, db))
                case (.identity, false):
                    untranslatable[index] =
                        "its key \(record.key.databaseValue) names a row by identity, but \(table.name) keeps ids the same on every replica here"
                case (_, true):
                    untranslatable[index] =
                        "its key is not an identity, but \(table.name) has ids local to each replica here"
                default:
                    break
                }
            }
            if record.isLive && untranslatable[index] == nil {
                liveKeys[remote.name, default: []].insert(records[index].key.databaseValue)
            }
        }
        self.records = records
        self.untranslatable = untranslatable
        self.liveKeys = liveKeys
    }

    /// The values of `record` (laid out as the local `table`) in foreign keys that refer to a
    /// table with local keys, translated from identities to local ids (a parent not here
    /// yet gets its id reserved, and the record waits for it as for any parent); nil, or why
    /// a value stays an identity: a column that refers to no table with local keys here.
    func translateValues(
        _ record: inout ChangeSet.Record, table: TrackedTable, state: inout MergeState, _ db: Database
    ) throws -> String? {
        guard record.isLive else { return nil }
        for link in identityLinks[table.name] ?? [] where record.columns.indices.contains(link.column) {
            guard var column = record.columns[link.column], case .identity(let site, let id) = column.value
            else { continue }
            column.value = .integer(try state.localID(site: site, id: id, in: link.parent, localSite: localSite, db))
            record.columns[link.column] = column
        }
        for (index, column) in record.presentColumns {
            if case .identity = column.value {
                return
                    "its \(table.columns[index]) names a row by identity (\(column.value.databaseValue)), but here it is "
                    + "no foreign key to a table with ids local to each replica"
            }
        }
        return nil
    }

    /// `value` of column `index` of `table` as every replica names it, for ordering two
    /// writes under one tag: a foreign key to a table with local keys holds a local id, which
    /// differs from replica to replica, so it is compared as its row's identity.
    func comparable(_ value: SyncValue, column index: Int, of table: TrackedTable, sites: [Int64: SiteID], _ db: Database)
        throws -> SyncValue
    {
        guard case .integer(let id) = value,
            let link = identityLinks[table.name]?.first(where: { $0.column == index })
        else { return value }
        return try IdentityMap.Outgoing(db, localSite: localSite, sites: sites).identity(table: link.parent.name, id: id)
    }
}
