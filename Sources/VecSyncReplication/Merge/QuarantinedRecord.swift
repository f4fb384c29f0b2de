import Foundation

/// A row of a change set that could not be merged here, kept aside with the reason while
/// the rest of its change set merged: an embedding no vector index of the table can hold
/// (wrong length, NaN or infinite elements), a row that a local constraint refuses (CHECK,
/// NOT NULL, UNIQUE, a trigger's RAISE), or a row whose parent row (a foreign key between
/// tracked tables) has not arrived yet.
///
/// A later merge tries a quarantined row again, folded with any later change of the same
/// row, when what it waits for changes here (its parent row arrives, an earlier change of
/// its own row merges) or, for a row that waits for nothing named, at every merge; so a fix
/// made at the origin, or a parent that arrives, releases it
/// (``MergeReport/releasedFromQuarantine``). ``Replica/quarantinedRecords()`` lists them.
public struct QuarantinedRecord: Sendable, Hashable, CustomStringConvertible {
    /// The site whose change set carried the row.
    public var origin: SiteID
    /// The tracked table.
    public var table: String
    /// The row's key.
    public var key: SyncValue
    /// Why it was not merged.
    public var reason: String

    /// Creates a description of a quarantined row.
    public init(origin: SiteID, table: String, key: SyncValue, reason: String) {
        self.origin = origin
        self.table = table
        self.key = key
        self.reason = reason
    }

    /// The row it is about: its table and key.
    var rowID: [SyncValue] { [.text(table), key] }

    /// `notes 'n1' from phone: <reason>`.
    public var description: String {
        let key: String =
            switch self.key {
            case .null: "NULL"
            case .integer(let value): "\(value)"
            case .real(let value): "\(value)"
            case .text(let value): "'\(value)'"
            case .blob(let value): "x'" + value.map { String(format: "%02x", $0) }.joined() + "'"
            case .identity(let site, let id): "\(id)@\(site.rawValue)"
            }
        return "\(table) \(key) from \(origin): \(reason)"
    }
}
