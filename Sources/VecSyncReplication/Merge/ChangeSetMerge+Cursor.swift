import Foundation
import GRDB
import VecSyncCore

/// Steps 2 and 8 of a merge (``ChangeSetMerge`` lists the steps): how far the origin's
/// changes were merged here before, and, once the records are in, how far they are now.
struct PeerCursor {
    /// Whether the origin is known here.
    let known: Bool
    /// How far the origin's changes were merged here.
    let received: Int64
    /// How far the origin had merged this replica's changes, as it last said.
    let acknowledged: Int64

    /// Step 2: the cursor of `origin` here; none for this replica's own lost changes
    /// (``Replica/recoverLostChanges(_:)``).
    init(_ db: Database, origin: SiteID, localSite: SiteID) throws {
        guard origin != localSite else {
            (known, received, acknowledged) = (false, 0, 0)
            return
        }
        let peer = try Row.fetchOne(
            db, sql: "SELECT received, acknowledged FROM \(EngineNames.peers) WHERE site = ?",
            arguments: [origin.rawValue])
        known = peer != nil
        received = peer?["received"] ?? 0
        acknowledged = peer?["acknowledged"] ?? 0
    }

    /// Whether `changeSet` is behind the cursor: merged before.
    func holds(_ changeSet: ChangeSet) -> Bool {
        known && changeSet.through <= received && changeSet.through > 0
    }

    /// Step 8: records the cursor and acknowledgement after `changeSet`, in the merge's
    /// transaction; returns whether the cursor advanced (the change set followed it).
    func record(_ changeSet: ChangeSet, localSite: SiteID, _ db: Database) throws -> Bool {
        if changeSet.origin == localSite { return false }
        let advanced = changeSet.since <= received
        let newReceived = advanced ? max(received, changeSet.through) : received
        // An acknowledgement counts only from a change set merged in sequence: then every
        // earlier change set of the origin — made before it had our tombstones — is behind
        // the cursor and will be skipped if it turns up late, so compaction is safe.
        let newAcknowledged = advanced ? max(acknowledged, changeSet.acknowledgements[localSite] ?? 0) : acknowledged
        try db.execute(
            sql: """
                INSERT INTO \(EngineNames.peers) (site, received, acknowledged) VALUES (?, ?, ?)
                ON CONFLICT(site) DO UPDATE SET received = excluded.received, acknowledged = excluded.acknowledged
                """,
            arguments: [changeSet.origin.rawValue, newReceived, newAcknowledged])
        return advanced
    }
}
