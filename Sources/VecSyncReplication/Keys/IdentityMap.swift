import GRDB
import VecSyncCore

/// Row identities of tables with local keys (``TrackedTable/hasLocalKeys``): the one owner
/// of how a replica's own integer ids correspond to the identities change sets carry.
///
/// Each replica lets SQLite assign ids as always, so the app's ids (and
/// `last_insert_rowid()`) are its own and never change. Across replicas a row is named by
/// its identity: the site that created it and the id it got there
/// (``SyncValue/identity(site:id:)``). A row created here has no entry: its identity is
/// (this site, its id). A row that came from elsewhere has one in
/// `vecsync_ids(tbl, local, origin, oid)`, unique both ways (`origin` is a site ordinal of
/// `vecsync_sites`). One of this site's own rows has one (origin 0) only when its id was
/// taken meanwhile by a row from elsewhere: a database restored from a backup may merge
/// another site's row into the id a row of its lost future had, before that row comes back.
///
/// - The change scan (``Outgoing``) sends keys, and the values of foreign keys that refer
///   to such a table, as identities.
/// - A merge (``Incoming``) translates them back: an identity of this site is its own id; a
///   known one, the local id in the map; a new one gets the next id after every id the
///   table, its clock table, the map and `sqlite_sequence` know (so it never takes the id of
///   a deleted row whose tombstone is still to travel), and an entry.
/// - A child that names a parent not here yet reserves the parent's local id (an entry
///   without a row) and waits in quarantine for that row, as any child waits for its parent.
///   A local insert that takes a reserved id before the parent arrives drops the reservation
///   (``releaseReservationSQL(_:)``, in the capture triggers): the row is this site's own,
///   and the child, tried again, reserves another id.
///
/// Entries are never removed but for a reservation a local insert takes, so a tombstone
/// keeps its identity.
enum IdentityMap {
    /// The map table.
    static let tableName = EngineNames.ids

    /// Creates the map table and its index by identity.
    static let createSQL = """
        CREATE TABLE IF NOT EXISTS \(EngineNames.ids) (
          tbl TEXT NOT NULL,
          local INTEGER NOT NULL,
          origin INTEGER NOT NULL,
          oid INTEGER NOT NULL,
          PRIMARY KEY (tbl, local)) WITHOUT ROWID;
        CREATE UNIQUE INDEX IF NOT EXISTS \(EngineNames.idsIdentityIndex) ON \(EngineNames.ids) (tbl, origin, oid);
        """

    /// The capture-trigger statement that drops a reservation (an entry whose row has no
    /// clock row: a parent awaited by a quarantined child) of the id `new.<key>` a local write
    /// is about to give a row of `table`, so the row is this site's own.
    static func releaseReservationSQL(_ table: TrackedTable) -> String {
        """
        DELETE FROM \(EngineNames.ids) WHERE tbl = \(table.name.quotedSQLString) \
        AND local = new.\(table.primaryKey.quotedSQLIdentifier) AND \(TriggerSQL.notMerging) \
        AND NOT EXISTS (SELECT 1 FROM \(table.clockTable.quotedName) AS c WHERE c.pk = new.\(table.primaryKey.quotedSQLIdentifier))
        """
    }

    /// The foreign keys of `tables` whose parent has local keys, by child table name: the
    /// columns whose values travel as identities. Read whether or not SQLite enforces
    /// foreign keys on the connection.
    static func links(_ db: Database, tables: [TrackedTable]) throws -> [String: [TrackedForeignKey]] {
        guard tables.contains(where: \.hasLocalKeys) else { return [:] }
        return try TrackedForeignKey.read(db, tables: tables).compactMapValues { links in
            let mapped = links.filter(\.parent.hasLocalKeys)
            return mapped.isEmpty ? nil : mapped
        }
    }

