import Foundation
import VecSyncReplication
import VecSyncWire

/// A store whose every call answers within a time limit: past it, the call fails with
/// ``ServerStoreError/unavailable(_:)`` (503 to the client) instead of waiting — for a
/// PostgreSQL database that is down, restarting, or unreachable, where a query would wait
/// for a connection without end, hold its request open, and keep the server from stopping.
/// What the call was doing goes on in the background and ends when the database answers
/// (a PostgreSQL statement is also cut by the server after its `statement_timeout`).
///
/// Once a call has found the store unavailable, one call at a time goes on to it (a probe,
/// still limited) and every other call fails at once the same way, until a call is answered:
/// during an outage requests get their 503 now instead of each waiting out the limit.
public struct TimedStore: ServerStore {
    /// The store it forwards to.
    public let base: any ServerStore
    /// How long one call may take.
    public let limit: Duration
    private let health = StoreHealth()

    /// `base`, each call limited to `limit`.
    public init(_ base: any ServerStore, limit: Duration) {
        self.base = base
        self.limit = limit
    }

    private func timed<T: Sendable>(_ what: String, _ work: @escaping @Sendable () async throws -> T) async throws
        -> T
    {
        let limit = self.limit
        let admission = health.admit()
        if admission == .refused {
            throw ServerStoreError.unavailable(
                "\(what): the store did not answer a call just before; another call is finding out whether it is back")
        }
        do {
            let result = try await Deadline.run(
                within: limit, failing: ServerStoreError.unavailable("\(what) took more than \(limit)"), work)
            health.finished(admission, answered: true)
            return result
        } catch is CancellationError {
            health.finished(admission, answered: nil)
            throw CancellationError()
        } catch {
            health.finished(admission, answered: StoreFailure.of(error) != .unavailable)
            throw error
        }
    }

