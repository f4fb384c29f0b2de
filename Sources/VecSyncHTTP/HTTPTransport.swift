import Foundation
import VecSyncReplication
import GRDB
import VecSyncCore
import VecSyncWire

/// Exchanges change sets through a `vecsync-server`: one HTTP relay any number of devices
/// of a *space* sync through.
///
/// A push registers the device (its site id, name and platform), asks the server how far it
/// holds each site's changes, and posts this replica's change sets after its push cursor,
/// one request per batch, each with its SHA-256. The cursor (in the database) moves as each
/// batch is acknowledged, so a push cut short resumes where it stopped; a retried batch is
/// recognised by the server and stored once. Rows last written by sites whose changes the
/// server already holds are left out (no echo). When the server holds more of this site
/// than the cursor says — the database was restored from a backup — a sync first takes
/// back its own changes the server holds past the cursor (its lost future,
/// ``recoverLostChanges(of:events:)``) and pulls, then the new changes are renumbered above
/// them, as with ``FolderTransport``; when it holds less — the server's database was
/// restored — the push starts again from what it holds.
/// Change sets of this site the server reports damaged (their stored bytes no longer match
/// their SHA-256) are pushed again, made from what the replica holds now, and replace the
/// damaged ones (see `HTTPTransport+Repair.swift`).
///
/// A pull lists the space's change sets after the pull cursor (also kept in the database),
/// page by page, downloads each one it has not merged — in byte ranges when it is large, so
/// a broken download resumes — verifies its SHA-256, and merges them in order, several per
/// transaction. A change set that fails is reported and the cursor stops before it, so the
/// next pull tries it again; one the server holds damaged (409 `damaged`) waits for its
/// origin to push it again.
///
/// ```swift
/// let server = HTTPTransport(server: URL(string: "https://sync.example.com")!,
///                            space: "family", token: "vst_…")
/// let report = try replica.sync(through: server)
/// ```
///
/// The calls block the calling thread: call them from a thread of your own (or a detached
/// task you may block), not from the main thread of an app.
public struct HTTPTransport: SyncTransport {
    /// The server's base URL (`https://host`, or `http://127.0.0.1:8080` on loopback).
    public let server: URL
    /// The space to sync.
    public let space: String
    let token: String
    /// The name the device registers with.
    public var deviceName: String
    /// The platform the device registers with.
    public var platform: String
    /// Change sets listed per pull request.
    public var pageSize = 500

    /// Change sets larger than this are downloaded in byte ranges of this size.
    public var rangeBytes = 4 << 20
    /// Tries per request (network failures, 5xx, 429), with doubling pauses between them.
    public var attempts = 4
    /// Seconds one request may take, in all (connection, upload, answer): a server that
    /// sends slowly is given up on then, and the request tried again.
    public var timeout: TimeInterval = 60

    /// A transport to `space` on `server`, authenticated by `token` (issued with
    /// `vecsync-server token issue`).
    public init(server: URL, space: String, token: String, deviceName: String? = nil, platform: String? = nil) {
        self.server = server
        self.space = space
        self.token = token
        self.deviceName = deviceName ?? ProcessInfo.processInfo.hostName
        self.platform = platform ?? Self.currentPlatform
    }

    /// The running platform's name.
    static var currentPlatform: String {
        #if os(iOS)
            "iOS"
        #elseif os(macOS)
            "macOS"
        #elseif os(Linux)
            "Linux"
        #elseif os(Windows)
            "Windows"
        #else
            "other"
        #endif
    }

    /// This space's name among a replica's cursors: the server's store id and the space, so
    /// a cursor holds under any URL of the server and behind any of its instances.
    func cursorName(storeID: String) -> String {
        "vecsync-server:\(storeID)/\(space)"
    }

    /// The replica's push cursor for this space.
    public func pushCursor(storeID: String) -> SyncCursor {
        .push(cursorName(storeID: storeID))
    }

    /// The replica's pull cursor for this space.
    public func pullCursor(storeID: String) -> SyncCursor {
        .pull(cursorName(storeID: storeID))
    }

