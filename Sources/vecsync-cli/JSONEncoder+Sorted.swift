import Foundation

extension JSONEncoder {
    /// An encoder with sorted keys, for stable output.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
