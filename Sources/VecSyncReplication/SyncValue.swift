import Foundation
import GRDB

/// One SQLite value as it travels in a change set: the storage class and its exact bytes.
///
/// Blobs — embeddings included — are carried as raw bytes and reals as their IEEE-754 bit
/// pattern, so a value arrives bit for bit as it left.
public enum SyncValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A 64-bit integer.
    case integer(Int64)
    /// A 64-bit float.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Raw bytes, such as an `F32_BLOB` embedding.
    case blob(Data)

    /// The value read from SQLite.
    init(_ dbValue: DatabaseValue) {
        switch dbValue.storage {
        case .null: self = .null
        case .int64(let value): self = .integer(value)
        case .double(let value): self = .real(value)
        case .string(let value): self = .text(value)
        case .blob(let value): self = .blob(value)
        }
    }

    /// The value to bind to a statement.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .blob(let value): value.databaseValue
        }
    }

    /// The number of payload bytes the value carries (8 for numbers, the UTF-8 or blob
    /// length otherwise): what "raw bytes" means when change set sizes are measured.
    public var payloadByteCount: Int {
        switch self {
        case .null: 0
        case .integer, .real: 8
        case .text(let value): value.utf8.count
        case .blob(let value): value.count
        }
    }

    /// Bitwise equality: reals by bit pattern, so `0.0` and `-0.0` differ and a NaN equals
    /// itself.
    func isIdentical(to other: SyncValue) -> Bool {
        switch (self, other) {
        case (.real(let a), .real(let b)): a.bitPattern == b.bitPattern
        default: self == other
        }
    }
}