    /// Where a replica keeps the generation (``ServerStatus/epoch``) of the server's store its
    /// pull cursor was made under.
    func epochCursor(storeID: String) -> SyncCursor {
        .pullEpoch(cursorName(storeID: storeID))
    }

    /// The name ``pushCursor(storeID:)`` is stored under in `vecsync_published`.
    public func pushCursorKey(storeID: String) -> String {
        pushCursor(storeID: storeID).storedName
    }

    /// The name ``pullCursor(storeID:)`` is stored under in `vecsync_published`.
    public func pullCursorKey(storeID: String) -> String {
        pullCursor(storeID: storeID).storedName
    }

    /// Where a replica keeps ``mark(of:)`` of the change set at its pull cursor.
    func markCursor(storeID: String) -> SyncCursor {
        .pullMark(cursorName(storeID: storeID))
    }

    /// What identifies a listed change set (its place, origin, range and SHA-256), in 63 bits
    /// and never 0 (0 is "no mark").
    static func mark(of entry: ServerChangeSet) -> Int64 {
        let text = "\(entry.seq) \(entry.origin) \(entry.since) \(entry.through) \(entry.sha256)"
        return Int64(bitPattern: FNV1a.hash(Array(text.utf8)) & UInt64(Int64.max)) | 1
    }

    /// Where a pull starts: at `cursor`, unless the server's store went back in time since
    /// it was saved — its generation changed (a restore from `backup`, or `new-epoch`), the
    /// cursor is past the space's last sequence number, or the change set at the cursor is
    /// not the one this replica merged there (a file copy, a filesystem snapshot or a
    /// point-in-time recovery put back without a new generation) — then from the start
    /// (what is already merged is skipped), as the change sets stored after the restore
    /// reuse the numbers the cursor passed. Records the generation seen.
    func pullStart(of replica: Replica, status: ServerStatus, cursor: Int64, pullCursor: SyncCursor) throws -> Int64 {
        var restored = false
        if let epoch = status.epoch {
            let epochCursor = self.epochCursor(storeID: status.storeID)
            let known = try replica.cursor(epochCursor)
            restored = known != 0 && known != epoch
            if known != epoch { try replica.setCursor(epochCursor, to: epoch) }
        }
        if let last = status.lastSeq, cursor > last { restored = true }
        let markCursor = self.markCursor(storeID: status.storeID)
        if !restored, cursor > 0 {
            let mark = try replica.cursor(markCursor)
            restored = try mark != 0 && !holds(mark, at: cursor)
        }
        guard restored, cursor > 0 else { return cursor }
        try replica.setCursor(pullCursor, to: 0)
        try replica.setCursor(markCursor, to: 0)
        return 0
    }

    /// Whether the server lists at `seq` the change set marked `mark`. A history compacted
    /// past it cannot say: the pull's listing answers that (with the snapshot).
    private func holds(_ mark: Int64, at seq: Int64) throws -> Bool {
        do {
            let page = try listPage(after: seq - 1, limit: 1)
            guard let entry = page.changeSets.first, entry.seq == seq else { return false }
            return Self.mark(of: entry) == mark
        } catch HTTPTransportError.refused(_, 410, "compacted", _) {
            return true
        }
    }

    /// The space's base URL: `<server>/v1/spaces/<space>`.
    public var destination: String {
        var base = server.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return "\(base)/v1/spaces/\(space)"
    }

    // MARK: - Push

    /// Registers the replica as a device of the space (or updates its name and platform).
    @discardableResult
    public func register(_ replica: Replica) throws -> ServerDevice {
        let body = try JSONEncoder().encode(
            DeviceRegistration(site: replica.site.rawValue, name: deviceName, platform: platform))
        let answer = try send("POST", "devices", headers: ["Content-Type": "application/json"], body: body)
        return try decode(ServerDevice.self, answer)
    }

    /// The space's status: every device with its counts, and the server's version.
    public func status() throws -> ServerStatus {
        try decode(ServerStatus.self, send("GET", "status"))
    }

