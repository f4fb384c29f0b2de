import Foundation
import VecSyncCore

/// The columns of a row, as ``StoredRowDecoder`` hands them to a record's `Decodable`: a
/// key reads the column of its snake-case name. Values are read as the stores keep them
/// (see `Row+StoredValues`): text NULL reads as "" (but in a key column, an error), a `Date` from integer milliseconds
/// (1970 when NULL; an optional date reads nil), `[String]` from a JSON array of strings
/// (NULL or damaged JSON as []), a ``StoredName`` as its type says, any other column value
/// through GRDB, and a nested record (``ParameterSet``) from columns of the same row.
struct StoredColumns<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// The row being decoded.
    let row: Row
    /// Text columns read strictly: NULL throws (see ``StoredRowDecoder/keyColumns``).
    let keyColumns: Set<String>

    var codingPath: [any CodingKey] { [] }
    /// The keys of the row's columns are not listed: a synthesized `Decodable` asks for its
    /// keys by name.
    var allKeys: [Key] { [] }

    /// The column a key reads: `createdAt` reads `created_at`.
    static func column(_ key: Key) -> String {
        key.stringValue.reduce(into: "") { name, character in
            if character.isUppercase { name += "_" + character.lowercased() } else { name.append(character) }
        }
    }

    func contains(_ key: Key) -> Bool { row.hasColumn(Self.column(key)) }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let value: DatabaseValue = row[Self.column(key)] else {
            throw DecodingError.keyNotFound(
                key, DecodingError.Context(codingPath: [], debugDescription: "no column \(Self.column(key))"))
        }
        return value.isNull
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try read(type, key) }

    /// Every `decode` reads through here, the typed overloads included.
    private func read<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        let column = Self.column(key)
        let value: Any
        switch type {
        case is String.Type:
            value = keyColumns.contains(column) ? try row.decode(String.self, forColumn: column) : try row.text(column)
        case is Date.Type: value = try row.date(column)
        case is [String].Type: value = Photo.decodeList(try row.decode(String?.self, forColumn: column))
        case let name as any StoredName.Type: value = name.init(storedText: try row.decode(String?.self, forColumn: column))
        case let plain as any DatabaseValueConvertible.Type: value = try row.decode(plain, forColumn: column)
        default: value = try T(from: StoredRowDecoder(row: row, keyColumns: keyColumns))
        }
        guard let decoded = value as? T else {
            throw DecodingError.typeMismatch(
                type, DecodingError.Context(codingPath: [key], debugDescription: "column \(column)"))
        }
        return decoded
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(type, key) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try read(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try read(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try read(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try read(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try read(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try read(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try read(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try read(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try read(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try read(type, key) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(StoredColumns<NestedKey>(row: row, keyColumns: keyColumns))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw StoredRowDecoder.notAColumn("a list")
    }

    func superDecoder() throws -> any Decoder { StoredRowDecoder(row: row, keyColumns: keyColumns) }

    func superDecoder(forKey key: Key) throws -> any Decoder { StoredRowDecoder(row: row, keyColumns: keyColumns) }
}
