import GRDB
import VecSyncCore

extension IdentityMap {
    /// Local ids to identities, for the change scan.
    struct Outgoing {
        private let localSite: SiteID
        private let sites: [Int64: SiteID]
        private let lookup: Statement

        /// Reads the map of `db` for the replica `localSite`, whose site ordinals are `sites`.
        init(_ db: Database, localSite: SiteID, sites: [Int64: SiteID]) throws {
            self.localSite = localSite
            self.sites = sites
            lookup = try db.makeStatement(sql: "SELECT origin, oid FROM \(EngineNames.ids) WHERE tbl = ? AND local = ?")
        }

        /// The identity of the row of `table` whose local id is `id`.
        func identity(table: String, id: Int64) throws -> SyncValue {
            guard let row = try Row.fetchOne(lookup, arguments: [table, id]) else {
                return .identity(site: localSite, id: id)
            }
            let ordinal: Int64 = row[0]
            guard let site = sites[ordinal] else {
                throw VecSyncError.notAReplica(
                    reason: "\(EngineNames.ids) refers to unknown site ordinal \(ordinal) (\(EngineNames.sites) damaged)")
            }
            return .identity(site: site, id: row[1])
        }

        /// `record` of `table` with its key (when the table has local keys) and the integer
        /// values of its foreign keys to such tables (`links`) as identities.
        func translate(_ record: ChangeSet.Record, table: TrackedTable, links: [TrackedForeignKey]) throws
            -> ChangeSet.Record
        {
            var sent = record
            if table.hasLocalKeys, case .integer(let id) = record.key {
                sent.key = try identity(table: table.name, id: id)
            }
            for link in links where sent.columns.indices.contains(link.column) {
                guard var column = sent.columns[link.column], case .integer(let id) = column.value else { continue }
                column.value = try identity(table: link.parent.name, id: id)
                sent.columns[link.column] = column
            }
            return sent
        }
    }
}