    /// Where this replica's changes stand on the server: what the space's status says of
    /// them, and what the replica says.
    private struct PushPosition {
        let devices: [ServerDevice]
        let pushCursor: SyncCursor
        /// The push cursor as stored.
        let stored: Int64
        /// How far the server holds this replica's changes.
        let head: Int64
        /// Sites whose changes the server holds (as far as this replica has them): rows they
        /// wrote last are left out of what is posted.
        let excluded: Set<SiteID>

        /// Where the push starts: the server holds at least this much (it may hold less than
        /// the cursor says when its database was restored).
        var start: Int64 { min(stored, head) }
    }

    /// Reads the space's status and the replica's cursors. A head this far past anything
    /// this replica made is not its own: another client claimed its range (servers refuse
    /// that now; older ones did not). Every push would be answered "covered" and stored
    /// nowhere, so that is an error, not a success.
    private func pushPosition(of replica: Replica) throws -> PushPosition {
        let status = try status()
        let devices = status.devices
        let heads = Dictionary(devices.map { ($0.site, $0.head) }, uniquingKeysWith: max)
        let head = heads[replica.site.rawValue] ?? 0
        let pushCursor = self.pushCursor(storeID: status.storeID)
        let stored = try replica.cursor(pushCursor)
        let latest = try replica.currentSequence()
        let received = Dictionary(try replica.peers().map { ($0.site.rawValue, $0.received) }, uniquingKeysWith: max)
        let excluded = Set(
            devices.filter { $0.site != replica.site.rawValue && $0.head >= received[$0.site] ?? 0 }
                .map { SiteID($0.site) })
        if head > max(latest, stored) + FolderTransport.plausibleRange {
            throw HTTPTransportError.protocolViolation(
                url: destination,
                reason:
                    "the server holds changes of '\(replica.site.rawValue)' through \(head), far past the \(latest) this replica made: its range was claimed by another client, and nothing it pushes would be stored; ask the server's operator"
            )
        }
        return PushPosition(devices: devices, pushCursor: pushCursor, stored: stored, head: head, excluded: excluded)
    }

    /// Before a push (see ``SyncTransport/recoverLostChanges(of:events:)``): when the server
    /// holds more of this replica than its push cursor says, either the answers to its last
    /// pushes were lost (the same batches are stored: posted again, they are recognised as
    /// duplicates and the cursor catches up), or this database was restored from a backup:
    /// then what it would push differs from what is stored, and its own changes the server
    /// holds past the cursor (its lost future) are merged back here.
    public func recoverLostChanges(of replica: Replica, events: SyncEventSink = SyncEventSink()) throws
        -> LostChanges?
    {
        let position = try pushPosition(of: replica)
        var reached = position.start
        guard position.head > reached else { return nil }
        do {
            try replica.forEachChangeSet(since: reached, excluding: position.excluded) { batch in
                guard batch.through <= position.head else { throw ReplayEnded() }
                var batch = batch
                batch.since = reached
                // A range the server held damaged is replaced by the replay: as good.
                switch try post(batch).answer {
                case .accepted(.duplicate), .accepted(.repaired): break
                default: throw ReplayEnded()
                }
                reached = batch.through
            }
        } catch is ReplayEnded {
        } catch {
            if reached != position.stored { try replica.setCursor(position.pushCursor, to: reached) }
            throw error
        }
        if reached != position.stored { try replica.setCursor(position.pushCursor, to: reached) }
        guard reached < position.head else { return nil }
        try recoverLostChanges(of: replica, after: reached, through: position.head)
        return LostChanges(published: reached, claimed: position.head, pushCursor: position.pushCursor)
    }

