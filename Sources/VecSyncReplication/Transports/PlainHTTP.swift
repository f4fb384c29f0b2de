#if canImport(FoundationNetworking) && canImport(Glibc)
    import Foundation
    import FoundationNetworking
    import Glibc

    /// HTTP/1.1 over a plain socket, for the requests with a body sent to an `http://` server
    /// on Linux. FoundationNetworking's URLSession keeps a core busy while it waits for the
    /// answer to any request with a body (its libcurl socket source fires without end:
    /// 5 s of CPU in an 8 s wait, measured), which with several clients slows every sync.
    /// One request per connection (`Connection: close`), the body sent whole, the answer read
    /// to its `Content-Length`, through its chunks, or to the close; each read and write gives
    /// up after the request's timeout, and the whole exchange after twice it. An answer (the
    /// server's JSON to a push or a registration) is refused past ``maximumAnswerBytes``
    /// before it is buffered, whatever length it announces. `https://` still goes through
    /// URLSession.
    enum PlainHTTP {
        /// The largest answer read: the answers to requests with a body are small JSON
        /// documents; a longer one (or a length past it, up to `Int.max`) is a protocol error.
        static let maximumAnswerBytes = 16 << 20
        /// Sends `request` and reads the answer.
        static func exchange(_ request: URLRequest) throws(HTTPTransportError) -> HTTPAnswer {
            let urlText = request.url?.absoluteString ?? "?"
            guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
                let host = components.host
            else {
                throw .protocolViolation(url: urlText, reason: "not an http URL")
            }
            let port = components.port ?? 80
            var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            if let query = components.percentEncodedQuery { target += "?" + query }
            let body = request.httpBody ?? Data()
            var head = "\(request.httpMethod ?? "GET") \(target) HTTP/1.1\r\n"
            head += "Host: \(host.contains(":") ? "[\(host)]" : host)\(components.port.map { ":\($0)" } ?? "")\r\n"
            head += "Connection: close\r\nContent-Length: \(body.count)\r\n"
            for (name, value) in request.allHTTPHeaderFields ?? [:]
            where !["host", "connection", "content-length"].contains(name.lowercased()) {
                head += "\(name): \(value)\r\n"
            }
            head += "\r\n"
            let socket = try connect(host: host, port: port, timeout: request.timeoutInterval, url: urlText)
            defer { close(socket) }
            let idle = request.timeoutInterval.isFinite && request.timeoutInterval > 0 ? request.timeoutInterval : 60
            let deadline = Date().addingTimeInterval(2 * idle)
            try write(Array(head.utf8) + [UInt8](body), to: socket, url: urlText)
            return try readAnswer(from: socket, url: urlText, deadline: deadline)
        }

        private static func connect(host: String, port: Int, timeout: TimeInterval, url: String)
            throws(HTTPTransportError)
            -> Int32
        {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, String(port), &hints, &list)
            guard status == 0, let first = list else {
                throw .unreachable(url: url, reason: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
            }
            defer { freeaddrinfo(first) }
            var reason = "no address"
            var entry: UnsafeMutablePointer<addrinfo>? = first
            while let info = entry {
                entry = info.pointee.ai_next
                let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
                guard fd >= 0 else { continue }
                let seconds = max(1, timeout.isFinite ? timeout : 60)
                var interval = timeval(tv_sec: Int(seconds), tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
                if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
                reason = String(cString: strerror(errno))
                close(fd)
            }
            throw .unreachable(url: url, reason: "cannot connect to \(host):\(port): \(reason)")
        }

        private static func write(_ bytes: [UInt8], to socket: Int32, url: String) throws(HTTPTransportError) {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes {
                    send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard sent > 0 else {
                    throw .unreachable(
                        url: url, reason: "the connection broke while sending: \(String(cString: strerror(errno)))")
                }
                offset += sent
            }
        }

        /// Reads the status line, the headers and the body of one answer.
        private static func readAnswer(from socket: Int32, url: String, deadline: Date) throws(HTTPTransportError)
            -> HTTPAnswer
        {
            var buffer: [UInt8] = []
            var ended = false
            func more() throws(HTTPTransportError) {
                if Date() > deadline {
                    throw .unreachable(url: url, reason: "the answer did not come in time (a server sending it too slowly)")
                }
                if buffer.count > maximumAnswerBytes + (64 << 10) {
                    throw .protocolViolation(url: url, reason: "an answer longer than \(maximumAnswerBytes) bytes")
                }
                var chunk = [UInt8](repeating: 0, count: 64 << 10)
                let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count < 0 {
                    throw .unreachable(url: url, reason: "no answer: \(String(cString: strerror(errno)))")
                }
                if count == 0 { ended = true }
                buffer.append(contentsOf: chunk[..<count])
            }
            func find(_ pattern: [UInt8], from start: Int) -> Int? {
                guard buffer.count >= pattern.count + start else { return nil }
                for index in start...(buffer.count - pattern.count)
                where Array(buffer[index..<index + pattern.count]) == pattern {
                    return index
                }
                return nil
            }
            let crlf: [UInt8] = [13, 10]
            var headEnd = find([13, 10, 13, 10], from: 0)
            while headEnd == nil {
                if ended { throw .unreachable(url: url, reason: "the connection closed before the answer") }
                try more()
                headEnd = find([13, 10, 13, 10], from: max(0, buffer.count - (64 << 10) - 3))
            }
            guard let end = headEnd else { throw .unreachable(url: url, reason: "no answer") }
            let lines = String(decoding: buffer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let statusParts = lines[0].split(separator: " ", maxSplits: 2)
            guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
                throw .protocolViolation(url: url, reason: "not an HTTP answer: \(lines[0].prefix(80))")
            }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let answer = HTTPAnswer(status: status, headers: headers, body: Data())
            var position = end + 4
            var body: [UInt8] = []
            if answer.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
                while true {
                    var lineEnd = find(crlf, from: position)
                    while lineEnd == nil {
                        if ended { throw .unreachable(url: url, reason: "the answer's body was cut") }
                        try more()
                        lineEnd = find(crlf, from: position)
                    }
                    guard let sizeEnd = lineEnd else { break }
                    let sizeText =
                        String(decoding: buffer[position..<sizeEnd], as: UTF8.self)
                        .split(separator: ";").first.map(String.init) ?? ""
                    guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                        throw .protocolViolation(url: url, reason: "a bad chunk size '\(sizeText.prefix(20))'")
                    }
                    guard size <= maximumAnswerBytes - body.count else {
                        throw .protocolViolation(url: url, reason: "an answer longer than \(maximumAnswerBytes) bytes")
                    }
                    position = sizeEnd + 2
                    if size == 0 { break }
                    while buffer.count < position + size + 2 {
                        if ended { throw .unreachable(url: url, reason: "the answer's body was cut") }
                        try more()
                    }
                    body += buffer[position..<position + size]
                    position += size + 2
                }
            } else if let length = answer.header("Content-Length").flatMap({ Int($0) }), length >= 0 {
                guard length <= maximumAnswerBytes else {
                    throw .protocolViolation(url: url, reason: "an answer of \(length) bytes, over \(maximumAnswerBytes)")
                }
                while buffer.count < position + length {
                    if ended { throw .unreachable(url: url, reason: "the answer's body was cut") }
                    try more()
                }
                body = Array(buffer[position..<position + length])
            } else {
                while !ended { try more() }
                body = Array(buffer[position...])
            }
            return HTTPAnswer(status: status, headers: headers, body: Data(body))
        }
    }
#endif
