import Foundation

/// A vector encodes as its F32 blob (`Data`), not as a list of decimals: it is 4 bytes an
/// element on every coder, and bit-identical after a round trip. `JSONEncoder` writes the
/// bytes as base64.
extension Vector: Codable {
    /// Decodes the F32 bytes written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let data = try container.decode(Data.self)
        do {
            try self.init(blob: data)
        } catch {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(error)")
        }
    }

    /// Encodes the vector as its F32 blob.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(blob)
    }
}
