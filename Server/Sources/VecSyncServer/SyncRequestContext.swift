import Hummingbird
import NIOCore

/// The context of one request: Hummingbird's core context, and the address of the peer that
/// sent it, on which the limits of unauthenticated requests are kept (``ClientAddress``).
public struct SyncRequestContext: RequestContext, RemoteAddressRequestContext {
    /// Hummingbird's part: logger, route parameters, endpoint path.
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer; nil when NIO does not know it.
    public let remoteAddress: SocketAddress?
    /// The connection, closed when a request's body is refused half read.
    let channel: any Channel

    /// The context of a request read from `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.channel = source.channel
    }
}
