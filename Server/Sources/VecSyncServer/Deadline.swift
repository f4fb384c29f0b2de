import Foundation

/// Waiting with a limit: `run(within:failing:_:)` answers with the work's result, or with
/// an error once the time is up — without waiting for work that ignores cancellation (a
/// PostgreSQL query waiting for a connection to a database that is down).
enum Deadline {
    /// The result of `work`, or `failure()` thrown after `limit`; the work is cancelled then,
    /// and left to end on its own.
    static func run<T: Sendable>(
        within limit: Duration, failing failure: @escaping @Sendable @autoclosure () -> any Error,
        _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let once = Once<T>()
        return try await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            let task = Task {
                do {
                    once.resume(with: .success(try await work()))
                } catch {
                    once.resume(with: .failure(error))
                }
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
                guard !Task.isCancelled else { return }
                task.cancel()
                once.resume(with: .failure(failure()))
            }
            once.onResume { timer.cancel() }
        }
    }

    /// A continuation resumed once, by whichever comes first.
    private final class Once<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<T, any Error>?
        private var result: Result<T, any Error>?
        private var cleanup: (@Sendable () -> Void)?

        func set(_ continuation: CheckedContinuation<T, any Error>) {
            lock.lock()
            if let result {
                lock.unlock()
                continuation.resume(with: result)
                return
            }
            self.continuation = continuation
            lock.unlock()
        }

        func onResume(_ action: @escaping @Sendable () -> Void) {
            lock.lock()
            let done = result != nil
            if !done { cleanup = action }
            lock.unlock()
            if done { action() }
        }

        func resume(with result: Result<T, any Error>) {
            lock.lock()
            guard self.result == nil else {
                lock.unlock()
                return
            }
            self.result = result
            let continuation = self.continuation
            self.continuation = nil
            let cleanup = self.cleanup
            self.cleanup = nil
            lock.unlock()
            continuation?.resume(with: result)
            cleanup?()
        }
    }
}
