import Foundation
import VecSyncReplication
import VecSyncCore

extension HTTPTransport {
    /// The space's snapshot, or nil when the server has made none.
    public func snapshot() throws -> ServerSnapshot? {
        try status().snapshot
    }

    /// Downloads the space's snapshot (in byte ranges when large, checked against its
    /// SHA-256), merges it in one transaction, and moves the pull cursor to its `seq`, so the
    /// next pull lists only the change sets after it.
    ///
    /// The snapshot is one change set holding each row's winning state; it is merged under
    /// the origins it covers (each with `since` 0 and `through` its head there), so this
    /// replica's cursor of each origin moves to what the snapshot holds of it, exactly as if
    /// it had merged that origin's change sets one by one. Origins this replica has already
    /// merged that far, and its own, are left out; when none is left, the snapshot holds
    /// nothing new. Merging is a join, so a replica with rows of its own (or one that merged
    /// part of the history before) keeps every write that wins.
    @discardableResult
    public func bootstrap(_ replica: Replica, from snapshot: ServerSnapshot, pullCursor: SyncCursor) throws
        -> [MergeReport]
    {
        let path = "snapshot/\(snapshot.seq)"
        let body = try downloadBody(path, size: snapshot.size, sha256: snapshot.sha256)
        let folded = try ChangeSet(serialized: body)
        guard folded.through == snapshot.seq else {
            throw HTTPTransportError.protocolViolation(
                url: "\(destination)/\(path)",
                reason: "the snapshot runs through \(folded.through), not \(snapshot.seq)")
        }
        let own = replica.site.rawValue
        let received = Dictionary(try replica.peers().map { ($0.site.rawValue, $0.received) }, uniquingKeysWith: max)
        let behind = snapshot.heads.filter { $0.key != own && !$0.key.isEmpty && $0.value > received[$0.key] ?? 0 }
            .sorted { $0.key < $1.key }
        var changeSets: [ChangeSet] = []
        for (origin, head) in behind {
            let site = SiteID(origin)
            try replica.addPeer(site)
            // The rows travel once, with the first origin; the others only move their cursors.
            let first = changeSets.isEmpty
            changeSets.append(
                ChangeSet(
                    origin: site, since: 0, through: head, tables: first ? folded.tables : [],
                    records: first ? folded.records : []))
        }
        let reports = try replica.merge(changeSets)
        if try replica.cursor(pullCursor) < snapshot.seq {
            try replica.setCursor(pullCursor, to: snapshot.seq)
        }
        return reports
    }
}
