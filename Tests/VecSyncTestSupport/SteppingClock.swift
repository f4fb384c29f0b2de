import Foundation

/// A clock that advances one second at each reading, so rows are ordered and times exact.
public final class SteppingClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    /// A clock whose first reading is one second after `start`.
    public init(start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = start
    }

    /// The next time: one second after the previous reading.
    public func now() -> Date {
        lock.lock()
        defer { lock.unlock() }
        current += 1
        return current
    }
}
