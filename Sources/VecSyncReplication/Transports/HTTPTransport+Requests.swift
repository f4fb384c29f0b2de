import Foundation
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

    /// One URL session for every transport: no cookies, no cache.
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }()

    /// Sends a request under `/v1/spaces/{space}/` and returns the answer when its status
    /// is in `accepted`. Network failures, 5xx and 429 are retried up to ``attempts``
    /// times with doubling pauses (a 429's `Retry-After`, up to 10 s, is honoured);
    /// every request the transport makes may be repeated safely.
    func send(
        _ method: String, _ path: String, query: [URLQueryItem] = [], headers: [String: String] = [:],
        body: Data? = nil, accepted: Set<Int> = [200]
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
                answer = try Self.exchange(request)
            } catch {
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

    /// One request, waited for on the calling thread.
    static func exchange(_ request: URLRequest) throws(HTTPTransportError) -> HTTPAnswer {
        #if canImport(FoundationNetworking) && canImport(Glibc)
            // URLSession on Linux spins while it waits for the answer to a request with a body.
            if request.httpBody != nil, request.url?.scheme?.lowercased() == "http" {
                return try PlainHTTP.exchange(request)
            }
        #endif
        let box = AnswerBox()
        let task = session.dataTask(with: request) { data, response, error in
            box.finish(data: data, response: response, error: error)
        }
        task.resume()
        box.wait()
        let url = request.url?.absoluteString ?? "?"
        let (data, response, error) = box.result
        if let error {
            throw .unreachable(url: url, reason: error.localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else {
            throw .unreachable(url: url, reason: "no HTTP response")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return HTTPAnswer(status: http.statusCode, headers: headers, body: data ?? Data())
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

/// Where a data task leaves its result for the thread waiting on it.
private final class AnswerBox: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var stored: (Data?, URLResponse?, (any Error)?) = (nil, nil, nil)

    func finish(data: Data?, response: URLResponse?, error: (any Error)?) {
        lock.lock()
        stored = (data, response, error)
        lock.unlock()
        done.signal()
    }

    func wait() {
        done.wait()
    }

    var result: (Data?, URLResponse?, (any Error)?) {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}