    /// Posts every change after the push cursor, in bounded batches; moves the cursor as the
    /// server acknowledges each, and reports each to `events`. The server must hold nothing
    /// of this replica past the cursor: ``recoverLostChanges(of:events:)`` first (a sync does).
    public func push(_ replica: Replica, events: SyncEventSink = SyncEventSink()) throws -> (files: Int, rows: Int) {
        try register(replica)
        let position = try pushPosition(of: replica)
        var reached = position.start
        if position.head > reached {
            throw VecSyncError.lostChangesNotRecovered(destination: destination, published: reached, held: position.head)
        }
        var sent = 0
        var rows = 0
        var posts: [(rows: Int, bytes: Int)] = []
        do {
            let end = try replica.forEachChangeSet(since: reached, excluding: position.excluded) { batch in
                // Batches whose rows were all left out are skipped; the next one is sent as
                // following the last one sent, so the server sees no hole (what lies between
                // is held there from its authors).
                var batch = batch
                batch.since = reached
                let posted = try post(batch)
                if posted.answer == .conflict {
                    throw HTTPTransportError.refused(
                        url: destination + "/changesets", status: 409, code: "range-conflict",
                        message:
                            "changes (\(batch.since), \(batch.through)] of '\(batch.origin)' are held with other bytes")
                }
                reached = batch.through
                sent += 1
                rows += batch.records.count
                posts.append((batch.records.count, posted.bytes))
            }
            reached = max(reached, end)
        } catch {
            if reached != position.stored { try replica.setCursor(position.pushCursor, to: reached) }
            throw error
        }
        if reached != position.stored { try replica.setCursor(position.pushCursor, to: reached) }
        try events.pushed(posts)
        // Last, so that a replacement the server refuses does not hold back the new changes.
        let damaged = position.devices.first { $0.site == replica.site.rawValue }?.damaged ?? []
        let repaired = try republishDamaged(damaged, of: replica)
        return (sent + repaired.files, rows + repaired.rows)
    }

    /// What the server answered to one posted change set.
    enum PostAnswer: Equatable {
        /// Accepted: stored, or held already (``PushResult/Outcome``).
        case accepted(PushResult.Outcome)
        /// The same range is held with other bytes (`409 range-conflict`).
        case conflict
    }

    /// Posts one change set; returns what the server answered and the bytes posted.
    @discardableResult
    func post(_ changeSet: ChangeSet) throws -> (answer: PostAnswer, bytes: Int) {
        let body = changeSet.serialized()
        do {
            let answer = try send(
                "POST", "changesets",
                headers: ["Content-Type": Wire.changeSetMediaType, Self.sha256Header: sha256Hex(body)],
                body: body, accepted: [200, 201])
            return (.accepted(try decode(PushResult.self, answer).result), body.count)
        } catch HTTPTransportError.refused(_, 409, "range-conflict", _) {
            return (.conflict, body.count)
        }
    }

    /// Merges back `replica`'s own change sets the server holds in `(published, claimed]`:
    /// after a restore from a backup, the lost future no peer sends back (see
    /// ``Replica/recoverLostChanges(_:)``), in bounded transactions. They were stored after
    /// the backup was made, so after the pull cursor the backup kept; the listing is read
    /// from there without recording a pull. History compacted since is in the snapshot, which
    /// the next pull starts from, so the listing stops at a 410.
    func recoverLostChanges(of replica: Replica, after published: Int64, through claimed: Int64) throws {
        let status = try status()
        var after = try replica.cursor(pullCursor(storeID: status.storeID))
        var groups = BoundedMerge<ChangeSet>(replica) { group, _ in _ = try replica.recoverLostChanges(group) }
        listing: for _ in 0..<Self.maximumPages {
            let page: ServerChangeSetPage
            do {
                page = try listPage(after: after)
            } catch HTTPTransportError.refused(_, 410, "compacted", _) {
                break listing
            }
            for entry in page.changeSets {
                after = entry.seq
                guard entry.origin == replica.site.rawValue, entry.through > published, entry.through <= claimed else {
                    continue
                }
                // One that cannot be read is skipped: the peers that merged it keep its rows.
                guard case .success(let changeSet) = try fetch(entry) else { continue }
                try groups.add(changeSet, rows: changeSet.records.count, bytes: Int(clamping: entry.size))
            }
            if !page.hasMore || page.changeSets.isEmpty { break }
        }
        try groups.finish()
    }

