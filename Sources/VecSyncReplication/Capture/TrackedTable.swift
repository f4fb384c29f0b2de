import Foundation
import GRDB
import VecSyncCore

/// A table whose rows replicate: its key, the columns that sync, and the fingerprint that
/// change sets carry so a replica with another definition refuses them.
///
/// Generated columns are derived data and do not sync; every other column does.
public struct TrackedTable: Sendable, Hashable {
    /// The storage of a primary key.
    ///
    /// A key column takes values of its kind only: the capture triggers refuse a local
    /// write whose key is NULL or of another storage class (a blob bound into a TEXT key),
    /// naming the table and the column, so such a row never reaches another replica.
    public enum KeyKind: String, Sendable, Hashable, Codable {
        /// An integer key (`INTEGER PRIMARY KEY` or any INTEGER-affinity key). Without an
        /// authority each replica keeps its own ids (``TrackedTable/hasLocalKeys``); with one,
        /// that site alone inserts rows and ids are the same everywhere (see
        /// ``Replica/track(_:authority:)``).
        case integer
        /// A text key (`TEXT PRIMARY KEY`, UUIDs as text).
        case text
        /// A blob key (`BLOB PRIMARY KEY`, 16-byte UUIDs), compared byte for byte.
        case blob

        /// The storage class SQLite's `typeof()` names for a key of this kind.
        var storageClass: String {
            switch self {
            case .integer: "integer"
            case .text: "text"
            case .blob: "blob"
            }
        }
    }

    /// The table's name, as SQLite stores it.
    public let name: String
    /// The primary key column.
    public let primaryKey: String
    /// Whether keys are integers or text.
    public let keyKind: KeyKind
    /// The columns that sync, in declaration order, without the primary key.
    public let columns: [String]
    /// The declared type of each column in ``columns``, upper-cased.
    public let declaredTypes: [String]
    /// The site whose writes win in this table, if one is authoritative.
    public let authority: SiteID?
    /// Whether each replica keeps its own integer ids for the table's rows: true for an
    /// integer key tracked without an authority. A row's identity across replicas is then
    /// the site that created it and the id it has there (see ``IdentityMap``); change sets
    /// carry identities, translated to local ids on merge.
    public let hasLocalKeys: Bool

    /// Creates a table description; ``introspect(_:table:authority:checkingKeyKind:)`` reads one from a database.
    init(
        name: String, primaryKey: String, keyKind: KeyKind, columns: [String], declaredTypes: [String],
        authority: SiteID?, hasLocalKeys: Bool = false
    ) {
        self.name = name
        self.primaryKey = primaryKey
        self.keyKind = keyKind
        self.columns = columns
        self.declaredTypes = declaredTypes
        self.authority = authority
        self.hasLocalKeys = hasLocalKeys && keyKind == .integer && authority == nil
    }

    /// A 64-bit FNV-1a hash of the table's name, key, columns, types and authority: two
    /// replicas can merge each other's changes to this table only when theirs are equal.
    public var fingerprint: UInt64 {
        var text = "vecsync-table-v1\u{1F}\(name)\u{1F}\(primaryKey):\(keyKind.rawValue)"
        for (column, type) in zip(columns, declaredTypes) {
            text += "\u{1F}\(column):\(type)"
        }
        text += "\u{1F}authority:\(authority?.rawValue ?? "")"
        // Tables without local keys keep the fingerprint earlier versions computed.
        if hasLocalKeys { text += "\u{1F}keys:local" }
        return FNV1a.hash(text.utf8)
    }

    /// ``fingerprint`` as 16 hexadecimal digits.
    public var fingerprintHex: String { FNV1a.hex(fingerprint) }

    /// The table as change sets describe it, with its whole definition.
    var changeSetTable: ChangeSet.Table {
        ChangeSet.Table(
            name: name, primaryKey: primaryKey, columns: columns, fingerprint: fingerprint,
            definition: ChangeSet.Table.Definition(
                keyKind: keyKind, declaredTypes: declaredTypes, authority: authority, hasLocalKeys: hasLocalKeys)
        )
    }

    /// The clock table that holds this table's versions.
    var clockTable: ClockTable { ClockTable(self) }

    /// The same table with another authority.
    func with(authority: SiteID?) -> TrackedTable {
        TrackedTable(
            name: name, primaryKey: primaryKey, keyKind: keyKind, columns: columns,
            declaredTypes: declaredTypes, authority: authority, hasLocalKeys: hasLocalKeys)
    }

    /// The same table with other columns (after a schema change).
    func with(columns: [String], declaredTypes: [String]) -> TrackedTable {
        TrackedTable(
            name: name, primaryKey: primaryKey, keyKind: keyKind, columns: columns,
            declaredTypes: declaredTypes, authority: authority, hasLocalKeys: hasLocalKeys)
    }

