import Foundation
import Logging
import VecSyncServer

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