    /// One page of the space's change sets after `after`; with `site`, the server records
    /// the listing as that device's pull (it holds everything up to `after`).
    /// Its entries must follow `after` in increasing order.
    /// One page of the listing after `after`. `pullingAs` names this replica's site and the
    /// sequence number through which it holds every change set merged (its pull cursor), for
    /// the server to record as its pull point.
    func listPage(after: Int64, limit: Int? = nil, pullingAs puller: (site: String, merged: Int64)? = nil) throws
        -> ServerChangeSetPage
    {
        var query = [
            URLQueryItem(name: ChangeSetPaging.afterParameter, value: String(after)),
            URLQueryItem(name: ChangeSetPaging.limitParameter, value: String(limit ?? pageSize)),
        ]
        if let puller {
            query.append(URLQueryItem(name: ChangeSetPaging.siteParameter, value: puller.site))
            query.append(URLQueryItem(name: ChangeSetPaging.mergedParameter, value: String(puller.merged)))
        }
        let page = try decode(ServerChangeSetPage.self, send("GET", "changesets", query: query))
        var previous = after
        for entry in page.changeSets {
            guard entry.seq > previous else {
                throw HTTPTransportError.protocolViolation(
                    url: destination, reason: "change set \(entry.seq) listed after \(previous)")
            }
            previous = entry.seq
        }
        return page
    }

    /// Ends the replay of batches the server may already hold.
    private struct ReplayEnded: Error {}

    // MARK: - Pull

