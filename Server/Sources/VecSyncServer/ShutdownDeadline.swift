import Logging
import ServiceLifecycle

/// Bounds a graceful shutdown: when it begins, a timer starts; when it runs out, every
/// connection still open is closed (``ConnectionLimiter/closeAll()``), so the application's
/// own graceful stop, which waits for its connections, ends. Without it, one upload that
/// trickles a byte every few seconds keeps the process alive after SIGTERM until the
/// supervisor kills it.
struct ShutdownDeadline: Service {
    let after: Duration
    let connections: ConnectionLimiter
    let logger: Logger

    init(after: Duration, connections: ConnectionLimiter, logger: Logger) {
        self.after = after
        self.connections = connections
        self.logger = logger
    }

    func run() async throws {
        // Returns when the group shuts down (or is cancelled); then the timer runs on its
        // own, past this service's end, while the application finishes its requests.
        try? await gracefulShutdown()
        let (after, connections, logger) = (after, connections, logger)
        Task {
            try? await Task.sleep(for: after)
            let closed = connections.closeAll()
            if closed > 0 {
                logger.warning("shutdown deadline of \(after) passed: closed \(closed) connections still open")
            }
        }
    }
}