    /// Identities to local ids, for a merge: finds, or makes, the local id of an identity.
    struct Incoming {
        private let db: Database
        private let localSite: SiteID
        private let lookup: Statement
        private let insert: Statement
        private let taken: Statement
        /// Per table (by name): the greatest id the clock table, the map and
        /// `sqlite_sequence` held when first needed, raised by each id handed out.
        private var floors: [String: Int64] = [:]
        /// Identities translated by this merge, with their local ids: a child's foreign key
        /// usually names a parent of the same change set (no local write can change them
        /// meanwhile: the capture triggers are silent during a merge).
        private var translated: [Translated: Int64] = [:]
        /// Per table: the greatest id of this site's own that this merge gave back to one of
        /// its identities. Such an id may have no row, clock row or entry yet (a database
        /// restored from a backup taking back its lost future), so a new id must pass it:
        /// otherwise a row from elsewhere translated before the row is written would share it.
        private var ownClaimed: [String: Int64] = [:]

        /// A table and an identity in it (the site by its ordinal here).
        private struct Translated: Hashable {
            let table: String
            let ordinal: Int64
            let id: Int64
        }

        /// Prepares the map of `db` for the replica `localSite`.
        init(_ db: Database, localSite: SiteID) throws {
            self.db = db
            self.localSite = localSite
            lookup = try db.cachedStatement(
                sql: "SELECT local FROM \(EngineNames.ids) WHERE tbl = ? AND origin = ? AND oid = ?")
            insert = try db.cachedStatement(
                sql: "INSERT INTO \(EngineNames.ids) (tbl, local, origin, oid) VALUES (?, ?, ?, ?)")
            taken = try db.cachedStatement(sql: "SELECT 1 FROM \(EngineNames.ids) WHERE tbl = ? AND local = ?")
        }

        /// The local id of the row of `table` whose identity is `site`, `id` (`ordinal`: the
        /// site's ordinal here, 0 for this site): the mapped id; for this site otherwise its
        /// own id, unless a row from elsewhere holds it; otherwise a new id, with its entry.
        mutating func localID(site: SiteID, id: Int64, ordinal: Int64, in table: TrackedTable) throws -> Int64 {
            let identity = Translated(table: table.name, ordinal: ordinal, id: id)
            if let known = translated[identity] { return known }
            let local: Int64
            if let known = try Int64.fetchOne(lookup, arguments: [table.name, ordinal, id]) {
                local = known
            } else if site == localSite, try Bool.fetchOne(taken, arguments: [table.name, id]) != true {
                local = id
                ownClaimed[table.name] = max(ownClaimed[table.name] ?? id, id)
            } else {
                local = try nextID(table)
                try insert.execute(arguments: [table.name, local, ordinal, id])
            }
            translated[identity] = local
            return local
        }

        /// The next id of `table` no row, clock row, map entry or `sqlite_sequence` has used,
        /// nor an own id this merge gave back.
        private mutating func nextID(_ table: TrackedTable) throws -> Int64 {
            let floor: Int64
            if let known = floors[table.name] {
                floor = known
            } else {
                var highest =
                    try Int64.fetchOne(db, sql: "SELECT max(pk) FROM \(table.clockTable.quotedName)") ?? 0
                highest = max(
                    highest,
                    try Int64.fetchOne(
                        db, sql: "SELECT max(local) FROM \(EngineNames.ids) WHERE tbl = ?", arguments: [table.name])
                        ?? 0)
                if try db.tableExists("sqlite_sequence") {
                    highest = max(
                        highest,
                        try Int64.fetchOne(
                            db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table.name]) ?? 0)
                }
                floor = highest
            }
            // Rows written meanwhile (a user trigger during the merge) count too.
            let rows =
                try Int64.fetchOne(
                    db.cachedStatement(
                        sql:
                            "SELECT max(\(table.primaryKey.quotedSQLIdentifier)) FROM \(table.name.quotedSQLIdentifier)"
                    )) ?? 0
            let highest = max(floor, rows, ownClaimed[table.name] ?? 0, 0)
            guard highest < Int64.max else {
                throw VecSyncError.schemaChanged(
                    table: table.name, reason: "its ids reach \(Int64.max): no id is left for rows from other replicas")
            }
            floors[table.name] = highest + 1
            return highest + 1
        }
    }
}
