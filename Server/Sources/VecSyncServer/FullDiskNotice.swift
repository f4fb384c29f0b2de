import Foundation
import Logging

/// Writes that may be skipped while the store's disk is full, so that a full disk stops
/// only what must be stored (pushes, new devices, snapshots: 507 `storage-full`), not what
/// devices need to go on reading: a pull still answers when its device's pull point cannot
/// be recorded, a request is still let through when its token's rate bucket cannot be
/// written (PostgreSQL keeps them in the database), a known device that registers again gets
/// its record as it is. Each skip is safe to lose: a pull point recorded lower only keeps
/// more history from compaction. Nothing is queued: the next write after space returns
/// records what it should, so the server recovers by itself. One warning a minute at most.
final class FullDiskNotice: @unchecked Sendable {
    private let lock = NSLock()
    private var lastWarning: ContinuousClock.Instant?
    private(set) var skipped = 0

    /// Runs `write`; when the store's disk is full, logs (at most once a minute) that
    /// `what` was skipped and returns nil instead of throwing.
    func skippingWhenFull<T>(_ what: String, logger: Logger, _ write: () async throws -> T) async throws -> T? {
        do {
            return try await write()
        } catch where StoreFailure.of(error) == .full {
            let now = ContinuousClock.now
            let warn = lock.withLock {
                skipped += 1
                guard lastWarning.map({ now - $0 >= .seconds(60) }) ?? true else { return false }
                lastWarning = now
                return true
            }
            if warn {
                logger.warning("the store's disk is full: \(what) skipped (pulls and reads go on): \(error)")
            }
            return nil
        }
    }
}
