import Foundation
import VecSyncReplication
import VecSyncCore

extension HTTPTransport {
    /// The space's snapshot, or nil when the server has made none.
    public func snapshot() throws -> ServerSnapshot? {
        try status().snapshot
    }

    /// Downloads the space's snapshot (in byte ranges when large, checked against its
    /// SHA-256), merges it, and moves the pull cursor to its `seq`, so the next pull lists
    /// only the change sets after it.
    ///
    /// The snapshot holds each row's winning state; it is merged under the origins it covers
    /// (each with `since` 0 and `through` its head there), so this replica's cursor of each
    /// origin moves to what the snapshot holds of it, exactly as if it had merged that
    /// origin's change sets one by one. Origins this replica has already merged that far, and
    /// its own, are left out; when none is left, the snapshot holds nothing new and nothing
    /// is downloaded. Merging is a join, so a replica with rows of its own (or one that merged
    /// part of the history before) keeps every write that wins.
    ///
    /// A snapshot made in parts (``ServerSnapshot/parts``) is downloaded and merged one part
    /// at a time, each in its own transaction, so memory holds one part: the parts before the
    /// last move no cursor, and the last moves them all. Stopped between parts, the next sync
    /// bootstraps again and merges what it merged before a second time, which changes nothing.
    @discardableResult
    public func bootstrap(_ replica: Replica, from snapshot: ServerSnapshot, pullCursor: SyncCursor) throws
        -> [MergeReport]
    {
        let own = replica.site.rawValue
        let received = Dictionary(try replica.peers().map { ($0.site.rawValue, $0.received) }, uniquingKeysWith: max)
        let behind = snapshot.heads.filter { $0.key != own && !$0.key.isEmpty && $0.value > received[$0.key] ?? 0 }
            .sorted { $0.key < $1.key }
        var reports: [MergeReport] = []
        if snapshot.parts?.isEmpty == true {
            throw HTTPTransportError.protocolViolation(
                url: "\(destination)/snapshot", reason: "the snapshot through \(snapshot.seq) lists no part")
        }
        if let first = behind.first {
            for site in behind.map({ SiteID($0.key) }) { try replica.addPeer(site) }
            let parts: [(path: String, size: Int64, sha256: String)] =
                snapshot.parts?.enumerated().map { ("snapshot/\(snapshot.seq)/parts/\($0.offset)", $0.element.size, $0.element.sha256) }
                ?? [("snapshot/\(snapshot.seq)", snapshot.size, snapshot.sha256)]
            for (index, part) in parts.enumerated() {
                let folded = try ChangeSet(serialized: try downloadBody(part.path, size: part.size, sha256: part.sha256))
                guard folded.through == snapshot.seq else {
                    throw HTTPTransportError.protocolViolation(
                        url: "\(destination)/\(part.path)",
                        reason: "the snapshot runs through \(folded.through), not \(snapshot.seq)")
                }
                guard index == parts.count - 1 else {
                    // Through 0: the rows, and no cursor moves.
                    reports += try replica.merge([
                        ChangeSet(
                            origin: SiteID(first.key), since: 0, through: 0, tables: folded.tables,
                            records: folded.records)
                    ])
                    continue
                }
                // The rows travel once, with the first origin; the others only move their cursors.
                reports += try replica.merge(
                    behind.map { origin, head in
                        let rows = origin == first.key
                        return ChangeSet(
                            origin: SiteID(origin), since: 0, through: head, tables: rows ? folded.tables : [],
                            records: rows ? folded.records : [])
                    })
            }
        }
        if try replica.cursor(pullCursor) < snapshot.seq {
            try replica.setCursor(pullCursor, to: snapshot.seq)
        }
        return reports
    }
}