    public func prepare() async throws { try await timed("preparing the store") { try await base.prepare() } }
    public func storeID() async throws -> String {
        try await timed("reading the store id") { try await base.storeID() }
    }
    public func epoch() async throws -> Int64 { try await timed("reading the epoch") { try await base.epoch() } }
    public func newEpoch() async throws -> Int64 { try await timed("a new epoch") { try await base.newEpoch() } }
    public func lastSequence(inSpace spaceID: Int64) async throws -> Int64 {
        try await timed("reading the last sequence number") { try await base.lastSequence(inSpace: spaceID) }
    }
    public func createSpace(named name: String, at time: Int64) async throws -> SpaceRecord {
        try await timed("creating a space") { try await base.createSpace(named: name, at: time) }
    }
    public func spaces() async throws -> [SpaceRecord] { try await timed("listing spaces") { try await base.spaces() } }
    public func addToken(_ token: TokenRecord, toSpaceNamed space: String) async throws {
        try await timed("adding a token") { try await base.addToken(token, toSpaceNamed: space) }
    }
    public func revokeToken(id: String, at time: Int64) async throws -> Bool {
        try await timed("revoking a token") { try await base.revokeToken(id: id, at: time) }
    }
    public func tokens(ofSpaceNamed space: String) async throws -> [TokenRecord] {
        try await timed("listing tokens") { try await base.tokens(ofSpaceNamed: space) }
    }
    public func grant(forTokenHash hash: String) async throws -> TokenGrant? {
        try await timed("checking a token") { try await base.grant(forTokenHash: hash) }
    }
    public func takeRequest(fromBucket key: String, perSecond: Double, burst: Int) async throws -> Bool {
        try await timed("counting a request") {
            try await base.takeRequest(fromBucket: key, perSecond: perSecond, burst: burst)
        }
    }
    public func registerDevice(
        _ registration: DeviceRegistration, inSpace spaceID: Int64, claimedBy claimant: TokenGrant?, at time: Int64
    ) async throws -> ServerDevice? {
        try await timed("registering a device") {
            try await base.registerDevice(registration, inSpace: spaceID, claimedBy: claimant, at: time)
        }
    }
    public func owner(ofDevice site: String, inSpace spaceID: Int64) async throws -> DeviceOwner? {
        try await timed("reading a device's owner") { try await base.owner(ofDevice: site, inSpace: spaceID) }
    }
    public func push(_ changeSet: IncomingChangeSet, inSpace spaceID: Int64, at time: Int64) async throws
        -> PushOutcome
    {
        try await timed("storing a change set") { try await base.push(changeSet, inSpace: spaceID, at: time) }
    }
    public func changeSets(inSpace spaceID: Int64, after cursor: Int64, limit: Int) async throws -> [ServerChangeSet] {
        try await timed("listing change sets") {
            try await base.changeSets(inSpace: spaceID, after: cursor, limit: limit)
        }
    }
    public func changeSet(inSpace spaceID: Int64, seq: Int64) async throws -> (entry: ServerChangeSet, body: Data)? {
        let (entry, body) = try await timed("reading a change set") { () -> (ServerChangeSet?, Data) in
            guard let found = try await base.changeSet(inSpace: spaceID, seq: seq) else { return (nil, Data()) }
            return (found.entry, found.body)
        }
        return entry.map { ($0, body) }
    }
    public func changeSetBytes(inSpace spaceID: Int64, seq: Int64, range: Range<Int>) async throws -> Data? {
        try await timed("reading part of a change set") {
            try await base.changeSetBytes(inSpace: spaceID, seq: seq, range: range)
        }
    }
    public func snapshotBytes(inSpace spaceID: Int64, seq: Int64, part: Int?, range: Range<Int>) async throws
        -> Data?
    {
        try await timed("reading part of a snapshot") {
            try await base.snapshotBytes(inSpace: spaceID, seq: seq, part: part, range: range)
        }
    }
    public func markDamaged(inSpace spaceID: Int64, seq: Int64, sha256: String) async throws {
        try await timed("marking a change set damaged") {
            try await base.markDamaged(inSpace: spaceID, seq: seq, sha256: sha256)
        }
    }
    public func recordPull(bySite site: String, inSpace spaceID: Int64, after cursor: Int64, at time: Int64)
        async throws
    {
        try await timed("recording a pull") {
            try await base.recordPull(bySite: site, inSpace: spaceID, after: cursor, at: time)
        }
    }
    public func devices(inSpace spaceID: Int64) async throws -> [ServerDevice] {
        try await timed("listing devices") { try await base.devices(inSpace: spaceID) }
    }
    public func slowestPullPoint(inSpace spaceID: Int64) async throws -> Int64 {
        try await timed("reading pull points") { try await base.slowestPullPoint(inSpace: spaceID) }
    }
    public func snapshotEntry(inSpace spaceID: Int64) async throws -> ServerSnapshot? {
        try await timed("reading the snapshot entry") { try await base.snapshotEntry(inSpace: spaceID) }
    }
    public func saveSnapshotPart(_ body: Data, part: Int, seq: Int64, inSpace spaceID: Int64) async throws -> Bool {
        try await timed("saving part of a snapshot") {
            try await base.saveSnapshotPart(body, part: part, seq: seq, inSpace: spaceID)
        }
    }
    public func saveSnapshot(_ entry: ServerSnapshot, body: Data, inSpace spaceID: Int64) async throws -> Bool {
        try await timed("saving a snapshot") { try await base.saveSnapshot(entry, body: body, inSpace: spaceID) }
    }
    public func compact(inSpace spaceID: Int64, through: Int64) async throws -> Int {
        try await timed("compacting") { try await base.compact(inSpace: spaceID, through: through) }
    }
    public func close() async { await base.close() }
}

/// Whether a ``TimedStore``'s store answered its last call, and whether a call is now finding
/// out (the probe) while it did not.
final class StoreHealth: @unchecked Sendable {
    enum Admission { case go, probe, refused }

    private let lock = NSLock()
    private var down = false
    private var probing = false

    /// How a call may go: on (the store answered last), on as the probe (it did not, and no
    /// call is finding out), or not at all.
    func admit() -> Admission {
        lock.lock()
        defer { lock.unlock() }
        if !down { return .go }
        if probing { return .refused }
        probing = true
        return .probe
    }

    /// A call admitted as `admission` ended: the store `answered` (with a result or an error
    /// of its own), or did not, or nobody knows (the caller went away: nil).
    func finished(_ admission: Admission, answered: Bool?) {
        lock.lock()
        defer { lock.unlock() }
        if admission == .probe { probing = false }
        if let answered { down = !answered }
    }
}
