import Foundation
import NIOCore

/// A cap on the connections served at once, shared so that clients that only hold places
/// cannot lock the others out.
///
/// Below the cap every connection is admitted. At the cap, a new connection takes the place
/// of another, in this order: a connection that has sent nothing at all, the oldest first;
/// then one that never carried a valid token and has been idle (nothing read or written)
/// for ``idleBeforeEviction``; then an idle one that did, idle the longest. A client that
/// opens silent connections as fast as they are closed takes its own places back, while a
/// device's new connection, which sends its request at once, is served: devices keep a
/// reserve. When no connection may give way (all are busy), the new one is closed as soon
/// as it is accepted, which costs the server a file descriptor for an instant, not a
/// connection's memory until it ends.
final class ConnectionLimiter: @unchecked Sendable {
    /// The most connections served at once.
    let maximum: Int
    /// How long a connection must have been silent before a newcomer may take its place.
    let idleBeforeEviction: Duration
    private let lock = NSLock()
    /// The connections admitted and not ended or evicted.
    private var places: [ObjectIdentifier: Place] = [:]
    private var closing = false

    private final class Place {
        let channel: any Channel
        let admitted: ContinuousClock.Instant
        var lastActive: ContinuousClock.Instant
        var spoke = false
        var trusted = false

        init(_ channel: any Channel, at now: ContinuousClock.Instant) {
            self.channel = channel
            self.admitted = now
            self.lastActive = now
        }

        /// Its rank among those that may give way now (lowest first); nil when it may not.
        func rank(at now: ContinuousClock.Instant, idle: Duration) -> (Int, ContinuousClock.Instant)? {
            if !spoke { return (0, admitted) }
            guard now - lastActive >= idle else { return nil }
            return (trusted ? 2 : 1, lastActive)
        }
    }

    /// A limiter of `maximum` connections.
    init(maximum: Int, idleBeforeEviction: Duration = .seconds(1)) {
        self.maximum = maximum
        self.idleBeforeEviction = idleBeforeEviction
    }

    /// Takes a place for `channel`, closing the connection idle the longest when all are
    /// taken; false (nothing taken) when none is idle.
    func enter(_ channel: any Channel) -> Bool {
        let now = ContinuousClock.now
        lock.lock()
        var evicted: Place?
        if places.count >= maximum {
            let ranked = places.compactMap { key, place in
                place.rank(at: now, idle: idleBeforeEviction).map { (key, place, $0) }
            }
            guard let chosen = ranked.min(by: { $0.2 < $1.2 }).map({ ($0.0, $0.1) }) else {
                lock.unlock()
                return false
            }
            places[chosen.0] = nil
            evicted = chosen.1
        }
        places[ObjectIdentifier(channel)] = Place(channel, at: now)
        lock.unlock()
        evicted?.channel.close(promise: nil)
        return true
    }

    /// Notes that `channel` read (`read`) or wrote something.
    func touch(_ channel: any Channel, read: Bool) {
        let now = ContinuousClock.now
        lock.lock()
        if let place = places[ObjectIdentifier(channel)] {
            place.lastActive = now
            if read { place.spoke = true }
        }
        lock.unlock()
    }

    /// Notes that `channel` carried a request with a valid token: it is taken for an idle
    /// connection's place only after every idle connection that never did.
    func trust(_ channel: any Channel) {
        lock.lock()
        places[ObjectIdentifier(channel)]?.trusted = true
        lock.unlock()
    }

    /// Gives `channel`'s place back (nothing when it was taken for another).
    func leave(_ channel: any Channel) {
        lock.lock()
        places[ObjectIdentifier(channel)] = nil
        lock.unlock()
    }

    /// The connections holding a place now.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return places.count
    }

    /// Closes every connection still open (a shutdown past its deadline); returns how many.
    /// From then on ``closedAll`` is true: work of a request that does not write (a body
    /// hashed before its answer starts) stops at its next check.
    @discardableResult
    func closeAll() -> Int {
        lock.lock()
        let open = places.values.map(\.channel)
        closing = true
        lock.unlock()
        for channel in open { channel.close(promise: nil) }
        return open.count
    }

    /// Whether ``closeAll()`` has run.
    var closedAll: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closing
    }

    /// The channel handler to add to each connection's pipeline.
    func handler() -> any RemovableChannelHandler { Gate(limiter: self) }

    /// Takes a place when added to a connection, gives it back when the connection ends;
    /// closes the connection when there is none. Notes each read and write.
    private final class Gate: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
        typealias OutboundIn = NIOAny
        let limiter: ConnectionLimiter
        var admitted = false

        init(limiter: ConnectionLimiter) {
            self.limiter = limiter
        }

        func handlerAdded(context: ChannelHandlerContext) {
            admitted = limiter.enter(context.channel)
            if !admitted { context.close(promise: nil) }
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            if admitted { limiter.leave(context.channel) }
            admitted = false
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            limiter.touch(context.channel, read: true)
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            limiter.touch(context.channel, read: false)
            context.write(data, promise: promise)
        }
    }
}
