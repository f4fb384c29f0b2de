import Foundation

/// A clock for the demo that advances one minute at each reading, so every run prints the
/// same history. Unchecked `Sendable`: its one mutable field is only touched under `lock`,
/// and the stores' `@Sendable` clock closures capture it.
final class DemoClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(start: Date) {
        current = start
    }

    func now() -> Date {
        lock.lock()
        defer { lock.unlock() }
        current += 60
        return current
    }
}