    /// Lists every change set after the pull cursor, then downloads, verifies and merges
    /// them in order, in bounded transactions (see ``Replica/Options/maximumMergeRows``),
    /// reporting each commit to `events`; the pull cursor is saved after each commit, so a
    /// pull cut short goes on from there. A change set that cannot be fetched, read or merged
    /// is reported, the cursor stops before it, and its origin is recorded as waiting
    /// (``Replica/gaps()``): the next pull downloads it again.
    public func pull(into replica: Replica, events: SyncEventSink = SyncEventSink()) throws -> (
        merges: [MergeReport], problems: [String], unknownFiles: Int
    ) {
        let own = replica.site.rawValue
        let status = try status()
        let pullCursor = self.pullCursor(storeID: status.storeID)
        let markCursor = self.markCursor(storeID: status.storeID)
        var cursor = try pullStart(
            of: replica, status: status, cursor: try replica.cursor(pullCursor), pullCursor: pullCursor)
        var merges: [MergeReport] = []
        // A new device (or one behind the compaction point) starts from the snapshot.
        var bootstrapped = false
        if let snapshot = status.snapshot, cursor == 0 || cursor < snapshot.compactedThrough {
            merges += try bootstrap(replica, from: snapshot, pullCursor: pullCursor)
            try replica.setCursor(markCursor, to: 0)
            cursor = max(cursor, snapshot.seq)
            bootstrapped = true
        }
        var received = Dictionary(try replica.peers().map { ($0.site.rawValue, $0.received) }, uniquingKeysWith: max)
        var problems: [String] = []
        // The first change set of each origin that failed, with the reason.
        var failures: [String: (entry: ServerChangeSet, reason: String)] = [:]
        // The cursor moves over change sets merged (or already held) in order, and stops
        // before the first that failed, so the next pull tries it again.
        var blocked = false
        // The mark of the change set the cursor moved to, saved with it (0: the cursor is a
        // snapshot's place); nil while the cursor has not moved.
        var mark: Int64?
        func settle(_ entry: ServerChangeSet, failure: String?) {
            if let failure {
                blocked = true
                problems.append(failure)
                if failures[entry.origin] == nil { failures[entry.origin] = (entry, failure) }
            }
            if !blocked && entry.seq > cursor {
                cursor = entry.seq
                mark = Self.mark(of: entry)
            }
        }
        var groups = BoundedMerge<(entry: ServerChangeSet, step: PullStep)>(replica) { group, bytes in
            let changeSets = group.compactMap { item -> ChangeSet? in
                if case .merge(let changeSet) = item.step { return changeSet }
                return nil
            }
            var results = try replica.mergeGroup(changeSets, bytes: bytes, events: events)[...]
            for (entry, step) in group {
                switch step {
                case .skip:
                    settle(entry, failure: nil)
                case .failed(let problem):
                    settle(entry, failure: problem)
                case .merge:
                    switch results.popFirst() {
                    case .success(let report):
                        merges.append(report)
                        received[entry.origin] = max(received[entry.origin] ?? 0, entry.through)
                        settle(entry, failure: nil)
                    case .failure(let error):
                        settle(entry, failure: "\(Self.name(of: entry)): refused: \(error)")
                    case nil:
                        settle(entry, failure: "\(Self.name(of: entry)): not merged")
                    }
                }
            }
            try replica.setCursor(pullCursor, to: cursor)
            if let mark { try replica.setCursor(markCursor, to: mark) }
        }

        // The list first (a few hundred bytes per change set), so the bytes to read are known.
        var listed: [ServerChangeSet] = []
        var after = cursor
        // Each page moves `after` forward (a page that does not ends the listing).
        for _ in 0..<Self.maximumPages {
            let page: ServerChangeSetPage
            do {
                // The pull point sent is the cursor as merged, not `after`: every page after the
                // first lists change sets this replica has not downloaded yet.
                page = try listPage(after: after, pullingAs: (own, cursor))
            } catch HTTPTransportError.refused(_, 410, "compacted", _) where !bootstrapped {
                // Compacted past our cursor while we were away: bootstrap again, go on after it.
                guard let snapshot = try self.status().snapshot else {
                    throw HTTPTransportError.protocolViolation(
                        url: destination, reason: "the history is compacted but there is no snapshot")
                }
                merges += try bootstrap(replica, from: snapshot, pullCursor: pullCursor)
                try replica.setCursor(markCursor, to: 0)
                bootstrapped = true
                cursor = max(cursor, snapshot.seq)
                mark = nil
                after = cursor
                received = Dictionary(
                    try replica.peers().map { ($0.site.rawValue, $0.received) }, uniquingKeysWith: max)
                continue
            }
            if let epoch = page.epoch, let known = status.epoch, epoch != known {
                throw HTTPTransportError.protocolViolation(
                    url: destination,
                    reason: "the server's store was restored from a backup while this replica pulled; sync again")
            }
            for entry in page.changeSets {
                after = entry.seq
                listed.append(entry)
            }
            if !page.hasMore || page.changeSets.isEmpty { break }
        }
        func needed(_ entry: ServerChangeSet) -> Bool {
            entry.origin != own && entry.through > received[entry.origin] ?? 0
        }
        events.expect(bytes: listed.filter(needed).reduce(0) { $0 + Int(clamping: $1.size) })

        for entry in listed {
            guard needed(entry) else {
                // Our own, or already merged: nothing to fetch.
                try groups.add((entry, .skip), rows: 0, bytes: 0)
                continue
            }
            let changeSet: ChangeSet
            switch try fetch(entry) {
            case .success(let fetched):
                changeSet = fetched
            case .failure(let error):
                try groups.add((entry, .failed("\(Self.name(of: entry)): skipped: \(error)")), rows: 0, bytes: 0)
                events.passed(bytes: Int(clamping: entry.size))
                continue
            }
            try replica.addPeer(changeSet.origin)
            try groups.add(
                (entry, .merge(changeSet)), rows: changeSet.records.count, bytes: Int(clamping: entry.size))
        }
        try groups.finish()
        try noteGaps(replica, listed: listed, failures: failures, events: events)
        return (merges, problems, 0)
    }

    /// `change set 12 (phone 40-80)`, as problems name a listed change set.
    static func name(of entry: ServerChangeSet) -> String {
        "change set \(entry.seq) (\(entry.origin) \(entry.since)-\(entry.through))"
    }

