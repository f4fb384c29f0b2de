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
        try SyncError.wrap {
            try writer.write { db in
                guard let horizon = try Int64.fetchOne(db, sql: "SELECT min(acknowledged) FROM vecsync_peers"),
                    horizon > 0
                else { return 0 }
                var removed = 0
                for table in try Self.trackedTables(db, checkingSchema: false) {
                    // Rows new to the clock table start above every compacted causal length
                    // and authority count, so a re-insert of a compacted key still beats a
                    // peer's kept tombstone.
                    let clock = table.clockTable.quotedName
                    try db.execute(
                        sql: """
                            UPDATE vecsync_replica SET
                              cl_floor = max(cl_floor, coalesce((SELECT max(cl) FROM \(clock) WHERE cl % 2 = 0 AND seq <= ?1), 0)),
                              ra_floor = max(ra_floor, coalesce((SELECT max(ra) FROM \(clock) WHERE cl % 2 = 0 AND seq <= ?1), 0))
                            WHERE id = 1
                            """,
                        arguments: [horizon])
                    try db.execute(
                        sql: "DELETE FROM \(table.clockTable.quotedName) WHERE cl % 2 = 0 AND seq <= ?",
                        arguments: [horizon])
                    removed += db.changesCount
                }
                return removed
            }
        }
    }

    /// The number of tombstones kept for deleted rows, over all tracked tables.
    public func tombstoneCount() throws -> Int {
        try SyncError.wrap {
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
