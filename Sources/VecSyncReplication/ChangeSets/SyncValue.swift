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
    /// A row of a table with local integer keys (``TrackedTable/hasLocalKeys``), named across
    /// replicas: the site that created it and the id it has there. Change sets carry it for
    /// such rows' keys and for the values of foreign keys that refer to them; a merge
    /// translates it to the row's local id (``IdentityMap``). It is never written to a table.
    case identity(site: SiteID, id: Int64)

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

    /// The value to bind to a statement. An identity, which a merge translates to a local
    /// id before it writes anything, binds as the text `id@site` (the key of a quarantined
    /// row whose table does not merge here yet).
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .blob(let value): value.databaseValue
        case .identity(let site, let id): "\(id)@\(site.rawValue)".databaseValue
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
        case .identity(let site, _): 8 + site.rawValue.utf8.count
        }
    }

    /// A total order on values, the same on every replica: NULL, then numbers (by value;
    /// an integer before a real of the same value, reals of the same value by bit pattern),
    /// then text (by UTF-8 bytes), then blobs (by bytes), then identities (by site, then id). The merge uses it only to break a
    /// tie between two different values written with the same version by the same site (see
    /// ``Replica/wins(_:over:)``).
    func precedes(_ other: SyncValue) -> Bool {
        switch (self, other) {
        case (.integer(let a), .integer(let b)): return a < b
        case (.real(let a), .real(let b)):
            if a != b && !a.isNaN && !b.isNaN { return a < b }
            return a.bitPattern < b.bitPattern
        case (.integer(let a), .real(let b)):
            return b.isNaN || Double(a) < b || (Double(a) == b)
        case (.real(let a), .integer(let b)):
            return !a.isNaN && a < Double(b)
        case (.text(let a), .text(let b)): return a.utf8.lexicographicallyPrecedes(b.utf8)
        case (.blob(let a), .blob(let b)): return a.lexicographicallyPrecedes(b)
        case (.identity(let siteA, let a), .identity(let siteB, let b)):
            return siteA == siteB ? a < b : siteA.rawValue.utf8.lexicographicallyPrecedes(siteB.rawValue.utf8)
        default: return rank < other.rank
        }
    }

    /// The storage class's place in ``precedes(_:)``.
    private var rank: Int {
        switch self {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
        case .blob: 3
        case .identity: 4
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
