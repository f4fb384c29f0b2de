import Foundation
import GRDB
import VecSyncCore

extension Replica {
    /// Removes the tombstones of deleted rows that every known peer has acknowledged, and
    /// returns how many were removed.
    ///
    /// A peer acknowledges this replica's sequence number N when a change set it made, and
    /// that was merged here in sequence, says it has merged ours through N. A tombstone is
    /// kept until all known peers (sites merged from, added with ``addPeer(_:)``, or seen in
    /// a sync folder) are past it, so no peer can bring the row back with an
    /// older copy; with no known peer, nothing is removed. Keys created afterwards start at a
    /// causal length and authority count above every removed tombstone, so re-using a compacted key works even
    /// against a peer that still keeps its tombstone.
    @discardableResult
    public func compactTombstones() throws -> Int {
        try VecSyncError.wrap {
            try writer.write { db in
                guard let horizon = try Int64.fetchOne(db, sql: "SELECT min(acknowledged) FROM \(EngineNames.peers)"),
                    horizon > 0
                else { return 0 }
                return try Self.compact(db, through: horizon)
            }
        }
    }

    /// Removes the tombstones of rows deleted at or before this replica's sequence number
    /// `acknowledged`, which the caller says every peer has merged (CRDT-SQLite's compaction
    /// with a minimum acknowledged version), and returns how many were removed.
    ///
    /// Use it when the app, not the engine, knows its peers — through a server that tracks
    /// what each device has pulled. A peer that had not merged a delete before its tombstone
    /// went can bring the row back, so the number must be what every peer has merged of
    /// this replica's changes (a cursor `changes(since:)` returned to all of them).
    /// Throws ``VecSyncError/invalidArgument(name:value:reason:)`` for a negative number or one
    /// beyond ``currentSequence()``, and — unless `force` is true — for one past what a peer
    /// this replica knows (``peers()``) has acknowledged merging: its tombstones would go
    /// before that peer has the deletes, and the two would stay different for good. A forced
    /// compaction records each such peer, and ``syncStatus()`` reports it from then on
    /// (``SyncStatus/peersMayKeepDeletedRows``): no later sync can take the deletes there.
    ///
    /// ```swift
    /// try replica.compactTombstones(acknowledgedThrough: server.lowestCursor(of: replica.site))
    /// ```
    @discardableResult
    public func compactTombstones(acknowledgedThrough acknowledged: Int64, force: Bool = false) throws -> Int {
        try VecSyncError.wrap {
            try writer.write { db in
                let current = try Int64.fetchOne(db, sql: "SELECT seq FROM \(EngineNames.replica) WHERE id = 1") ?? 0
                guard acknowledged >= 0, acknowledged <= current else {
                    throw VecSyncError.invalidArgument(
                        name: "acknowledgedThrough", value: "\(acknowledged)",
                        reason:
                            "an acknowledged sequence number lies between 0 and the replica's current sequence, \(current)"
                    )
                }
                let behind = try Row.fetchAll(
                    db, sql: "SELECT site, acknowledged FROM \(EngineNames.peers) WHERE acknowledged < ? ORDER BY site",
                    arguments: [acknowledged])
                if !force, !behind.isEmpty {
                    let peers = behind.map { "\($0["site"] as String) (through \($0["acknowledged"] as Int64))" }
                    throw VecSyncError.invalidArgument(
                        name: "acknowledgedThrough", value: "\(acknowledged)",
                        reason:
                            "known peers have acknowledged less of this replica's changes: \(peers.joined(separator: ", ")); "
                            + "a tombstone they have not merged would go, and they would keep the row for good "
                            + "(pass force: true if they have merged it all the same)")
                }
                // Forced past peers: what they may keep for good is on record, for the status.
                for peer in behind {
                    try db.execute(
                        sql: """
                            INSERT INTO \(EngineNames.forcedCompactions) (peer, acknowledged, horizon, compacted)
                            VALUES (?, ?, ?, ?)
                            ON CONFLICT(peer) DO UPDATE SET acknowledged = min(acknowledged, excluded.acknowledged),
                              horizon = max(horizon, excluded.horizon), compacted = excluded.compacted
                            """,
                        arguments: [
                            peer["site"] as String, peer["acknowledged"] as Int64, acknowledged,
                            Int64(Date().timeIntervalSince1970 * 1000),
                        ])
                }
                return try Self.compact(db, through: acknowledged)
            }
        }
    }

    /// Removes the tombstones whose sequence number is at most `horizon`, raising the floors
    /// new clock rows start above.
    private static func compact(_ db: Database, through horizon: Int64) throws -> Int {
        var removed = 0
        for table in try trackedTables(db, checkingSchema: false) {
            // Rows new to the clock table start above every compacted causal length
            // and authority count, so a re-insert of a compacted key still beats a
            // peer's kept tombstone.
            let clock = table.clockTable.quotedName
            try db.execute(
                sql: """
                    UPDATE \(EngineNames.replica) SET
                      cl_floor = max(cl_floor, coalesce((SELECT max(cl) FROM \(clock) WHERE cl % 2 = 0 AND seq <= ?1), 0)),
                      ra_floor = max(ra_floor, coalesce((SELECT max(ra) FROM \(clock) WHERE cl % 2 = 0 AND seq <= ?1), 0))
                    WHERE id = 1
                    """,
                arguments: [horizon])
            // A tombstone whose key a quarantined record holds stays: that record is older
            // history received before the delete merged (a row of a table renamed since, a
            // child waiting for its parent), and with the tombstone gone its release would
            // bring the deleted row back here alone. Matched on the key whatever the table's
            // name in the record: a few tombstones too many cost nothing.
            try db.execute(
                sql: """
                    DELETE FROM \(clock) WHERE cl % 2 = 0 AND seq <= ?
                      AND pk NOT IN (SELECT pk FROM \(EngineNames.quarantine) WHERE pk IS NOT NULL)
                    """,
                arguments: [horizon])
            removed += db.changesCount
        }
        return removed
    }

    /// The number of tombstones kept for deleted rows, over all tracked tables.
    public func tombstoneCount() throws -> Int {
        try VecSyncError.wrap {
            try writer.read { db in
                try Self.trackedTables(db, checkingSchema: false).reduce(0) { sum, table in
                    sum
                        + (try Int.fetchOne(
                            db, sql: "SELECT count(*) FROM \(table.clockTable.quotedName) WHERE cl % 2 = 0") ?? 0)
                }
            }
        }
    }
}
