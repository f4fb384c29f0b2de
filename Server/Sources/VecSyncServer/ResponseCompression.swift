import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The router middleware that gzips JSON answers — errors included — for clients whose
/// `Accept-Encoding` admits gzip (see ``HTTPCompression``). Other bodies pass untouched.
/// It renders the routes' errors itself (so they are compressed too), a store that did not
/// answer in time (``TimedStore``) as 503 `store-unavailable`.
struct ResponseCompression<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch ServerStoreError.unavailable(let what) {
            response = try APIError(
                status: .serviceUnavailable, code: "store-unavailable",
                message: "the server's store did not answer (\(what)); retry later", headers: [.retryAfter: "5"]
            ).response(from: request, context: context)
        }
        guard HTTPCompression.isJSON(response.headers[.contentType]) else { return response }
        response.headers[.vary] = "Accept-Encoding"
        guard HTTPCompression.acceptsGzip(request.headers[.acceptEncoding]),
            response.headers[.contentEncoding] == nil
        else { return response }
        let collector = BodyCollector()
        try await response.body.write(collector)
        let compressed = try HTTPCompression.gzip(Data(collector.buffer.readableBytesView))
        response.headers[.contentEncoding] = "gzip"
        response.headers[.contentLength] = nil
        response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: compressed))
        return response
    }
}

/// A response body written into memory, for the compressor.
private struct BodyCollector: ResponseBodyWriter {
    /// Where the parts go: a reference, as writing consumes the writer.
    final class Storage {
        var buffer = ByteBuffer()
    }

    let storage = Storage()

    var buffer: ByteBuffer { storage.buffer }

    mutating func write(_ buffer: ByteBuffer) async throws {
        var part = buffer
        storage.buffer.writeBuffer(&part)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
