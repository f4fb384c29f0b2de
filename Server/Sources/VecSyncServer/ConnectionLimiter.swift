import Foundation
import NIOCore

/// A cap on the connections served at once: one past it is closed as soon as it is
/// accepted, so a flood of connections (idle ones, slow ones) costs the server a file
/// descriptor for an instant, not a connection's memory until it ends, and the clients
/// already connected keep being served. Shared by every connection of one server.
final class ConnectionLimiter: @unchecked Sendable {
    /// The most connections served at once.
    let maximum: Int
    private let lock = NSLock()
    private var open = 0
    /// The connections admitted and not ended, for ``closeAll()``.
    private var channels: [ObjectIdentifier: any Channel] = [:]

    /// A limiter of `maximum` connections.
    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Takes a place for `channel`; false (nothing taken) when all are taken.
    func enter(_ channel: any Channel) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard open < maximum else { return false }
        open += 1
        channels[ObjectIdentifier(channel)] = channel
        return true
    }

    /// Gives `channel`'s place back.
    func leave(_ channel: any Channel) {
        lock.lock()
        open -= 1
        channels[ObjectIdentifier(channel)] = nil
        lock.unlock()
    }

    /// Closes every connection still open (a shutdown past its deadline); returns how many.
    @discardableResult
    func closeAll() -> Int {
        lock.lock()
        let open = Array(channels.values)
        lock.unlock()
        for channel in open { channel.close(promise: nil) }
        return open.count
    }

    /// The channel handler to add to each connection's pipeline.
    func handler() -> any RemovableChannelHandler { Gate(limiter: self) }

    /// Takes a place when added to a connection, gives it back when the connection ends;
    /// closes the connection when there is none.
    private final class Gate: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny
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
    }
}
