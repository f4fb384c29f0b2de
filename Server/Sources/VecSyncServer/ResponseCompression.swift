import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The router middleware that gzips JSON answers — errors included — for clients whose
/// `Accept-Encoding` admits gzip (see ``HTTPCompression``). Other bodies pass untouched.
/// It renders the routes' errors itself (so they are compressed too): a store that did not
/// answer or cannot be reached (``StoreFailure``) as 503 `store-unavailable`, a store whose
/// disk is full as 507 `storage-full`, anything else as 500 `internal` (never an empty
/// body); each such failure is counted in ``ServerMetrics`` and every 5xx it renders gets an
/// error line in the log.
struct ResponseCompression<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as APIError {
            if error.status.code >= 500 {
                context.logger.error("\(error.status.code) \(error.code): \(error.message)")
            }
            response = try error.response(from: request, context: context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch is CancellationError {
            // Work stopped because the server is stopping past its deadline (its connection
            // is closed): not a failure worth an error line.
            context.logger.info("request stopped: the server is shutting down")
            response = try APIError(
                status: .serviceUnavailable, code: "busy", message: "the server is shutting down; retry later",
                headers: [.retryAfter: "5"]
            ).response(from: request, context: context)
        } catch {
            let failure = StoreFailure.of(error)
            metrics.storeError(failure.rawValue)
            let answer: APIError
            switch failure {
            case .unavailable:
                answer = APIError(
                    status: .serviceUnavailable, code: "store-unavailable",
                    message: "the server's store did not answer (\(error)); retry later",
                    headers: [.retryAfter: "5"])
            case .full:
                answer = APIError(
                    status: APIError.insufficientStorage, code: "storage-full",
                    message: "the server's storage is full; nothing was stored; retry later",
                    headers: [.retryAfter: "60"])
            case .other:
                // Never an empty 500: the client gets the same JSON shape as every error,
                // the log gets what failed.
                answer = APIError(
                    status: .internalServerError, code: "internal",
                    message: "the server failed to answer; it is logged; retry later")
            }
            context.logger.error("\(answer.status.code) \(answer.code): \(error)")
            response = try answer.response(from: request, context: context)
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
