import Foundation

/// The JSON form of a change set: `Codable`, and round-trips exactly.
///
/// ```json
/// {
///   "formatVersion" : 3, "origin" : "mac", "since" : 0, "through" : 2, "checksum" : "5c1e07d2",
///   "schemaFingerprint" : "…", "acknowledgements" : { "phone" : 7 },
///   "tables" : [ { "name" : "photos", "primaryKey" : "id", "columns" : [ "title", "score" ],
///                  "fingerprint" : "…", "keyKind" : "text", "declaredTypes" : [ "TEXT", "REAL" ] } ],
///   "records" : [ { "table" : "photos", "key" : { "text" : "p1" }, "causalLength" : 1,
///                   "authorityCount" : 0, "deleted" : false, "version" : "111410952978432000",
///                   "site" : "mac", "columns" : { "score" : { "value" : { "real" : 1 },
///                   "version" : "111410952978432000", "site" : "mac", "authorityCount" : 0 } } } ]
/// }
/// ```
///
/// Versions (hybrid-logical-clock values, above 2^53) are decimal strings, so JavaScript
/// reads them exactly; integers and strings of digits are both accepted when decoding. A
/// value is JSON `null` or an object naming its storage class: `{"integer": 42}` (a
/// string of digits is accepted too), `{"real": 1}` — a REAL stays REAL even when whole,
/// and the shortest decimal that reads back to the same double is written (`"nan"`,
/// `"inf"`, `"-inf"` as strings) — `{"text": "…"}`, and `{"base64": "…", "bytes": 8}` for
/// blobs; from format 4, `{"identity": 7, "site": "mac"}` names a row of a table with local
/// keys (`"localKeys": true`) by the site that created it and its id there. A record names its
/// table and its columns. `checksum` is the CRC-32C of the
/// change set's binary form: decoding checks it as well as what the binary decoder checks
/// (keys, causal lengths, ranges, fingerprints), so a change set whose `since`, `through`,
/// origin or rows were edited is refused — a moved `through` would otherwise move the
/// receiver's cursor past changes it never gets. Errors are
/// ``VecSyncError/corruptChangeSet(reason:offset:)`` naming the problem.
extension ChangeSet: Codable {
    private enum CodingKeys: String, CodingKey {
        case formatVersion, origin, since, through, schemaFingerprint, acknowledgements, tables, records, checksum
    }

