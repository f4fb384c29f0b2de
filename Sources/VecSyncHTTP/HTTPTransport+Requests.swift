import Foundation
import VecSyncReplication
import VecSyncWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A finished HTTP exchange.
struct HTTPAnswer: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data

    /// A header's value, by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

extension HTTPTransport {
    /// The header carrying a body's hex SHA-256, both ways.
    static let sha256Header = Wire.sha256Header

    /// The largest answer a request takes unless its caller expects more (the JSON of a
    /// listing page, a status, a push's answer): a longer one is refused before it is
    /// buffered, whatever length it announces.
    static let maximumJSONBytes = 16 << 20

    /// Sends a request under `/v1/spaces/{space}/` and returns the answer when its status
    /// is in `accepted`. Network failures, 5xx and 429 are retried up to ``attempts``
    /// times with doubling pauses (a 429's or 503's `Retry-After`, up to 10 s, is
    /// honoured); every request the transport makes may be repeated safely. Each try has
    /// ``timeout`` seconds in all, and an answer past `maximumBytes` is a protocol error.
    func send(
        _ method: String, _ path: String, query: [URLQueryItem] = [], headers: [String: String] = [:],
        body: Data? = nil, accepted: Set<Int> = [200], maximumBytes: Int = HTTPTransport.maximumJSONBytes
    ) throws -> HTTPAnswer {
        guard var components = URLComponents(string: destination + "/" + path) else {
            throw HTTPTransportError.protocolViolation(url: destination, reason: "not a valid URL with '\(path)'")
        }
        if !query.isEmpty { components.queryItems = query }
        guard let url = components.url else {
            throw HTTPTransportError.protocolViolation(url: destination, reason: "not a valid URL with '\(path)'")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body

        var pause = 0.2
        var lastError: HTTPTransportError?
        for attempt in 1...max(1, attempts) {
            if attempt > 1 { Thread.sleep(forTimeInterval: pause) }
            pause = min(pause * 2, 10)
            let answer: HTTPAnswer
            do {
                answer = try Self.exchange(request, maximumBytes: maximumBytes)
            } catch {
                if case .protocolViolation = error { throw error }   // the same answer again
                lastError = error
                continue
            }
            if accepted.contains(answer.status) { return answer }
            let failure = Self.refusal(url: url, answer)
            if answer.status == 429 || answer.status >= 500 {
                lastError = failure
                if let retry = answer.header("Retry-After").flatMap(Double.init) { pause = min(max(retry, pause), 10) }
                continue
            }
            throw failure
        }
        throw lastError ?? HTTPTransportError.unreachable(url: url.absoluteString, reason: "no attempt made")
    }

    /// The error an unaccepted answer stands for.
    static func refusal(url: URL, _ answer: HTTPAnswer) -> HTTPTransportError {
        if let body = try? JSONDecoder().decode(ServerErrorBody.self, from: answer.body) {
            return .refused(url: url.absoluteString, status: answer.status, code: body.error, message: body.message)
        }
        let text = String(decoding: answer.body.prefix(200), as: UTF8.self)
        return .refused(url: url.absoluteString, status: answer.status, code: "http-\(answer.status)", message: text)
    }

    /// The answer past `maximumBytes`, as the error it is.
    static func tooLong(_ url: String, _ maximumBytes: Int, announced: Int? = nil) -> HTTPTransportError {
        .protocolViolation(
            url: url,
            reason: announced.map { "an answer of \($0) bytes, over the \(maximumBytes) expected" }
                ?? "an answer longer than the \(maximumBytes) bytes expected")
    }

    /// A JSON answer decoded.
    func decode<Value: Decodable>(_ type: Value.Type, _ answer: HTTPAnswer) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: answer.body)
        } catch {
            throw HTTPTransportError.protocolViolation(
                url: destination, reason: "cannot read the JSON answer: \(error)")
        }
    }
}
