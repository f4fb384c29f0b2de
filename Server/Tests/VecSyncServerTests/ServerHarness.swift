import Foundation
import Logging
import ServerTestSupport
import Testing
import VecSyncReplication
import VecSyncServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The two storage back ends every server test runs on.
enum BackEnd: String, CustomStringConvertible, Sendable {
    case sqlite, postgres

    var description: String { rawValue }

    /// The PostgreSQL database the tests use: `VECSYNC_TEST_POSTGRES_URL`
    /// (`make test-server` starts a throw-away server and sets it).
    static let postgresURL: String? = {
        let url = ProcessInfo.processInfo.environment["VECSYNC_TEST_POSTGRES_URL"] ?? ""
        return url.isEmpty ? nil : url
    }()

    /// Why the PostgreSQL suites are skipped, when they are.
    static let postgresSkipReason: Comment =
        "VECSYNC_TEST_POSTGRES_URL is not set, so the PostgreSQL back end is skipped; `make test-server` starts a throw-away PostgreSQL and sets it"
}

/// A store of one back end, with what to remove afterwards.
struct TestStore: Sendable {
    let store: any ServerStore
    let directory: URL?

    /// A fresh SQLite store in a temporary folder, or a connection to the test PostgreSQL
    /// database (shared: each test uses spaces of its own).
    static func make(_ backEnd: BackEnd) async throws -> TestStore {
        switch backEnd {
        case .sqlite:
            let directory = try temporaryDirectory("server")
            let store = try SQLiteServerStore(directory: directory)
            try await store.prepare()
            return TestStore(store: store, directory: directory)
        case .postgres:
            guard let url = BackEnd.postgresURL else {
                throw ServerConfigurationError("VECSYNC_TEST_POSTGRES_URL is not set")
            }
            let store = try PostgresServerStore(url: url)
            try await store.prepare()
            return TestStore(store: store, directory: nil)
        }
    }

    /// Another connection to the same data, as a restarted server would open.
    func reopen(_ backEnd: BackEnd) async throws -> any ServerStore {
        switch backEnd {
        case .sqlite:
            guard let directory else { throw ServerConfigurationError("no directory") }
            return try SQLiteServerStore(directory: directory)
        case .postgres:
            return try PostgresServerStore(url: BackEnd.postgresURL ?? "")
        }
    }

    func close() async {
        await store.close()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}

/// A space name no other test (or earlier run on the same PostgreSQL) uses.
func uniqueSpace(_ label: String) -> String {
    "\(label)-\(UUID().uuidString.prefix(8).lowercased())"
}

/// A space with `count` tokens.
func makeSpace(_ store: any ServerStore, _ label: String, tokens count: Int = 1) async throws -> (
    space: String, tokens: [String]
) {
    let space = uniqueSpace(label)
    _ = try await store.createSpace(named: space, at: 1)
    var tokens: [String] = []
    for index in 0..<count {
        let (token, record) = AccessToken.issue(label: "device \(index)", at: 1)
        try await store.addToken(record, toSpaceNamed: space)
        tokens.append(token)
    }
    return (space, tokens)
}

/// A sync server running in this process on an ephemeral loopback port.
final class RunningServer: Sendable {
    let url: URL
    let task: Task<Void, any Error>

    private init(url: URL, task: Task<Void, any Error>) {
        self.url = url
        self.task = task
    }

    /// Starts a server over `store` and waits (at most 30 s) until it listens.
    /// Logs at `critical` only unless given `logger`; serves `/metrics` with `metricsToken`.
    static func start(
        _ store: any ServerStore, limits: SyncServer.Limits = SyncServer.Limits(), logger: Logger? = nil,
        metricsToken: String? = nil
    ) async throws -> RunningServer {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var quiet = Logger(label: "vecsync-server-test")
        quiet.logLevel = .critical
        let server = SyncServer(store: store, limits: limits, logger: logger ?? quiet, metricsToken: metricsToken)
        let task = Task {
            try await server.run(host: "127.0.0.1", port: 0) { port in continuation.yield(port) }
        }
        let port = try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask { await ports.first { _ in true } }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let port, let url = URL(string: "http://127.0.0.1:\(port)") else {
            task.cancel()
            throw ServerConfigurationError("the test server did not start within 30 s")
        }
        return RunningServer(url: url, task: task)
    }

    /// Stops it (requests in flight finish first) and waits until it has.
    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// Runs blocking work (the transport's synchronous HTTP calls) on a thread of its own, so
/// the cooperative pool stays free to run the in-process server.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try work() })
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

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
