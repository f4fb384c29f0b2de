import Foundation

/// The change sets this process has hashed whole and found to match their SHA-256: a later
/// byte range of one of them — its first one too — is read from the store alone, neither the
/// whole body read nor hashed again (a 1-byte range of a 59 MB change set cost 0.2 s of CPU
/// each time); a later full download is hashed as it streams instead. A repaired change set
/// has another SHA-256, so another key. Kept in memory, at most 100,000 keys (then forgotten
/// and checked again).
final class VerifiedBodies: @unchecked Sendable {
    private let lock = NSLock()
    private var keys: Set<String> = []

    /// The key of change set `seq` of a space, as stored with `sha256`.
    static func key(spaceID: Int64, seq: Int64, sha256: String) -> String {
        "\(spaceID)/\(seq)/\(sha256)"
    }

    /// Whether `key` was found whole and matching.
    func contains(_ key: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return keys.contains(key)
    }

    /// Forgets `key`: its bytes were found damaged since.
    func remove(_ key: String) {
        lock.lock()
        defer { lock.unlock() }
        keys.remove(key)
    }

    /// Remembers that `key` was found whole and matching.
    func insert(_ key: String) {
        lock.lock()
        defer { lock.unlock() }
        if keys.count >= 100_000 { keys.removeAll() }
        keys.insert(key)
    }
}
