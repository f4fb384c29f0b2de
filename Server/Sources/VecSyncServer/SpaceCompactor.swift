import Foundation
import VecSyncReplication
import VecSyncWire

/// Makes a space's bootstrap snapshot and compacts its history, without the application's
/// schema: change sets carry each column's value with its clock, so the history folds into
/// one change set holding every row's winning state (``ChangeSet/folded(_:origin:since:through:)``,
/// the merge's own rules).
///
/// A new device downloads the snapshot (`GET …/snapshot/{seq}`), merges it, and pulls the
/// change sets after its `seq`. Compaction then drops history the snapshot holds, when safe:
/// - by default only up to the slowest registered device's pull point (every device has
///   asked for the change sets after it, so holds everything up to it);
/// - with `force`, up to the snapshot, whoever is behind: a device whose cursor is behind
///   the compaction point is answered `410 compacted` and bootstraps from the snapshot
///   again (its unpushed changes stay and are pushed as usual).
///
/// ```swift
/// let compactor = SpaceCompactor(store: store)
/// let snapshot = try await compactor.makeSnapshot(spaceID: space.id, at: now)
/// let (through, dropped) = try await compactor.compact(spaceID: space.id, force: false)
/// ```
public struct SpaceCompactor: Sendable {
    /// The origin a snapshot's change set names: not a device. A device bootstrapping from
    /// it merges its rows under the origins of its heads (see `openapi.yaml`).
    public static let snapshotOrigin: SiteID = "vecsync-snapshot"
    /// Change sets read per page while folding (the fold holds one page and the snapshot).
    public static let foldPage = 100

    /// The largest snapshot stored: SQLite's default limit on one value (`SQLITE_MAX_LENGTH`,
    /// 10^9 bytes) and PostgreSQL's on a `bytea` (1 GiB), less room for the row around it.
    public static let defaultMaximumSnapshotBytes = 1_000_000_000 - (1 << 20)

    /// Where the space is stored.
    public let store: any ServerStore
    /// The largest snapshot made; a larger one is an error
    /// (``ServerStoreError/snapshotTooLarge(bytes:limit:)``), not a failed write.
    public let maximumSnapshotBytes: Int

    /// A compactor over `store`.
    public init(store: any ServerStore, maximumSnapshotBytes: Int = Self.defaultMaximumSnapshotBytes) {
        self.store = store
        self.maximumSnapshotBytes = maximumSnapshotBytes
    }

    /// Folds the change sets after the space's snapshot into a new snapshot and stores it;
    /// returns the space's snapshot (the old one when nothing came after it, nil when the
    /// space has no change set at all). Change sets pushed meanwhile are left to the next.
    public func makeSnapshot(spaceID: Int64, at time: Int64) async throws -> ServerSnapshot? {
        var heads: [String: Int64] = [:]
        var seq: Int64 = 0
        var folded: ChangeSet?
        let previous = try await store.snapshot(inSpace: spaceID)
        if let (entry, body) = previous {
            guard sha256Hex(body) == entry.sha256 else {
                throw ServerStoreError.corrupt("the snapshot through \(entry.seq) does not match its SHA-256")
            }
            folded = try ChangeSet(serialized: body)
            heads = entry.heads
            seq = entry.seq
        }
        let start = seq
        while true {
            let page = try await store.changeSets(inSpace: spaceID, after: seq, limit: Self.foldPage)
            if page.isEmpty { break }
            var parts: [ChangeSet] = folded.map { [$0] } ?? []
            for listed in page {
                parts.append(try await changeSet(listed, spaceID: spaceID))
                heads[listed.origin] = max(heads[listed.origin] ?? 0, listed.through)
                seq = listed.seq
            }
            folded = try ChangeSet.folded(parts, origin: Self.snapshotOrigin, since: 0, through: seq)
        }
        guard seq > start, let folded else { return previous?.entry }
        let body = folded.serialized()
        guard body.count <= maximumSnapshotBytes else {
            throw ServerStoreError.snapshotTooLarge(bytes: body.count, limit: maximumSnapshotBytes)
        }
        let entry = ServerSnapshot(
            seq: seq, heads: heads, rows: Int64(folded.records.count), size: Int64(body.count),
            sha256: sha256Hex(body), createdAt: time, compactedThrough: previous?.entry.compactedThrough ?? 0)
        _ = try await store.saveSnapshot(entry, body: body, inSpace: spaceID)
        return try await store.snapshotEntry(inSpace: spaceID)
    }

    /// Drops the change sets the snapshot holds, up to the slowest device's pull point
    /// (or, with `force`, all of them); returns the compaction point and how many were dropped.
    public func compact(spaceID: Int64, force: Bool) async throws -> (through: Int64, dropped: Int) {
        guard let snapshot = try await store.snapshotEntry(inSpace: spaceID) else { return (0, 0) }
        var through = snapshot.seq
        if !force { through = min(through, try await store.slowestPullPoint(inSpace: spaceID)) }
        guard through > snapshot.compactedThrough else { return (snapshot.compactedThrough, 0) }
        return (through, try await store.compact(inSpace: spaceID, through: through))
    }

    /// A stored change set, checked against its SHA-256 and its listing.
    private func changeSet(_ listed: ServerChangeSet, spaceID: Int64) async throws -> ChangeSet {
        guard let (entry, body) = try await store.changeSet(inSpace: spaceID, seq: listed.seq) else {
            throw ServerStoreError.corrupt("change set \(listed.seq) was listed but is gone")
        }
        guard sha256Hex(body) == entry.sha256 else {
            // Marked as a download would mark it, so its origin re-publishes it; the snapshot
            // waits for that.
            try await store.markDamaged(inSpace: spaceID, seq: entry.seq, sha256: entry.sha256)
            throw ServerStoreError.corrupt(
                "change set \(listed.seq) does not match its SHA-256: marked damaged; its origin re-publishes it on its next sync, make the snapshot after that"
            )
        }
        let changeSet = try ChangeSet(serialized: body)
        guard changeSet.origin.rawValue == entry.origin, changeSet.since == entry.since,
            changeSet.through == entry.through
        else {
            throw ServerStoreError.corrupt("change set \(listed.seq) is not the one its row describes")
        }
        return changeSet
    }
}
