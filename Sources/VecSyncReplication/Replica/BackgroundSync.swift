import Foundation

/// Syncs a replica through a transport on an interval, and backs off after failures: the
/// pause doubles after each failed sync, up to ``maximumBackoff``, and returns to
/// ``interval`` after a success. Every sync runs on a thread of its own, so the transport's
/// blocking calls never hold a task's thread.
///
/// ```swift
/// let background = BackgroundSync(replica: replica, transport: server, interval: .seconds(30))
/// for await event in background.events() {
///     switch event {
///     case .synced(let report): print(report)
///     case .failed(let error, let retryIn): print("\(error); next try in \(retryIn)")
///     }
/// }
/// ```
/// The sequence ends when the task iterating it is cancelled or after `maximumRounds`.
public struct BackgroundSync<Transport: SyncTransport>: Sendable {
    /// What one round did.
    public enum Event: Sendable {
        /// A sync finished; the next one starts after ``BackgroundSync/interval``.
        case synced(SyncReport)
        /// A sync failed with this message; the next one starts after `retryIn`.
        case failed(String, retryIn: Duration)
    }

    /// The replica to sync.
    public let replica: Replica
    /// What carries its change sets.
    public let transport: Transport
    /// The pause after a successful sync.
    public var interval: Duration
    /// The longest pause after failures.
    public var maximumBackoff: Duration

    /// Syncs `replica` through `transport` every `interval`, backing off up to
    /// `maximumBackoff` (ten minutes by default) while syncs fail.
    public init(replica: Replica, transport: Transport, interval: Duration, maximumBackoff: Duration = .seconds(600)) {
        self.replica = replica
        self.transport = transport
        self.interval = interval
        self.maximumBackoff = max(interval, maximumBackoff)
    }

    /// The pause after `failures` failed syncs in a row: `interval` doubled once per failure,
    /// at most `maximumBackoff`.
    public func pause(afterFailures failures: Int) -> Duration {
        var pause = interval
        for _ in 0..<min(max(0, failures), 62) {
            pause = pause * 2
            if pause >= maximumBackoff { return maximumBackoff }
        }
        return pause
    }

    /// Syncs now, then after each pause, yielding what each round did.
    public func events(maximumRounds: Int = .max) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let task = Task {
            var failures = 0
            for _ in 0..<maximumRounds {
                if Task.isCancelled { break }
                let pause: Duration
                do {
                    let report = try await syncOnOwnThread()
                    failures = 0
                    pause = interval
                    continuation.yield(.synced(report))
                } catch {
                    failures += 1
                    pause = self.pause(afterFailures: failures)
                    continuation.yield(.failed("\(error)", retryIn: pause))
                }
                do {
                    try await Task.sleep(for: pause)
                } catch {
                    break
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// One sync, on a new thread.
    private func syncOnOwnThread() async throws -> SyncReport {
        let replica = self.replica
        let transport = self.transport
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try replica.sync(through: transport) })
            }
            thread.start()
        }
    }
}
