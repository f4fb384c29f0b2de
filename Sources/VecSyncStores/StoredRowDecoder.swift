import Foundation
import VecSyncCore

/// Decodes a store record from its row through the record's `Decodable` conformance, so
/// that a record lists its columns once (its properties) instead of again in an
/// `init(row:)`. Each coding key names its column in snake case (`createdAt` reads
/// `created_at`), and ``StoredColumns`` reads the values the way every store reads them: a
/// NULL is never a decoding error where the record has a value for it.
///
/// ```swift
/// public init(row: Row) throws { try self.init(from: StoredRowDecoder(row: row)) }
/// ```
struct StoredRowDecoder: Decoder {
    /// The row being decoded.
    let row: Row
    /// The text columns that name a row (its key, the row it belongs to): NULL there is a
    /// damaged row, an error, where other text columns read "".
    var keyColumns: Set<String> = ["id"]

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(StoredColumns<Key>(row: row, keyColumns: keyColumns))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw Self.notAColumn("a list")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw Self.notAColumn("a single value")
    }

    /// A row is read by columns only; a record whose `Decodable` asks for `shape` is not a
    /// store record.
    static func notAColumn(_ shape: String) -> DecodingError {
        DecodingError.dataCorrupted(
            DecodingError.Context(codingPath: [], debugDescription: "a store row cannot be decoded as \(shape)"))
    }
}
