import Foundation
import GRDB

extension Replica {
    /// The rows that changed on this replica after local sequence number `since`, in one
    /// batch of at most ``Options/maximumBatchRows`` rows and about
    /// ``Options/maximumBatchBytes`` bytes (a single larger row travels alone).
    ///
    /// Pass the returned ``ChangeSet/through`` as the next `since` until the change set is
    /// empty. Rows whose every column was last written by a site in `excluding` are left
    /// out (the peer already has them), but the cursor still moves past them.
    ///
    /// ```swift
    /// let batch = try replica.changes(since: 0, excluding: ["phone"])
    /// ```
    public func changes(since: Int64, excluding: Set<SiteID> = [], maximumRows: Int? = nil,
                        maximumBytes: Int? = nil) throws -> ChangeSet {
        let rowLimit = max(1, maximumRows ?? options.maximumBatchRows)
        let byteLimit = max(1, maximumBytes ?? options.maximumBatchBytes)
        return try SyncError.wrap {
            try writer.read { db in
                try Self.changes(db, origin: site, since: since, excluding: excluding, rowLimit: rowLimit, byteLimit: byteLimit)
            }
        }
    }

    /// A table's changed rows in sequence order, one at a time.
    private struct TableScan {
        let index: Int
        let table: TrackedTable
        let cursor: RowCursor
        var current: Row?

        mutating func advance() throws {
            current = try cursor.next().map { $0.copy() }
        }
    }

    static func changes(_ db: Database, origin: SiteID, since: Int64, excluding: Set<SiteID>,
                        rowLimit: Int, byteLimit: Int) throws -> ChangeSet {
        let tables = try trackedTables(db)
        let sites = try siteNames(db)
        let latest = try Int64.fetchOne(db, sql: "SELECT seq FROM vecsync_replica WHERE id = 1") ?? 0
        var acknowledgements: [SiteID: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT site, received FROM vecsync_peers") {
            acknowledgements[SiteID(row["site"])] = row["received"]
        }

        var scans: [TableScan] = []
        for (index, table) in tables.enumerated() {
            let key = table.primaryKey.quotedDatabaseIdentifier
            let versions = table.columns.indices.map { ", c.v\($0), c.s\($0)" }.joined()
            let values = table.columns.map { ", t.\($0.quotedDatabaseIdentifier)" }.joined()
            let sql = """
                SELECT c.pk, c.cl, c.cl_version, c.cl_site, c.seq, t.\(key) IS NOT NULL\(versions)\(values)
                FROM \(table.clockTable.quotedDatabaseIdentifier) AS c
                LEFT JOIN \(table.name.quotedDatabaseIdentifier) AS t ON t.\(key) = c.pk
                WHERE c.seq > ? ORDER BY c.seq
                """
            var scan = TableScan(index: index, table: table,
                                 cursor: try Row.fetchCursor(db, sql: sql, arguments: [since]), current: nil)
            try scan.advance()
            scans.append(scan)
        }

        var records: [ChangeSet.Record] = []
        var usedTables: [Int: Int] = [:]
        var outTables: [ChangeSet.Table] = []
        var bytes = 0
        var through = since
        var exhausted = true
        while true {
            // The scan whose next row has the lowest sequence number.
            var best: Int?
            var bestSeq = Int64.max
            for (position, scan) in scans.enumerated() {
                guard let row = scan.current else { continue }
                let seq: Int64 = row[4]
                if seq < bestSeq {
                    best = position
                    bestSeq = seq
                }
            }
            guard let position = best, let row = scans[position].current else { break }
            let table = scans[position].table
            let record = try makeRecord(row, table: table, sites: sites)
            let size = record.map { estimatedSize($0) } ?? 0
            if !records.isEmpty && (records.count >= rowLimit || bytes + size > byteLimit) {
                exhausted = false
                break
            }
            if var record {
                let allSites = [record.rowSite] + record.columns.map(\.site)
                if excluding.isEmpty || !allSites.allSatisfy(excluding.contains) {
                    let tableIndex: Int
                    if let known = usedTables[scans[position].index] {
                        tableIndex = known
                    } else {
                        tableIndex = outTables.count
                        usedTables[scans[position].index] = tableIndex
                        outTables.append(ChangeSet.Table(name: table.name, primaryKey: table.primaryKey,
                                                         columns: table.columns, fingerprint: table.fingerprint))
                    }
                    record.table = tableIndex
                    records.append(record)
                    bytes += size
                }
            }
            through = bestSeq
            try scans[position].advance()
        }
        if exhausted { through = max(through, latest) }
        return ChangeSet(origin: origin, since: since, through: through, acknowledgements: acknowledgements,
                         tables: outTables, records: records)
    }

    /// The record for one clock row joined with its table row, or nil for a live clock row
    /// whose table row is missing (a delete that escaped capture; ``reconcile()`` records it).
    private static func makeRecord(_ row: Row, table: TrackedTable, sites: [Int64: SiteID]) throws -> ChangeSet.Record? {
        let causalLength: Int64 = row[1]
        let rowSite = try siteName(row[3], sites)
        let isLive = causalLength % 2 == 1
        let present: Bool = row[5]
        if isLive && !present { return nil }
        var columns: [ChangeSet.Column] = []
        if isLive {
            let count = table.columns.count
            columns.reserveCapacity(count)
            for index in 0..<count {
                let version: Int64 = row[6 + 2 * index] ?? 0
                let columnSite = try siteName(row[7 + 2 * index] ?? 0, sites)
                let value = SyncValue(row[6 + 2 * count + index] as DatabaseValue)
                columns.append(ChangeSet.Column(version: HybridLogicalClock(rawValue: version), site: columnSite, value: value))
            }
        }
        return ChangeSet.Record(
            table: 0, key: SyncValue(row[0] as DatabaseValue), causalLength: causalLength,
            rowVersion: HybridLogicalClock(rawValue: row[2]), rowSite: rowSite, columns: columns)
    }

    private static func siteName(_ ordinal: Int64, _ sites: [Int64: SiteID]) throws -> SiteID {
        guard let site = sites[ordinal] else {
            throw SyncError.notAReplica(reason: "a clock table refers to unknown site ordinal \(ordinal) (vecsync_sites damaged)")
        }
        return site
    }

    /// Bytes a record adds to a change set: its values plus per-column bookkeeping.
    static func estimatedSize(_ record: ChangeSet.Record) -> Int {
        16 + record.key.payloadByteCount + record.columns.reduce(0) { $0 + 6 + $1.value.payloadByteCount }
    }
}
