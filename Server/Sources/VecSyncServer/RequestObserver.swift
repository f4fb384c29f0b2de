import HTTPTypes
import Hummingbird
import Logging

/// The responder around the router that writes one access-log line per request and records
/// it in ``ServerMetrics``.
///
/// The line, at `info`, carries the method, the route template, the status, the body bytes
/// in (`Content-Length`) and out, the milliseconds taken to make the answer, the space of the
/// path and the client address — never a header's value, so never a token. Every 5xx also
/// gets one line at `error` saying why: here for an error no route rendered (a 500), in
/// ``ResponseCompression`` for the 5xx it renders.
///
///     info vecsync-server: bytes_in=0 bytes_out=412 client=127.0.0.1 method=GET ms=3 route=/v1/spaces/{space}/status space=family status=200 [VecSyncServer] request
struct RequestObserver<Base: HTTPResponder>: HTTPResponder where Base.Context == SyncRequestContext {
    let base: Base
    let metrics: ServerMetrics
    let logger: Logger
    let trustForwardedFor: Bool

    func respond(to request: Request, context: SyncRequestContext) async throws -> Response {
        let clock = ContinuousClock()
        let started = clock.now
        do {
            let response = try await base.respond(to: request, context: context)
            let bytesOut = response.body.contentLength ?? response.headers[.contentLength].flatMap(Int.init) ?? 0
            record(
                request, context, status: response.status.code, bytesOut: bytesOut,
                took: started.duration(to: clock.now))
            return response
        } catch {
            // What no route turned into an answer: Hummingbird answers it 500 (or the error's
            // own status).
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            record(
                request, context, status: status, bytesOut: 0, took: started.duration(to: clock.now),
                error: String(describing: error))
            throw error
        }
    }

    private func record(
        _ request: Request, _ context: SyncRequestContext, status: Int, bytesOut: Int, took: Duration,
        error: String? = nil
    ) {
        let route = context.endpointPath ?? "unmatched"
        let bytesIn = request.headers[.contentLength].flatMap(Int.init) ?? 0
        metrics.request(
            route: route, method: request.method.rawValue, status: status, duration: took, bytesIn: bytesIn,
            bytesOut: bytesOut)
        var metadata: Logger.Metadata = [
            "method": "\(request.method.rawValue)", "route": "\(route)", "status": "\(status)",
            "bytes_in": "\(bytesIn)", "bytes_out": "\(bytesOut)",
            "ms": "\(took.components.seconds * 1000 + took.components.attoseconds / 1_000_000_000_000_000)",
            "client": "\(ClientAddress.of(request, context, trustForwardedFor: trustForwardedFor))",
        ]
        if let space = Self.space(request.uri.path) { metadata["space"] = "\(space)" }
        logger.info("request", metadata: metadata)
        if let error { logger.error("\(status) for \(request.method.rawValue) \(route): \(error)") }
    }

    /// The space of a `/v1/spaces/{space}/…` path, at most 64 bytes of it.
    static func space(_ path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count > 3, parts[1] == "v1", parts[2] == "spaces" else { return nil }
        return String(parts[3].prefix(64))
    }
}
