import Foundation
import GRDB
import VecSyncCore

extension Replica {
    /// The value of `cursor` (0 when it was never set), kept in `vecsync_published`.
    public func cursor(_ cursor: SyncCursor) throws -> Int64 {
        try VecSyncError.wrap {
            try writer.read { db in
                try Int64.fetchOne(
                    db, sql: "SELECT through FROM \(EngineNames.published) WHERE destination = ?",
                    arguments: [cursor.storedName]) ?? 0
            }
        }
    }

    /// Sets `cursor` to `value`.
    public func setCursor(_ cursor: SyncCursor, to value: Int64) throws {
        try VecSyncError.wrap {
            try writer.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO \(EngineNames.published) (destination, through) VALUES (?, ?)
                        ON CONFLICT(destination) DO UPDATE SET through = excluded.through
                        """, arguments: [cursor.storedName, value])
            }
        }
    }

    /// The last local sequence number published to `destination` (0 when nothing was):
    /// the push cursor, ``cursor(_:)`` of ``SyncCursor/push(_:)``.
    public func publishedThrough(to destination: String) throws -> Int64 {
        try cursor(.push(destination))
    }

    /// Records that every change through `through` is published to `destination`.
    public func setPublishedThrough(_ through: Int64, to destination: String) throws {
        try setCursor(.push(destination), to: through)
    }

    /// Moves this replica's changes after `published` above `claimed`, the greatest sequence
    /// number the destination already holds files for, and sets `cursor` (the destination's
    /// push cursor) to `claimed` in the same transaction; returns how far they moved (0, and
    /// nothing changed, when `claimed <= published`).
    ///
    /// A destination holding files past the push cursor means the database was restored from
    /// a backup (those files came from its lost future) or a stray file sits among ours. The
    /// readers' cursors may be anywhere up to `claimed`, so the changes made since the
    /// cursor are renumbered above it — the clock tables' `seq` and `q<i>` and the replica's
    /// sequence move up together, in order — and the next change set then runs from the
    /// cursor past every reader's, so no reader skips them. Changes already in the
    /// destination travel again; merging them twice is harmless.
    @discardableResult
    public func moveChanges(after published: Int64, above claimed: Int64, settingCursor cursor: SyncCursor? = nil)
        throws -> Int64
    {
        guard claimed > published else { return 0 }
        let shift = claimed - published
        return try VecSyncError.wrap {
            try writer.write { db in
                // Every recorded table, suspended ones too: their changes move with the others.
                for table in try Self.trackedTables(db, checkingSchema: false) {
                    let clock = table.clockTable.quotedName
                    let changes = table.columns.indices.map { (index: Int) -> String in
                        let q = ClockTable.changedAt(index)
                        return ", \(q) = CASE WHEN \(q) > :published THEN \(q) + :shift ELSE \(q) END"
                    }.joined()
                    try db.execute(
                        sql: "UPDATE \(clock) SET seq = seq + :shift\(changes) WHERE seq > :published",
                        arguments: ["published": published, "shift": shift])
                }
                try db.execute(
                    sql: "UPDATE \(EngineNames.replica) SET seq = max(seq, :published) + :shift WHERE id = 1",
                    arguments: ["published": published, "shift": shift])
                if let cursor {
                    try db.execute(
                        sql: """
                            INSERT INTO \(EngineNames.published) (destination, through) VALUES (?, ?)
                            ON CONFLICT(destination) DO UPDATE SET through = excluded.through
                            """, arguments: [cursor.storedName, claimed])
                }
                return shift
            }
        }
    }
}
