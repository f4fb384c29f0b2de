import Crypto
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
/// let snapshot = try await compactor.makeSnapshot(spaceID: space.id, at: now)   // in parts past 64 MiB
/// let (through, dropped) = try await compactor.compact(spaceID: space.id, force: false)
/// ```
public struct SpaceCompactor: Sendable {
    /// The origin a snapshot's change set names: not a device. A device bootstrapping from
    /// it merges its rows under the origins of its heads (see `openapi.yaml`).
    public static let snapshotOrigin: SiteID = "vecsync-snapshot"
    /// Change sets folded at once (with the part so far), unless their bytes reach a part first.
    public static let foldPage = 100

    /// The largest value the stores keep: SQLite's default limit on one value
    /// (`SQLITE_MAX_LENGTH`, 10^9 bytes) and PostgreSQL's on a `bytea` (1 GiB), less room for
    /// the row around it. No part of a snapshot passes it.
    public static let largestStoredValue = 1_000_000_000 - (1 << 20)
    /// The size a snapshot's parts keep under by default. Folding holds about six times a
    /// part in memory, and a device downloads and merges one part at a time.
    public static let defaultSnapshotPartBytes = 64 << 20
    /// The most parts a snapshot is made in.
    public static let maximumParts = 1 << 14

    /// Where the space is stored.
    public let store: any ServerStore
    /// The size a part keeps under (but a part holding one row larger than it). A smaller
    /// snapshot is one change set; a larger one is made in parts, each row in one of them.
    public let snapshotPartBytes: Int

    /// A compactor over `store`; `snapshotPartBytes` is kept within 1 and
    /// ``largestStoredValue``.
    public init(store: any ServerStore, snapshotPartBytes: Int = Self.defaultSnapshotPartBytes) {
        self.store = store
        self.snapshotPartBytes = min(max(snapshotPartBytes, 1), Self.largestStoredValue)
    }

    /// Folds the change sets after the space's snapshot into a new snapshot and stores it;
    /// returns the space's snapshot (the old one when nothing came after it, nil when the
    /// space has no change set at all). Change sets pushed meanwhile are left to the next.
    ///
    /// The history's size (the old snapshot and the change sets after it) says how many parts
    /// to make; the first part, folded, says whether fewer will do. Each part is folded in a
    /// pass of its own over the history, keeping only its rows (``ChangeSet/rows(inPart:of:)``),
    /// and stored before the next is made, so memory holds one part and one page of history.
    /// A part past ``snapshotPartBytes`` (rows spread unevenly) starts again in twice as many.
    public func makeSnapshot(spaceID: Int64, at time: Int64) async throws -> ServerSnapshot? {
        let previous = try await store.snapshotEntry(inSpace: spaceID)
        var listed: [ServerChangeSet] = []
        while true {
            let page = try await store.changeSets(
                inSpace: spaceID, after: listed.last?.seq ?? previous?.seq ?? 0, limit: Self.foldPage)
            if page.isEmpty { break }
            listed += page
        }
        guard let seq = listed.last?.seq else { return previous }
        var heads = previous?.heads ?? [:]
        for entry in listed { heads[entry.origin] = max(heads[entry.origin] ?? 0, entry.through) }
        let history = Int(previous?.size ?? 0) + listed.reduce(0) { $0 + Int($1.size) }
        var count = min(Self.maximumParts, max(1, history / snapshotPartBytes + 1))
        var recounted = false
        attempt: while true {
            var parts: [ServerSnapshotPart] = []
            var whole = SHA256()
            var single = Data()
            for part in 0..<count {
                let folded = try await fold(part: part, of: count, previous: previous, listed: listed, spaceID: spaceID)
                let body = folded.serialized()
                if body.count > snapshotPartBytes, folded.records.count > 1 || body.count > Self.largestStoredValue {
                    guard count < Self.maximumParts, folded.records.count > 1 else {
                        throw ServerStoreError.snapshotTooLarge(bytes: body.count, limit: Self.largestStoredValue)
                    }
                    count = min(count * 2, Self.maximumParts)
                    recounted = true
                    continue attempt
                }
                if part == 0, count > 1, !recounted {
                    // Rows overwritten in the history fold smaller than it: as many parts as
                    // the first one says, with a quarter to spare.
                    let needed = (body.count * count + body.count * count / 4) / snapshotPartBytes + 1
                    recounted = true
                    if needed * 2 <= count {
                        count = needed
                        continue attempt
                    }
                }
                if count == 1 {
                    single = body
                } else if !(try await store.saveSnapshotPart(body, part: part, seq: seq, inSpace: spaceID)) {
                    // Another compaction stored a snapshot this far first.
                    return try await store.snapshotEntry(inSpace: spaceID)
                }
                whole.update(data: body)
                parts.append(
                    ServerSnapshotPart(rows: Int64(folded.records.count), size: Int64(body.count), sha256: sha256Hex(body)))
            }
            let entry = ServerSnapshot(
                seq: seq, heads: heads, rows: parts.reduce(0) { $0 + $1.rows }, size: parts.reduce(0) { $0 + $1.size },
                sha256: whole.finalize().map { String(format: "%02x", $0) }.joined(), createdAt: time,
                compactedThrough: previous?.compactedThrough ?? 0, parts: count > 1 ? parts : nil)
            _ = try await store.saveSnapshot(entry, body: single, inSpace: spaceID)
            return try await store.snapshotEntry(inSpace: spaceID)
        }
    }

    /// Part `part` of `count` of the snapshot through the last of `listed`: the rows of the
    /// previous snapshot and of the change sets after it that fall in that part, folded.
    private func fold(
        part: Int, of count: Int, previous: ServerSnapshot?, listed: [ServerChangeSet], spaceID: Int64
    ) async throws -> ChangeSet {
        let through = listed.last?.seq ?? 0
        var folded: ChangeSet?
        var group: [ChangeSet] = []
        var groupBytes = 0
        func foldGroup() throws {
            guard !group.isEmpty else { return }
            folded = try ChangeSet.folded(
                (folded.map { [$0] } ?? []) + group, origin: Self.snapshotOrigin, since: 0, through: through)
            group = []
            groupBytes = 0
        }
        if let previous {
            // Its parts, or the one that holds this part's rows when they were made alike.
            let described = previous.parts ?? [ServerSnapshotPart(rows: previous.rows, size: previous.size, sha256: previous.sha256)]
            let read: [Int?] = previous.parts == nil ? [nil] : described.count == count ? [part] : described.indices.map { $0 }
            for index in read {
                let entry = described[index ?? 0]
                let what = index.map { "part \($0) of the snapshot through \(previous.seq)" } ?? "the snapshot through \(previous.seq)"
                guard
                    let body = try await store.snapshotBytes(
                        inSpace: spaceID, seq: previous.seq, part: index, range: 0..<Int(entry.size))
                else { throw ServerStoreError.corrupt("\(what) was described but is gone") }
                guard sha256Hex(body) == entry.sha256 else {
                    throw ServerStoreError.corrupt("\(what) does not match its SHA-256")
                }
                group.append(try ChangeSet(serialized: body).rows(inPart: part, of: count))
                try foldGroup()
            }
        }
        for entry in listed {
            group.append(try await changeSet(entry, spaceID: spaceID).rows(inPart: part, of: count))
            groupBytes += Int(entry.size)
            if group.count >= Self.foldPage || groupBytes >= snapshotPartBytes { try foldGroup() }
        }
        try foldGroup()
        return folded ?? ChangeSet(origin: Self.snapshotOrigin, since: 0, through: through, tables: [], records: [])
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
