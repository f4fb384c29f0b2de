import Foundation

/// Where a replica stands with sync, for a status indicator: when it last synced and how
/// that ended, how many local changes wait to be pushed, and how far it has merged each
/// peer, with what it waits for. Read it with ``Replica/syncStatus()``; it reads only the
/// database, never the network or the folder.
public struct SyncStatus: Sendable, Hashable, CustomStringConvertible {
    /// How the last sync through one destination ended.
    public struct LastSync: Sendable, Hashable {
        /// The transport's destination: a folder's path, a server space's URL.
        public var destination: String
        /// When it ended.
        public var finished: Date
        /// Whether it ended without an error (files skipped or waited for still count as
        /// success; see ``summary``).
        public var succeeded: Bool
        /// Its report's line, or its error.
        public var summary: String
        /// Syncs through the destination that ended so far (with or without an error), this one
        /// included; one the process did not live to finish is not counted.
        public var runs: Int = 1
        /// Rows they merged into their tables, interrupted syncs' committed transactions
        /// included.
        public var rowsMerged: Int = 0
        /// The end of the first sync that caught up (pulled everything there was, skipping
        /// nothing, waiting for nothing): when the first sync finished, however many runs it
        /// took. Nil while it has not.
        public var firstCaughtUp: Date?
        /// The start of the first sync through the destination.
        public var firstStarted: Date?
    }

    /// This replica.
    public var site: SiteID
    /// The local sequence number.
    public var sequence: Int64
    /// The last sync through each destination, the latest first.
    public var lastSyncs: [LastSync]
    /// Every push cursor.
    public var destinations: [Destination]
    /// Rows written here that some destination has not been sent: the most over
    /// ``destinations``, or every row written here when this replica never pushed.
    public var pendingLocalChanges: Int
    /// Every known peer, by site id.
    public var peers: [Peer]
    /// Rows kept in quarantine.
    public var quarantined: Int
    /// Peers that may keep rows deleted here, because a forced compaction removed tombstones
    /// they had not merged (empty unless compaction was ever forced past a peer).
    public var peersMayKeepDeletedRows: [ForcedCompaction] = []

    /// The latest sync's end, or nil when this replica never synced.
    public var lastSync: Date? { lastSyncs.first?.finished }

    /// A few lines, as `vecsync-cli status` prints them.
    public var description: String {
        var lines: [String] = []
        let format = ISO8601DateFormatter()
        if let last = lastSyncs.first {
            lines.append(
                "\(site): last sync \(format.string(from: last.finished)) through \(last.destination): "
                    + (last.succeeded ? "" : "failed: ") + last.summary)
            for sync in lastSyncs {
                let runs = sync.runs == 1 ? "1 run" : "\(sync.runs) runs"
                if let caughtUp = sync.firstCaughtUp {
                    lines.append(
                        "  first sync through \(sync.destination): finished \(format.string(from: caughtUp)); "
                            + "\(runs), \(sync.rowsMerged) rows merged in all")
                } else {
                    lines.append(
                        "  first sync through \(sync.destination): not finished yet (\(runs), \(sync.rowsMerged) rows merged so far)"
                    )
                }
            }
        } else {
            lines.append("\(site): never synced")
        }
        lines.append("pending local changes: \(pendingLocalChanges) rows (sequence \(sequence))")
        for destination in destinations {
            lines.append(
                "  pushed to \(destination.destination) through \(destination.publishedThrough); \(destination.pendingRows) rows after it"
            )
        }
        for peer in peers {
            var line = "  peer \(peer.site): merged through \(peer.received), has ours through \(peer.acknowledged)"
            if let gap = peer.waitingFor { line += "; \(gap)" }
            lines.append(line)
        }
        if quarantined > 0 { lines.append("quarantined: \(quarantined) rows") }
        for forced in peersMayKeepDeletedRows {
            lines.append(
                "peer \(forced.peer) may keep rows deleted here: tombstones through \(forced.horizon) were compacted "
                    + "(forced, \(format.string(from: forced.compacted))) while it had merged our changes through "
                    + "\(forced.acknowledged) only; a fresh copy of this replica mends it")
        }
        return lines.joined(separator: "\n")
    }
}
