import Foundation
import GRDB
import VecSyncCore

extension Replica {
    /// Where this replica stands with sync (see ``SyncStatus``): last syncs, pending local
    /// changes, per-peer cursors and what it waits for. Reads the database only.
    ///
    /// ```swift
    /// let status = try replica.syncStatus()
    /// badge.text = status.pendingLocalChanges == 0 ? "Synced" : "\(status.pendingLocalChanges) to send"
    /// ```
    public func syncStatus() throws -> SyncStatus {
        try VecSyncError.wrap {
            try writer.read { db in
                let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM \(EngineNames.replica) WHERE id = 1") ?? 0
                let tables = try Self.trackedTables(db, checkingSchema: false)
                // Rows whose change after the cursor was made here (ordinal 0): the row's
                // state (an insert, a delete) or a column written after the cursor.
                func changedRows(after cursor: Int64) throws -> Int {
                    try tables.reduce(0) { sum, table in
                        let local =
                            ["\(ClockTable.rowSite) = 0"]
                            + table.columns.indices.map {
                                "(\(ClockTable.writer($0)) = 0 AND coalesce(\(ClockTable.changedAt($0)), \(ClockTable.sequence)) > ?1)"
                            }
                        return sum
                            + (try Int.fetchOne(
                                db,
                                sql: """
                                    SELECT count(*) FROM \(table.clockTable.quotedName)
                                    WHERE \(ClockTable.sequence) > ?1 AND (\(local.joined(separator: " OR ")))
                                    """,
                                arguments: [cursor]) ?? 0)
                    }
                }
                var destinations: [SyncStatus.Destination] = []
                for row in try Row.fetchAll(
                    db, sql: "SELECT destination, through FROM \(EngineNames.published) ORDER BY destination")
                {
                    let name: String = row["destination"]
                    // Pull cursors and the ends of the last files written to folders share
                    // the table; they are not push cursors.
                    guard SyncCursor(storedName: name).isPush else { continue }
                    let through: Int64 = row["through"]
                    destinations.append(
                        .init(
                            destination: name, publishedThrough: through, pendingRows: try changedRows(after: through)))
                }
                let pending =
                    destinations.isEmpty ? try changedRows(after: 0) : destinations.map(\.pendingRows).max() ?? 0
                func date(_ milliseconds: Int64?) -> Date? {
                    milliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) }
                }
                let lastSyncs = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT destination, finished, succeeded, summary, runs, rows_merged, first_caught_up, first_started
                        FROM \(EngineNames.syncLog) ORDER BY finished DESC, destination
                        """
                ).map { row in
                    SyncStatus.LastSync(
                        destination: row["destination"],
                        finished: Date(timeIntervalSince1970: Double(row["finished"] as Int64) / 1000),
                        succeeded: row["succeeded"], summary: row["summary"], runs: row["runs"],
                        rowsMerged: row["rows_merged"], firstCaughtUp: date(row["first_caught_up"]),
                        firstStarted: date(row["first_started"]))
                }
                let gaps = Dictionary(
                    try Self.gaps(db).map { ($0.origin, $0) }, uniquingKeysWith: { first, _ in first })
                var peers = try Row.fetchAll(
                    db, sql: "SELECT site, received, acknowledged FROM \(EngineNames.peers) ORDER BY site"
                ).map { row in
                    let site = SiteID(row["site"] as String)
                    return SyncStatus.Peer(
                        site: site, received: row["received"], acknowledged: row["acknowledged"], waitingFor: gaps[site]
                    )
                }
                // An origin none of whose changes could be merged yet is waited for all the same.
                let known = Set(peers.map(\.site))
                for gap in gaps.values where !known.contains(gap.origin) {
                    peers.append(SyncStatus.Peer(site: gap.origin, received: 0, acknowledged: 0, waitingFor: gap))
                }
                peers.sort { $0.site < $1.site }
                let quarantined = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(EngineNames.quarantine)") ?? 0
                let forced = try Row.fetchAll(
                    db,
                    sql:
                        "SELECT peer, acknowledged, horizon, compacted FROM \(EngineNames.forcedCompactions) ORDER BY peer"
                ).map { row in
                    SyncStatus.ForcedCompaction(
                        peer: SiteID(row["peer"] as String), acknowledged: row["acknowledged"], horizon: row["horizon"],
                        compacted: date(row["compacted"]) ?? Date(timeIntervalSince1970: 0))
                }
                return SyncStatus(
                    site: site, sequence: sequence, lastSyncs: lastSyncs, destinations: destinations,
                    pendingLocalChanges: pending, peers: peers, quarantined: quarantined,
                    peersMayKeepDeletedRows: forced)
            }
        }
    }

    /// The ranges this replica waits for, one per origin at most, by origin.
    public func gaps() throws -> [SyncGap] {
        try VecSyncError.wrap { try writer.read { db in try Self.gaps(db) } }
    }

    static func gaps(_ db: Database) throws -> [SyncGap] {
        try Row.fetchAll(db, sql: "SELECT origin, since, through, reason FROM \(EngineNames.gaps) ORDER BY origin").map
        {
            SyncGap(
                origin: SiteID($0["origin"] as String), since: $0["since"], through: $0["through"], reason: $0["reason"]
            )
        }
    }

    /// Records what this replica waits for from `origin` (nil: nothing), as a transport
    /// found it at the end of a pull.
    package func setGap(_ gap: SyncGap?, for origin: SiteID) throws {
        try VecSyncError.wrap {
            try writer.write { db in
                if let gap {
                    try db.execute(
                        sql: """
                            INSERT INTO \(EngineNames.gaps) (origin, since, through, reason, noted) VALUES (?, ?, ?, ?, ?)
                            ON CONFLICT(origin) DO UPDATE SET since = excluded.since, through = excluded.through,
                              reason = excluded.reason, noted = excluded.noted
                            """,
                        arguments: [
                            origin.rawValue, gap.since, gap.through, gap.reason,
                            Int64(Date().timeIntervalSince1970 * 1000),
                        ])
                } else {
                    try db.execute(
                        sql: "DELETE FROM \(EngineNames.gaps) WHERE origin = ?", arguments: [origin.rawValue])
                }
            }
        }
    }

    /// Records how a sync through `destination` that started at `started` ended: its line,
    /// one run more, the rows it merged (committed, interrupted or not), and, the first time a sync catches up, when.
    func recordSync(
        to destination: String, started: Date, succeeded: Bool, summary: String, merged: Int = 0,
        caughtUp: Bool = false
    ) throws {
        try VecSyncError.wrap {
            try writer.write { db in
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                try db.execute(
                    sql: """
                        INSERT INTO \(EngineNames.syncLog)
                          (destination, finished, succeeded, summary, runs, rows_merged, first_caught_up, first_started)
                        VALUES (?1, ?2, ?3, ?4, 1, ?5, CASE WHEN ?6 THEN ?2 END, ?7)
                        ON CONFLICT(destination) DO UPDATE SET finished = excluded.finished,
                          succeeded = excluded.succeeded, summary = excluded.summary, runs = runs + 1,
                          rows_merged = rows_merged + excluded.rows_merged,
                          first_caught_up = coalesce(first_caught_up, excluded.first_caught_up),
                          first_started = coalesce(first_started, excluded.first_started)
                        """,
                    arguments: [
                        destination, now, succeeded, summary, merged, caughtUp,
                        Int64(started.timeIntervalSince1970 * 1000),
                    ])
            }
        }
    }
}
