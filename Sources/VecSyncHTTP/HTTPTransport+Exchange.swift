import Foundation
import VecSyncReplication

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(AsyncHTTPClient)
    import AsyncHTTPClient
    import NIOCore
    import NIOHTTP1

    /// One request on Linux, through AsyncHTTPClient (SwiftNIO): the calling thread waits on
    /// the request's future, not on a Swift concurrency task, so a caller on the cooperative
    /// pool cannot starve it; waiting costs no CPU (FoundationNetworking's URLSession keeps a
    /// core busy while it waits). The answer streams into a buffer that refuses to grow past
    /// `maximumBytes` (an announced `Content-Length` past it is refused at the head; an error
    /// answer, whose JSON says why, may take ``maximumJSONBytes``), and the whole exchange,
    /// body included, ends at the request's deadline.
    extension HTTPTransport {
        static func exchange(_ request: URLRequest, maximumBytes: Int) throws(HTTPTransportError) -> HTTPAnswer {
            let url = request.url?.absoluteString ?? "?"
            let seconds = request.timeoutInterval.isFinite && request.timeoutInterval > 0 ? request.timeoutInterval : 60
            let outgoing: HTTPClient.Request
            do {
                var headers = HTTPHeaders()
                for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
                outgoing = try HTTPClient.Request(
                    url: url, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"), headers: headers,
                    body: request.httpBody.map { .bytes($0) })
            } catch {
                throw .protocolViolation(url: url, reason: "not a request this client can send: \(error)")
            }
            let collector = CappedAnswer(
                maximumBytes: maximumBytes, maximumErrorBytes: max(maximumBytes, maximumJSONBytes))
            let task = HTTPClient.shared.execute(
                request: outgoing, delegate: collector,
                deadline: .now() + .milliseconds(Int64(seconds * 1000)))
            do {
                return try task.futureResult.wait()
            } catch let refusal as CappedAnswer.TooLong {
                throw tooLong(url, maximumBytes, announced: refusal.announced)
            } catch let failure as HTTPClientError
                where failure == .deadlineExceeded || failure == .readTimeout
            {
                throw .unreachable(url: url, reason: "the answer did not come in time (\(seconds) s)")
            } catch {
                throw .unreachable(url: url, reason: "\(error)")
            }
        }
    }

    /// Collects one answer, refusing it past `maximumBytes`.
    private final class CappedAnswer: HTTPClientResponseDelegate, @unchecked Sendable {
        typealias Response = HTTPAnswer

        struct TooLong: Error {
            var announced: Int?
        }

        /// The cap of a success's body, and of an error's (its JSON).
        private var maximumBytes: Int
        private let maximumErrorBytes: Int
        private var head: HTTPResponseHead?
        private var body = ByteBuffer()

        init(maximumBytes: Int, maximumErrorBytes: Int) {
            self.maximumBytes = maximumBytes
            self.maximumErrorBytes = maximumErrorBytes
        }

        func didReceiveHead(task: HTTPClient.Task<HTTPAnswer>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            self.head = head
            if head.status.code >= 300 { maximumBytes = maximumErrorBytes }
            if let length = head.headers.first(name: "Content-Length").flatMap({ Int($0) }), length > maximumBytes {
                return task.eventLoop.makeFailedFuture(TooLong(announced: length))
            }
            return task.eventLoop.makeSucceededFuture(())
        }

        func didReceiveBodyPart(task: HTTPClient.Task<HTTPAnswer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            guard buffer.readableBytes <= maximumBytes - body.readableBytes else {
                return task.eventLoop.makeFailedFuture(TooLong())
            }
            var part = buffer
            body.writeBuffer(&part)
            return task.eventLoop.makeSucceededFuture(())
        }

        func didFinishRequest(task: HTTPClient.Task<HTTPAnswer>) throws -> HTTPAnswer {
            var headers: [String: String] = [:]
            for (name, value) in head?.headers ?? [:] {
                headers[name] = headers[name].map { $0 + ", " + value } ?? value
            }
            return HTTPAnswer(
                status: Int(head?.status.code ?? 0), headers: headers,
                body: Data(body.readableBytesView))
        }
    }
#else
    /// One request on Apple platforms, through URLSession (one session for every transport:
    /// no cookies, no cache), waited for on the calling thread; the answer is refused past
    /// `maximumBytes` when its `Content-Length` announces more, and once it is read.
    extension HTTPTransport {
        static let session: URLSession = {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpCookieStorage = nil
            configuration.urlCache = nil
            return URLSession(configuration: configuration)
        }()

        static func exchange(_ request: URLRequest, maximumBytes: Int) throws(HTTPTransportError) -> HTTPAnswer {
            let box = AnswerBox()
            let task = session.dataTask(with: request) { data, response, error in
                box.finish(data: data, response: response, error: error)
            }
            task.resume()
            let seconds = request.timeoutInterval.isFinite && request.timeoutInterval > 0 ? request.timeoutInterval : 60
            let url = request.url?.absoluteString ?? "?"
            if !box.wait(seconds: seconds) {
                task.cancel()
                throw .unreachable(url: url, reason: "the answer did not come in time (\(seconds) s)")
            }
            let (data, response, error) = box.result
            if let error {
                throw .unreachable(url: url, reason: error.localizedDescription)
            }
            guard let http = response as? HTTPURLResponse else {
                throw .unreachable(url: url, reason: "no HTTP response")
            }
            // An error answer's JSON says why: it may be longer than the body expected.
            let cap = http.statusCode >= 300 ? max(maximumBytes, maximumJSONBytes) : maximumBytes
            if http.expectedContentLength > Int64(cap) {
                throw tooLong(url, cap, announced: Int(http.expectedContentLength))
            }
            guard (data?.count ?? 0) <= cap else { throw tooLong(url, cap) }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name] = value }
            }
            return HTTPAnswer(status: http.statusCode, headers: headers, body: data ?? Data())
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

        /// Whether the task finished within `seconds`.
        func wait(seconds: TimeInterval) -> Bool {
            done.wait(timeout: .now() + seconds) == .success
        }

        var result: (Data?, URLResponse?, (any Error)?) {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
    }
#endif
