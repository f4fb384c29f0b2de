import Foundation

/// How a snapshot's heads (origin → how far its changes are folded in) are stored: a JSON
/// object, read back with every value checked.
enum SnapshotHeads {
    /// The JSON text of `heads`, keys sorted.
    static func encode(_ heads: [String: Int64]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(heads), as: UTF8.self)
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
}
