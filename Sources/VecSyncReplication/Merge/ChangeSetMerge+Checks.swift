import Foundation
import GRDB
import VecSyncCore

// Steps 1 to 4 of a merge (ChangeSetMerge.swift lists them): everything checked and
// translated before the first record is written.

extension ChangeSetMerge {
    /// Step 1: adopts local schema changes (a column added to a tracked table), then matches
    /// each table of the change set with the local one. One with the same definition merges
    /// by position; one whose definition differs (columns added, dropped or renamed on one
    /// side: the change set carries the origin's whole definition from format 3 on) merges
    /// the columns both know, when key, key kind, authority and the shared columns' types
    /// agree, keeping values of columns not here yet for later (``keep(_:mapping:table:)``).
    /// A table that cannot merge here — not tracked, incompatible — has its records
    /// quarantined with the reason, and the other tables merge (one table's schema never
    /// stops the others'); a table dropped here with `Replica.alter` is ignored, as reported.
    mutating func matchTables() throws {
        if try !MergingFlag.isSet(db) {
            _ = try Replica.adoptSchemaChanges(db, site: localSite)
        }
        var localTables: [String: TrackedTable] = [:]
        var suspended: [String: String] = [:]
        for table in try Replica.recordedTables(db) {
            if let reason = try Replica.schemaState(db, of: table).suspension {
                suspended[table.name] = reason
                continue
            }
            localTables[table.name] = table
            trackedTables[table.name.lowercased()] = table
        }
        try readConstraints()
        let retired = try Replica.retiredColumns(db)
        for remote in changeSet.tables {
            guard let local = localTables[remote.name] ?? Self.renamedTable(remote.name, retired, localTables) else {
                statements.append(nil)
                if retired[remote.name]?[""] != nil {
                    matches.append(.retired)
                    report.retiredIgnored[remote.name] = []
                } else if let reason = suspended[remote.name] {
                    matches.append(
                        .quarantine("table \(remote.name) does not sync here until its schema is fixed: \(reason)"))
                } else {
                    matches.append(.quarantine(SyncError.tableNotTracked(table: remote.name).description))
                }
                continue
            }
            if local.fingerprint == remote.fingerprint, local.columns == remote.columns,
                local.primaryKey == remote.primaryKey
            {
                statements.append(try TableStatements(db, local))
                matches.append(.merge)
                continue
            }
            switch Self.mapping(from: remote, to: local, retired: retired[local.name] ?? [:]) {
            case .success(let mapping):
                statements.append(try TableStatements(db, local, mapping: mapping))
                matches.append(.merge)
                if !mapping.retired.isEmpty { report.retiredIgnored[local.name] = mapping.retired }
            case .failure(let reason):
                statements.append(nil)
                let mismatch = SyncError.changeSetSchemaMismatch(
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

    /// Reads the foreign keys between tracked tables (single-column, referencing the
    /// parent's key) and the vec0 indexes of the tracked tables.
    mutating func readConstraints() throws {
        for index in try VectorIndex.registered(in: db) {
            guard let table = trackedTables[index.table.lowercased()],
                let column = table.columns.firstIndex(where: { $0.lowercased() == index.embeddingColumn.lowercased() })
            else { continue }
            vectorColumns[table.name, default: []].append((column, index))
        }
        guard try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true else { return }
        foreignKeys = try TrackedForeignKey.read(db, tables: trackedTables.values.sorted { $0.name < $1.name })
    }

    enum CursorState { case merged, new }

    /// Step 2: reads the origin's cursor; a change set behind it was merged before.
    mutating func readCursor() throws -> CursorState {
        // This replica's own lost changes (``Replica/recoverLostChanges(_:)``): no cursor.
        if changeSet.origin == localSite { return .new }
        let peer = try Row.fetchOne(
            db, sql: "SELECT received, acknowledged FROM \(EngineNames.peers) WHERE site = ?",
            arguments: [changeSet.origin.rawValue])
        hasPeer = peer != nil
        received = peer?["received"] ?? 0
        acknowledged = peer?["acknowledged"] ?? 0
        if hasPeer && changeSet.through <= received && changeSet.through > 0 {
            report.alreadyMerged = true
            report.ignored = changeSet.records.count
            return .merged
        }
        return .new
    }

    /// Step 3: refuses versions from a clock too far in the future, and records that refer
    /// to no table of the change set or carry the wrong number of columns.
    mutating func checkClocks() throws {
        guard
            let state = try Row.fetchOne(
                db, sql: "SELECT hlc, seq, wall_override FROM \(EngineNames.replica) WHERE id = 1")
        else {
            throw SyncError.notAReplica(reason: "\(EngineNames.replica) is empty")
        }
        seq = state["seq"]
        newest = state["hlc"]
        let nowMilliseconds: Int64 = state["wall_override"] ?? HybridLogicalClock.wallMilliseconds()
        wallMilliseconds = nowMilliseconds
        let limit = HybridLogicalClock(
            milliseconds: nowMilliseconds + options.maximumClockDriftMilliseconds,
            counter: (1 << HybridLogicalClock.counterBits) - 1)
        for record in changeSet.records {
            guard changeSet.tables.indices.contains(record.table) else {
                throw SyncError.corruptChangeSet(reason: "a record refers to table #\(record.table)", offset: 0)
            }
            let table = changeSet.tables[record.table]
            if record.isLive && record.columns.count != table.columns.count {
                throw SyncError.corruptChangeSet(
                    reason:
                        "a record for \(table.name) has \(record.columns.count) columns, the table has \(table.columns.count)",
                    offset: 0)
            }
            for (version, site) in [(record.rowVersion, record.rowSite)]
                + record.presentColumns.map({ ($0.column.version, $0.column.site) })
            {
                if version > limit {
                    throw SyncError.clockTooFarAhead(
                        site: site, version: version, now: HybridLogicalClock(milliseconds: nowMilliseconds),
                        allowedDriftMilliseconds: options.maximumClockDriftMilliseconds)
                }
                newest = max(newest, version.rawValue)
            }
        }
    }

    /// Step 4: silences the capture and index triggers for this transaction, defers foreign
    /// keys so rows may arrive children first, and loads the site ordinals.
    mutating func beginMerging() throws {
        try MergingFlag.set(db, true)
        try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
        readOnly = try Replica.isReadOnly(db)
        sites = try Replica.siteNames(db)
        for (ordinal, site) in sites { ordinals[site] = ordinal }
    }

    /// Step 4b: gives every record of a table with local keys the local id of its identity
    /// (a new identity gets a new id and an entry in the map), before any record merges, so a
    /// child translated later finds the parents of the same change set; and notes the keys of
    /// live rows (``liveKeys``). A key of the wrong form (an integer where an identity is
    /// due, an identity in a table whose ids are the same everywhere) leaves its record
    /// untranslated, to be quarantined.
    mutating func translateKeys() throws {
        let tracked = trackedTables.values.sorted { $0.name < $1.name }
        if tracked.contains(where: \.hasLocalKeys) {
            identities = try IdentityMap.Incoming(db, localSite: localSite)
            identityLinks = try IdentityMap.links(db, tables: tracked)
        }
        records = changeSet.records
        for index in records.indices {
            let record = records[index]
            let remote = changeSet.tables[record.table]
            if let table = statements[record.table]?.table {
                switch (record.key, table.hasLocalKeys) {
                case (.identity(let site, let id), true):
                    records[index].key = .integer(try localID(site: site, id: id, in: table))
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
    }

    /// The local id of the identity `site`, `id` in `table` (see ``IdentityMap/Incoming``).
    mutating func localID(site: SiteID, id: Int64, in table: TrackedTable) throws -> Int64 {
        guard var map = identities else {
            throw SyncError.schemaChanged(table: table.name, reason: "an identity reached a table without local keys")
        }
        let origin = site == localSite ? 0 : try ordinal(site)
        let local = try map.localID(site: site, id: id, ordinal: origin, in: table)
        identities = map
        return local
    }

    /// The values of `record` (laid out as the local `table`) in foreign keys that refer to a
    /// table with local keys, translated from identities to local ids (a parent not here
    /// yet gets its id reserved, and the record waits for it as for any parent); nil, or why
    /// a value stays an identity: a column that refers to no table with local keys here.
    mutating func translateValues(_ record: inout ChangeSet.Record, table: TrackedTable) throws -> String? {
        guard record.isLive else { return nil }
        for link in identityLinks[table.name] ?? [] where record.columns.indices.contains(link.column) {
            guard var column = record.columns[link.column], case .identity(let site, let id) = column.value
            else { continue }
            column.value = .integer(try localID(site: site, id: id, in: link.parent))
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

    /// The local ordinal of `site`, recorded in `vecsync_sites` when new.
    mutating func ordinal(_ site: SiteID) throws -> Int64 {
        if let known = ordinals[site] { return known }
        try db.execute(sql: "INSERT INTO \(EngineNames.sites) (site) VALUES (?)", arguments: [site.rawValue])
        let new = db.lastInsertedRowID
        ordinals[site] = new
        sites[new] = site
        return new
    }
}