    /// Records, for each origin listed by a pull, the range it waits for after its first
    /// change set that failed (or nothing), and reports it to `events`.
    private func noteGaps(
        _ replica: Replica, listed: [ServerChangeSet], failures: [String: (entry: ServerChangeSet, reason: String)],
        events: SyncEventSink
    ) throws {
        let received = Dictionary(try replica.peers().map { ($0.site.rawValue, $0.received) }, uniquingKeysWith: max)
        // Origins listed now, and those a gap was recorded for before: a snapshot merged
        // since (a bootstrap after a compaction) may have filled it without listing them.
        let waiting = try replica.gaps().map(\.origin.rawValue)
        let origins = Set(listed.map(\.origin) + waiting).subtracting([replica.site.rawValue])
        for origin in origins.sorted() {
            let cursor = received[origin] ?? 0
            var gap: SyncGap?
            if let failure = failures[origin], failure.entry.through > cursor {
                gap = SyncGap(
                    origin: SiteID(origin), since: cursor, through: failure.entry.through,
                    reason: "\(failure.reason); downloaded again by the next pull")
            }
            try replica.setGap(gap, for: SiteID(origin))
            if let gap { try events.send(.waiting(gap)) }
        }
    }

    /// The most pages one pull reads (500 million change sets at the default page size);
    /// the next pull goes on from there.
    static let maximumPages = 1_000_000

    /// What a pull does with one listed change set, in list order.
    enum PullStep {
        /// Merge it.
        case merge(ChangeSet)
        /// Nothing to do: it is ours, or already merged.
        case skip
        /// It could not be fetched or read: the line to report.
        case failed(String)
    }

    /// ``download(_:)``, with a change set that cannot be fetched or read as the failure (to
    /// report or skip); a server that cannot be reached is thrown, as is any other error.
    func fetch(_ entry: ServerChangeSet) throws -> Result<ChangeSet, any Error> {
        do {
            return .success(try download(entry))
        } catch let error as HTTPTransportError {
            if case .unreachable = error { throw error }
            return .failure(error)
        } catch let error as VecSyncError {
            return .failure(error)
        }
    }

    /// One change set, checked against its SHA-256 and decoded; it must come from the origin
    /// the listing named.
    func download(_ entry: ServerChangeSet) throws -> ChangeSet {
        let path = "changesets/\(entry.seq)"
        let body = try downloadBody(path, size: entry.size, sha256: entry.sha256)
        let changeSet = try ChangeSet(serialized: body)
        guard changeSet.origin.rawValue == entry.origin, changeSet.since == entry.since,
            changeSet.through == entry.through
        else {
            throw HTTPTransportError.protocolViolation(
                url: "\(destination)/\(path)", reason: "the change set is not the one listed")
        }
        return changeSet
    }

    /// Stored bytes under `path`, in byte ranges when they are large (a broken download
    /// resumes from the last range), checked against their SHA-256.
    func downloadBody(_ path: String, size: Int64, sha256: String) throws -> Data {
        var body = Data()
        if size > Int64(rangeBytes) {
            body.reserveCapacity(Int(size))
            while Int64(body.count) < size {
                let end = min(Int64(body.count) + Int64(rangeBytes), size) - 1
                let part = try send(
                    "GET", path, headers: ["Range": "bytes=\(body.count)-\(end)"], accepted: [206],
                    maximumBytes: Int(end) - body.count + 1)
                guard !part.body.isEmpty, Int64(body.count + part.body.count) <= size else {
                    throw HTTPTransportError.protocolViolation(
                        url: "\(destination)/\(path)", reason: "a byte range of the wrong size")
                }
                if let announced = part.header(Self.sha256Header)?.lowercased(), announced != sha256.lowercased() {
                    throw HTTPTransportError.protocolViolation(
                        url: "\(destination)/\(path)", reason: "listed with SHA-256 \(sha256), served with \(announced)"
                    )
                }
                body.append(part.body)
            }
        } else {
            let answer = try send("GET", path, maximumBytes: Int(size))
            if let announced = answer.header(Self.sha256Header)?.lowercased(), announced != sha256.lowercased() {
                throw HTTPTransportError.protocolViolation(
                    url: "\(destination)/\(path)", reason: "listed with SHA-256 \(sha256), served with \(announced)")
            }
            body = answer.body
        }
        let actual = sha256Hex(body)
        guard actual == sha256.lowercased() else {
            throw HTTPTransportError.integrity(url: "\(destination)/\(path)", expected: sha256, actual: actual)
        }
        return body
    }
}