    /// The same table under another name (after a rename).
    func with(name: String) -> TrackedTable {
        TrackedTable(
            name: name, primaryKey: primaryKey, keyKind: keyKind, columns: columns,
            declaredTypes: declaredTypes, authority: authority, hasLocalKeys: hasLocalKeys)
    }

    /// Reads a table's definition from the database, or throws
    /// ``VecSyncError/untrackableTable(table:reason:)`` saying why it cannot be tracked.
    ///
    /// `authority` is the site that will be authoritative for the table. An integer key
    /// without one gives a table with local keys when `checkingKeyKind` is true (tracking it);
    /// false is for comparing a tracked table's live schema with the recorded one.
    static func introspect(
        _ db: Database, table requested: String, authority: SiteID?,
        checkingKeyKind: Bool = true
    ) throws -> TrackedTable {
        let master = try Row.fetchOne(
            db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
            arguments: [requested])
        guard let master else {
            let other =
                try Bool.fetchOne(
                    db,
                    sql:
                        "SELECT 1 FROM sqlite_master WHERE type IN ('view', 'index', 'trigger') AND name = ? COLLATE NOCASE",
                    arguments: [requested]) ?? false
            throw VecSyncError.untrackableTable(
                table: requested,
                reason: other ? "it is not a table (a view, index or trigger)" : "no such table")
        }
        let name: String = master["name"]
        let createSQL: String = master["sql"] ?? ""
        let upperSQL = createSQL.uppercased()
        if upperSQL.hasPrefix("CREATE VIRTUAL TABLE") {
            throw VecSyncError.untrackableTable(
                table: name,
                reason:
                    "it is a virtual table, which is derived data: track the table it is built from and register it as a derived index"
            )
        }
        let lower = name.lowercased()
        if (lower.hasPrefix(EngineNames.prefix) && lower != CounterSQL.contributions) || lower.hasPrefix("sqlite_") {
            throw VecSyncError.untrackableTable(table: name, reason: "tables named vecsync_* and sqlite_* are internal")
        }
        var keyColumns: [(position: Int, name: String, type: String)] = []
        var columns: [String] = []
        var types: [String] = []
        // The table's name is bound, never spliced into the PRAGMA.
        for row in try Row.fetchAll(
            db, sql: "SELECT name, type, pk, hidden FROM pragma_table_xinfo(?)", arguments: [name])
        {
            let columnName: String = row["name"]
            let type: String = (row["type"] as String?)?.uppercased() ?? ""
            let keyPosition: Int = row["pk"]
            let hidden: Int = row["hidden"]
            if hidden != 0 { continue }  // generated columns are computed on every replica
            if keyPosition > 0 {
                keyColumns.append((keyPosition, columnName, type))
            } else {
                columns.append(columnName)
                types.append(type)
            }
        }
        guard !keyColumns.isEmpty else {
            throw VecSyncError.untrackableTable(
                table: name,
                reason:
                    "it has no primary key, so its rows cannot be matched across replicas; add a TEXT or BLOB PRIMARY KEY holding a UUID"
            )
        }
        guard keyColumns.count == 1 else {
            let names = keyColumns.sorted { $0.position < $1.position }.map(\.name).joined(separator: ", ")
            throw VecSyncError.untrackableTable(
                table: name,
                reason: "its primary key (\(names)) has several columns; only single-column keys are supported")
        }
        let key = keyColumns[0]
        let kind = try keyKind(table: name, column: key.name, declaredType: key.type)
        // An integer key without an authority: each replica keeps its own ids. (When a tracked
        // table's live schema is compared with its record, `checkingKeyKind` is false and the
        // record says which mode the table syncs in.)
        return TrackedTable(
            name: name, primaryKey: key.name, keyKind: kind, columns: columns,
            declaredTypes: types, authority: authority, hasLocalKeys: checkingKeyKind)
    }

    /// The kind of a key column from its declared type, by SQLite's affinity rules.
    private static func keyKind(table: String, column: String, declaredType type: String) throws -> KeyKind {
        if type.contains("INT") { return .integer }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return .text }
        if type.contains("BLOB") { return .blob }
        throw VecSyncError.untrackableTable(
            table: table,
            reason:
                "its primary key \(column) has type '\(type)'; only TEXT, BLOB and INTEGER keys are "
                + "supported, because a key without a type or with REAL or NUMERIC affinity changes its storage class with "
                + "the value written, and rows could match on one replica and not on another")
    }
}

/// 64-bit FNV-1a, for schema fingerprints (not for security).
package enum FNV1a {
    /// The hash of `bytes`.
    package static func hash<S: Sequence>(_ bytes: S) -> UInt64 where S.Element == UInt8 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// `value` as 16 lowercase hexadecimal digits.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }
}
