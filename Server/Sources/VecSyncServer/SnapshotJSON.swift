import Foundation
import VecSyncWire

/// How a snapshot's heads (origin → how far its changes are folded in) and parts are stored:
/// JSON text, read back with every value checked.
enum SnapshotJSON {
    /// The JSON text of `heads`, keys sorted.
    static func encode(_ heads: [String: Int64]) throws -> String {
        try text(of: heads)
    }

    /// The heads of stored JSON text; a value that is no object of non-negative integers
    /// is reported as corrupt.
    static func decode(_ text: String) throws -> [String: Int64] {
        guard let heads = try? JSONDecoder().decode([String: Int64].self, from: Data(text.utf8)),
            heads.values.allSatisfy({ $0 >= 0 }), heads.keys.allSatisfy({ !$0.isEmpty })
        else {
            throw ServerStoreError.corrupt(
                "a snapshot's heads are not an object of non-negative integers: \(text.prefix(200))")
        }
        return heads
    }

    /// The JSON text of a snapshot's parts: an array of `{rows, size, sha256}`.
    static func encodeParts(_ parts: [ServerSnapshotPart]) throws -> String {
        try text(of: parts)
    }

    /// `value` as JSON text, keys sorted.
    private static func text(of value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The parts of stored JSON text; anything but a non-empty array of parts with
    /// non-negative counts and a 64-digit SHA-256 is reported as corrupt.
    static func decodeParts(_ text: String) throws -> [ServerSnapshotPart] {
        guard let parts = try? JSONDecoder().decode([ServerSnapshotPart].self, from: Data(text.utf8)),
            !parts.isEmpty,
            parts.allSatisfy({ $0.rows >= 0 && $0.size >= 0 && $0.sha256.utf8.count == 64 })
        else {
            throw ServerStoreError.corrupt("a snapshot's parts are not a list of parts: \(text.prefix(200))")
        }
        return parts
    }
}