    /// Encodes the change set in its JSON form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Int(writtenFormatVersion), forKey: .formatVersion)
        try container.encode(origin.rawValue, forKey: .origin)
        try container.encode(since, forKey: .since)
        try container.encode(through, forKey: .through)
        try container.encode(FNV1a.hex(schemaFingerprint), forKey: .schemaFingerprint)
        try container.encode(Self.hex(contentChecksum), forKey: .checksum)
        try container.encode(
            Dictionary(uniqueKeysWithValues: acknowledgements.map { ($0.key.rawValue, $0.value) }),
            forKey: .acknowledgements)
        var tableList = container.nestedUnkeyedContainer(forKey: .tables)
        for table in tables {
            var entry = tableList.nestedContainer(keyedBy: JSONTableKeys.self)
            try entry.encode(table.name, forKey: .name)
            try entry.encode(table.primaryKey, forKey: .primaryKey)
            try entry.encode(table.columns, forKey: .columns)
            try entry.encode(FNV1a.hex(table.fingerprint), forKey: .fingerprint)
            if let definition = table.definition {
                try entry.encode(definition.keyKind, forKey: .keyKind)
                try entry.encode(definition.declaredTypes, forKey: .declaredTypes)
                try entry.encodeIfPresent(definition.authority?.rawValue, forKey: .authority)
                if definition.hasLocalKeys { try entry.encode(true, forKey: .localKeys) }
            }
        }
        var recordList = container.nestedUnkeyedContainer(forKey: .records)
        for record in records {
            var entry = recordList.nestedContainer(keyedBy: JSONRecordKeys.self)
            let table = tables.indices.contains(record.table) ? tables[record.table] : nil
            try entry.encode(table?.name ?? "#\(record.table)", forKey: .table)
            try entry.encode(record.key, forKey: .key)
            try entry.encode(record.causalLength, forKey: .causalLength)
            try entry.encode(record.authorityCount, forKey: .authorityCount)
            try entry.encode(!record.isLive, forKey: .deleted)
            try entry.encode(String(record.rowVersion.rawValue), forKey: .version)
            try entry.encode(record.rowSite.rawValue, forKey: .site)
            guard record.isLive else { continue }
            var columns = entry.nestedContainer(keyedBy: NameKey.self, forKey: .columns)
            for (index, column) in record.presentColumns {
                let name = table.flatMap { $0.columns.indices.contains(index) ? $0.columns[index] : nil } ?? "#\(index)"
                var state = columns.nestedContainer(keyedBy: JSONColumnKeys.self, forKey: NameKey(name))
                try state.encode(column.value, forKey: .value)
                try state.encode(String(column.version.rawValue), forKey: .version)
                try state.encode(column.site.rawValue, forKey: .site)
                try state.encode(column.authorityCount, forKey: .authorityCount)
            }
        }
    }

    /// Decodes a change set from its JSON form, checking it as ``init(serialized:)`` does.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .formatVersion)
        guard version >= Int(Self.oldestReadableFormatVersion), version <= Int(Self.formatVersion) else {
            throw VecSyncError.incompatibleFormat(found: UInt16(clamping: version), supported: Self.formatVersion)
        }
        let origin = SiteID(try container.decode(String.self, forKey: .origin))
        let since = try Self.integer(container, .since)
        let through = try Self.integer(container, .through)
        var acknowledgements: [SiteID: Int64] = [:]
        for (site, seq) in try container.decodeIfPresent([String: Int64].self, forKey: .acknowledgements) ?? [:] {
            guard seq >= 0 else { throw Self.corrupt("acknowledgement of \(site) is negative") }
            acknowledgements[SiteID(site)] = seq
        }
        var tables: [Table] = []
        var tableList = try container.nestedUnkeyedContainer(forKey: .tables)
        while !tableList.isAtEnd {
            let entry = try tableList.nestedContainer(keyedBy: JSONTableKeys.self)
            let name = try entry.decode(String.self, forKey: .name)
            let fingerprintText = try entry.decode(String.self, forKey: .fingerprint)
            guard let fingerprint = UInt64(fingerprintText, radix: 16) else {
                throw Self.corrupt("table \(name) has fingerprint '\(fingerprintText)', not 16 hexadecimal digits")
            }
            let columns = try entry.decode([String].self, forKey: .columns)
            var definition: Table.Definition?
            if let kind = try entry.decodeIfPresent(TrackedTable.KeyKind.self, forKey: .keyKind) {
                let types = try entry.decode([String].self, forKey: .declaredTypes)
                guard types.count == columns.count else {
                    throw Self.corrupt("table \(name) has \(columns.count) columns and \(types.count) declared types")
                }
                let localKeys = try entry.decodeIfPresent(Bool.self, forKey: .localKeys) ?? false
                guard !localKeys || version >= 4 else {
                    throw Self.corrupt("table \(name) has local keys, which format \(version) cannot carry")
                }
                definition = Table.Definition(
                    keyKind: kind, declaredTypes: types,
                    authority: try entry.decodeIfPresent(String.self, forKey: .authority).map { SiteID($0) },
                    hasLocalKeys: localKeys)
            }
            let table = Table(
                name: name, primaryKey: try entry.decode(String.self, forKey: .primaryKey), columns: columns,
                fingerprint: fingerprint, definition: definition)
            if let tracked = table.trackedTable, tracked.fingerprint != fingerprint {
                throw Self.corrupt("the fingerprint of table \(name) does not match its definition")
            }
            tables.append(table)
        }
        var records: [Record] = []
        var recordList = try container.nestedUnkeyedContainer(forKey: .records)
        while !recordList.isAtEnd {
            let entry = try recordList.nestedContainer(keyedBy: JSONRecordKeys.self)
            let tableName = try entry.decode(String.self, forKey: .table)
            guard let tableIndex = tables.firstIndex(where: { $0.name == tableName }) else {
                throw Self.corrupt("a record refers to table \(tableName), which the change set does not define")
            }
            let key = try entry.decode(SyncValue.self, forKey: .key)
            switch key {
            case .integer, .text, .blob, .identity: break
            default: throw Self.corrupt("a primary key of \(tableName) must be an integer, text or blob, not \(key)")
            }
            let causalLength = try Self.integer(entry, .causalLength)
            guard causalLength > 0 else { throw Self.corrupt("a record of \(tableName) has causal length 0") }
            let deleted = try entry.decodeIfPresent(Bool.self, forKey: .deleted)
            guard deleted == nil || deleted == (causalLength % 2 == 0) else {
                throw Self.corrupt(
                    "a record of \(tableName) says deleted: \(deleted ?? false) with causal length \(causalLength)")
            }
            var columns: [Column?] = []
            if causalLength % 2 == 1 {
                let table = tables[tableIndex]
                columns = Array(repeating: nil, count: table.columns.count)
                let states = try entry.nestedContainer(keyedBy: NameKey.self, forKey: .columns)
                for name in states.allKeys {
                    guard let position = table.columns.firstIndex(of: name.stringValue) else {
                        throw Self.corrupt(
                            "a record of \(tableName) carries column \(name.stringValue), which it does not define")
                    }
                    let state = try states.nestedContainer(keyedBy: JSONColumnKeys.self, forKey: name)
                    columns[position] = Column(
                        authorityCount: try Self.integer(state, .authorityCount),
                        version: HybridLogicalClock(rawValue: try Self.integer(state, .version)),
                        site: SiteID(try state.decode(String.self, forKey: .site)),
                        value: try state.decode(SyncValue.self, forKey: .value))
                }
            }
            records.append(
                Record(
                    table: tableIndex, key: key, causalLength: causalLength,
                    authorityCount: try Self.integer(entry, .authorityCount),
                    rowVersion: HybridLogicalClock(rawValue: try Self.integer(entry, .version)),
                    rowSite: SiteID(try entry.decode(String.self, forKey: .site)), columns: columns))
        }
        self.init(
            origin: origin, since: since, through: through, acknowledgements: acknowledgements, tables: tables,
            records: records)
        if let stated = try container.decodeIfPresent(String.self, forKey: .schemaFingerprint),
            stated != FNV1a.hex(schemaFingerprint)
        {
            throw Self.corrupt("schema fingerprint \(stated) does not match the table definitions")
        }
        guard since <= through else { throw Self.corrupt("range \(since)...\(through) is reversed") }
        // The checksum covers what the binary form carries: a range, origin or row edited
        // by hand (a `through` moved past changes the receiver never gets) is refused.
        guard let stated = try container.decodeIfPresent(String.self, forKey: .checksum) else {
            throw Self.corrupt("no checksum (the JSON form carries the CRC-32C of the change set's binary form)")
        }
        guard stated.lowercased() == Self.hex(contentChecksum) else {
            throw Self.corrupt(
                "checksum \(stated) does not match the change set's content (\(Self.hex(contentChecksum))): "
                    + "its range, origin or rows were changed after it was made")
        }
    }

    /// The CRC-32C of the binary form (its last four bytes): what the JSON form's `checksum`
    /// states, so both forms are checked alike.
    private var contentChecksum: UInt32 {
        serialized().suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// Eight lower-case hexadecimal digits.
    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The change set as JSON text (keys sorted): its `Codable` form, which
    /// ``init(json:)`` reads back exactly.
    ///
    /// ```swift
    /// print(try replica.changes(since: 0).jsonString())
    /// ```
    public func jsonString(prettyPrinted: Bool = true) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            prettyPrinted ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys]
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            return "{\"error\": \"change set could not be rendered as JSON: \(error)\"}"
        }
    }

    /// Decodes a change set from its JSON form (see ``jsonString(prettyPrinted:)``).
    ///
    /// Throws ``VecSyncError/corruptChangeSet(reason:offset:)`` for text that is not one, and
    /// ``VecSyncError/incompatibleFormat(found:supported:)`` for a format this build cannot read.
    public init(json: String) throws {
        do {
            self = try JSONDecoder().decode(ChangeSet.self, from: Data(json.utf8))
        } catch let error as VecSyncError {
            throw error
        } catch {
            throw Self.corrupt("not a change set in JSON: \(error)")
        }
    }

    /// A JSON object key that is a name.
    private struct NameKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { return nil }
    }

    /// A non-negative 64-bit integer written as a number or a string of digits.
    private static func integer<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> Int64 {
        let value: Int64
        if let number = try? container.decode(Int64.self, forKey: key) {
            value = number
        } else {
            let text = try container.decode(String.self, forKey: key)
            guard let number = Int64(text) else { throw corrupt("\(key.stringValue) '\(text)' is not an integer") }
            value = number
        }
        guard value >= 0 else { throw corrupt("\(key.stringValue) is negative (\(value))") }
        return value
    }

    private static func corrupt(_ reason: String) -> VecSyncError {
        VecSyncError.corruptChangeSet(reason: "JSON: \(reason)", offset: 0)
    }
}
