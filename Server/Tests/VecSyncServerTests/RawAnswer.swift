import Foundation
import VecSyncServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A raw HTTP exchange, for tests of the protocol itself.
struct RawAnswer: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data

    var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
    }

    var errorCode: String? { json?["error"] as? String }
}

/// Sends one request with URLSession's async API.
func raw(_ method: String, _ url: URL, token: String? = nil, headers: [String: String] = [:], body: Data? = nil)
    async throws -> RawAnswer
{
    var request = URLRequest(url: url)
    request.httpMethod = method
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    request.httpBody = body
    let (data, response) = try await URLSession.shared.data(for: request)
    guard let http = response as? HTTPURLResponse else { throw ServerConfigurationError("no HTTP response") }
    var fields: [String: String] = [:]
    for (name, value) in http.allHeaderFields {
        if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
    }
    return RawAnswer(status: http.statusCode, headers: fields, body: data)
}

/// Pushes change set bytes to the space at `base` (`…/v1/spaces/NAME`) with their SHA-256
/// (or the one given, to claim another), as the client does.
func rawPush(_ base: URL, token: String, body: Data, sha256: String? = nil) async throws -> RawAnswer {
    try await raw(
        "POST", base.appendingPathComponent("changesets"), token: token,
        headers: [Wire.sha256Header: sha256 ?? sha256Hex(body), "Content-Type": Wire.changeSetMediaType], body: body)
}

/// Registers device `site` in the space at `base`, as the client does.
func rawRegister(_ base: URL, token: String, site: String, name: String) async throws -> RawAnswer {
    try await raw(
        "POST", base.appendingPathComponent("devices"), token: token, headers: ["Content-Type": "application/json"],
        body: try JSONEncoder().encode(DeviceRegistration(site: site, name: name, platform: "Linux")))
}
