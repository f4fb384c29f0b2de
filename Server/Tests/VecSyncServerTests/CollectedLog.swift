import Foundation
import Logging

/// Every line a logger made, kept for a test to read: level, message and metadata as
/// `key=value` pairs in key order.
final class CollectedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var kept: [String] = []

    /// The lines so far.
    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return kept
    }

    /// A logger, at `info`, whose lines go here.
    func logger() -> Logger {
        Logger(label: "vecsync-server-test") { _ in Handler(log: self) }
    }

    fileprivate func append(_ line: String) {
        lock.lock()
        kept.append(line)
        lock.unlock()
    }

    /// The handler writing into a ``CollectedLog``.
    struct Handler: LogHandler {
        let log: CollectedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let pairs = merged.keys.sorted().map { "\($0)=\(merged[$0].map { "\($0)" } ?? "")" }
            log.append(([event.level.rawValue, event.message.description] + pairs).joined(separator: " "))
        }
    }
}
