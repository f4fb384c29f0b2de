import Foundation
import GRDB

/// One replica of a database: it tracks tables, hands out what changed, and merges what
/// other replicas changed, so that replicas which have seen the same changes hold the same
/// rows — embeddings bit for bit.
///
/// ```swift
/// let replica = try Replica(dbQueue, site: "macbook")
/// try replica.track("photos")
/// let outgoing = try replica.changes(since: peerCursor)      // a ChangeSet
/// let report = try replica.merge(incoming)                    // applied, ignored, conflicts
/// try replica.sync(through: FolderTransport(folderURL))       // push, pull, merge, reindex
/// ```
///
/// Writes are captured by triggers, so rows may be written with any SQLite client. Merges
/// use column-level last-writer-wins under a total order — clock version, then site id —
/// with causal lengths for delete and re-insert. All state lives in the database; a
/// `Replica` is a cheap handle that may be shared across tasks.
public final class Replica: Sendable {
    /// Limits and tolerances of a replica.
    public struct Options: Sendable, Hashable {
        /// The most rows a change set carries (CloudKit's batch size).
        public var maximumBatchRows: Int
        /// The most value bytes a change set carries; a single larger row travels alone.
        public var maximumBatchBytes: Int
        /// How far ahead of this replica's clock a change set's versions may be before it
        /// is refused (a device whose clock is far in the future would otherwise win every
        /// conflict until real time caught up).
        public var maximumClockDriftMilliseconds: Int64
        /// The most rows a transport merges in one transaction: whole change sets are added
        /// to a transaction until it holds this many rows (a larger change set is merged
        /// alone), so a first sync of many rows commits as it goes and never holds the
        /// database for long.
        public var maximumMergeRows: Int
        /// The most change set bytes a transport merges in one transaction, likewise.
        public var maximumMergeBytes: Int

        /// Creates options; the defaults are 400 rows, 1 MB, one day, and merge
        /// transactions of 400 rows or 1 MB.
        public init(
            maximumBatchRows: Int = 400, maximumBatchBytes: Int = 1_000_000,
            maximumClockDriftMilliseconds: Int64 = 86_400_000,
            maximumMergeRows: Int = 400, maximumMergeBytes: Int = 1_000_000
        ) {
            self.maximumBatchRows = maximumBatchRows
            self.maximumBatchBytes = maximumBatchBytes
            self.maximumClockDriftMilliseconds = maximumClockDriftMilliseconds
            self.maximumMergeRows = max(1, maximumMergeRows)
            self.maximumMergeBytes = max(1, maximumMergeBytes)
        }
    }

    /// The database.
    public let writer: any DatabaseWriter
    /// This replica's site id.
    public let site: SiteID
    /// Limits and tolerances.
    public let options: Options

    /// Opens `writer` as the replica `site`, creating the engine's tables on first use.
    ///
    /// Throws ``VecSyncError/siteMismatch(stored:requested:)`` when the database was set up
    /// for another site.
    public init(_ writer: any DatabaseWriter, site: SiteID, options: Options = Options()) throws {
        guard !site.rawValue.isEmpty else {
            throw VecSyncError.invalidArgument(name: "site", value: "", reason: "a site id cannot be empty")
        }
        self.writer = writer
        self.site = site
        self.options = options
        try VecSyncError.wrap { try writer.write { db in try EngineSchema.install(db, site: site) } }
    }

    /// Opens a database that was already set up as a replica, with the site id it stores.
    ///
    /// Throws ``VecSyncError/notAReplica(reason:)`` when it has none.
    public convenience init(opening writer: any DatabaseWriter, options: Options = Options()) throws {
        guard let site = try Self.storedSite(in: writer) else {
            throw VecSyncError.notAReplica(reason: "the database has no replication state; track a table first")
        }
        try self.init(writer, site: site, options: options)
    }

    /// The site id stored in a database, or nil when it was never set up as a replica.
    public static func storedSite(in reader: any DatabaseReader) throws -> SiteID? {
        try VecSyncError.wrap { try reader.read { db in try EngineSchema.storedSite(db) } }
    }

    /// The local sequence number of the latest captured or merged change: the cursor a
    /// peer that has everything would hold.
    public func currentSequence() throws -> Int64 {
        try VecSyncError.wrap {
            try writer.read { db in
                try Int64.fetchOne(db, sql: "SELECT seq FROM \(EngineNames.replica) WHERE id = 1") ?? 0
            }
        }
    }

    /// The current hybrid logical clock.
    public func currentClock() throws -> HybridLogicalClock {
        try VecSyncError.wrap {
            try writer.read { db in
                HybridLogicalClock(
                    rawValue: try Int64.fetchOne(db, sql: "SELECT hlc FROM \(EngineNames.replica) WHERE id = 1") ?? 0)
            }
        }
    }

    /// Fixes the wall clock the capture triggers and merges read, in milliseconds (nil for
    /// the real clock). Tests use it to force ties between sites.
    func setWallClockOverride(milliseconds: Int64?) throws {
        try writer.write { db in
            try db.execute(
                sql: "UPDATE \(EngineNames.replica) SET wall_override = ? WHERE id = 1", arguments: [milliseconds])
        }
    }

    /// Cursors of every known peer: how far this replica merged its changes and how far it
    /// acknowledged ours.
    public func peers() throws -> [PeerState] {
        try VecSyncError.wrap {
            try writer.read { db in
                try Row.fetchAll(db, sql: "SELECT site, received, acknowledged FROM \(EngineNames.peers) ORDER BY site")
                    .map {
                        PeerState(site: SiteID($0["site"]), received: $0["received"], acknowledged: $0["acknowledged"])
                    }
            }
        }
    }

    /// Makes `site` a known peer before it has synced, so that tombstones are kept until
    /// it acknowledges them too (see ``compactTombstones()``). Sync through a folder adds
    /// every site that has a subfolder.
    public func addPeer(_ site: SiteID) throws {
        guard site != self.site else { return }
        try VecSyncError.wrap {
            try writer.write { db in
                try db.execute(
                    sql: "INSERT OR IGNORE INTO \(EngineNames.peers) (site) VALUES (?)", arguments: [site.rawValue])
            }
        }
    }

    /// Site id of every local ordinal used in clock tables.
    static func siteNames(_ db: Database) throws -> [Int64: SiteID] {
        var names: [Int64: SiteID] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT ordinal, site FROM \(EngineNames.sites)") {
            names[row["ordinal"]] = SiteID(row["site"])
        }
        return names
    }
}

/// What a replica knows about one peer.
public struct PeerState: Sendable, Hashable {
    /// The peer's site id.
    public var site: SiteID
    /// The peer's sequence number through which its changes were merged here.
    public var received: Int64
    /// This replica's sequence number through which the peer has merged our changes.
    public var acknowledged: Int64
}
