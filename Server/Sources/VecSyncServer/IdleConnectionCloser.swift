import NIOCore

/// Closes a connection on which nothing was read or written for a while (NIO's
/// `IdleStateHandler` before it says when): an idle keep-alive connection, a client that
/// stopped sending its body half way, one that sent half a header. Without it such
/// connections are held for ever — hundreds of them lock every client out, and a stalled
/// upload keeps a graceful shutdown from ending. A slow download is not idle: the server
/// writes to it.
final class IdleConnectionCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// The two handlers to add to a connection's pipeline: the timer, then this.
    static func handlers(after timeout: Duration) -> [any RemovableChannelHandler] {
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        return [IdleStateHandler(allTimeout: .nanoseconds(max(1, nanoseconds))), IdleConnectionCloser()]
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
