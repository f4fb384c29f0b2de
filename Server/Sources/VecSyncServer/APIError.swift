import Foundation
import HTTPTypes
import Hummingbird
import VecSyncWire

/// An HTTP error answered as `{"error": code, "message": text}` (plus `head` where it helps
/// the client), with a status the client can act on.
struct APIError: HTTPResponseError {
    let status: HTTPResponse.Status
    /// A stable, machine-readable word: `gap`, `sha256-mismatch`, `malformed`, …
    let code: String
    /// A sentence for people.
    let message: String
    /// The origin's head, for `gap`.
    var head: Int64?
    /// Extra headers (`Retry-After`, `Content-Range`, `WWW-Authenticate`).
    var headers: HTTPFields = [:]

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try JSONResponse.make(
            ServerErrorBody(error: code, message: message, head: head), status: status)
        response.headers.append(contentsOf: headers)
        return response
    }

    /// 507: the store's disk is full, or a space's quota (HTTPTypes names no such status).
    static let insufficientStorage = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")

    static func unauthorized(_ message: String) -> APIError {
        APIError(
            status: .unauthorized, code: "unauthorized", message: message,
            headers: [.wwwAuthenticate: "Bearer realm=\"vecsync\""])
    }

    static func malformed(_ message: String) -> APIError {
        APIError(status: .badRequest, code: "malformed", message: message)
    }
}

/// Responses with a JSON body, keys sorted.
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
