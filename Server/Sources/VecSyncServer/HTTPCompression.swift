import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOHTTPTypesHTTP1

/// gzip where it helps: JSON responses are compressed when the request's `Accept-Encoding`
/// allows it, and request bodies sent with `Content-Encoding: gzip` (or `deflate`) are
/// decompressed before a route reads them. Change sets and snapshots are not compressed:
/// they are mostly float32 embeddings, which gzip shrinks by only about 7 % (measured in
/// `bench/server/README.md`), for CPU on both sides.
///
/// NIO's compression handlers speak HTTP/1 parts, the server's pipeline the shared HTTP
/// types: the handlers sit between a pair of converters.
enum HTTPCompression {
    /// The channel handlers to add after the server's HTTP/1 decoding; a request body is
    /// decompressed to at most `maximumBodyBytes`.
    static func channelHandlers(maximumBodyBytes: Int) -> [any RemovableChannelHandler] {
        [
            HTTPToHTTP1ServerCodec(),
            NIOHTTPRequestDecompressor(limit: .size(maximumBodyBytes)),
            HTTPResponseCompressor(responseCompressionPredicate: { head, _ in
                isJSON(head.headers["Content-Type"].first) ? .compressIfPossible : .doNotCompress
            }),
            HTTP1ToHTTPServerCodec(secure: false),
        ]
    }

    /// Whether a `Content-Type` is JSON: the only bodies worth compressing.
    static func isJSON(_ contentType: String?) -> Bool {
        contentType?.lowercased().hasPrefix("application/json") ?? false
    }
}
