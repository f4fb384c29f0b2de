import Foundation

/// The binary form of a change set.
///
/// ```
/// offset 0   "VSCS"                       magic
///        4   u16 format version           (4 when a table has local keys, else 3; 1 and 2 are still read)
///        6   u16 flags                    (0)
///        8   u32 body length
///       12   body
///   12 + n   u32 CRC-32C of bytes 0 ..< 12 + n
/// ```
/// The body holds, as LEB128 varints and length-prefixed UTF-8: the origin site, `since`,
/// `through`, the schema fingerprint (u64), the site table, the acknowledgements, the table
/// definitions (name, key, fingerprint, columns, and from format 3 the key kind, each
/// column's declared type and the authority, empty for none, and from format 4 a varint that
/// is 1 for a table with local keys), and the records. A record is its table index, its key, its causal length,
/// its authority count, its row version and site, and for a live row the number of columns
/// it carries (followed by their positions when it is not all of them) and each carried
/// column's authority count, version (as a zigzag delta from the row version, usually one
/// byte), site index and value. Format 1 had no authority counts (they read as 0) and
/// carried every column. A value is a type byte
/// (0 null, 1 integer, 2 real, 3 text, 4 blob, and from format 4: 5 identity) and its bytes:
/// blobs raw, reals as their IEEE-754 bits, an identity as its site's index in the site table
/// and the id (zigzag varint).
extension ChangeSet {
    /// The four bytes every change set starts with.
    static let magic: [UInt8] = Array("VSCS".utf8)

    /// Encodes the change set, in ``writtenFormatVersion``.
    public func serialized() -> Data {
        serialized(formatVersion: writtenFormatVersion)
    }

    /// Encodes the change set in `formatVersion`. Format 1 has no authority counts and
    /// carries every column of a live row, so tests use it only for change sets made from
    /// sequence 0 in tables without an authority.
    func serialized(formatVersion: UInt16) -> Data {
        let hasAuthority = formatVersion >= 2
        let hasDefinition = formatVersion >= 3
        let hasIdentities = formatVersion >= 4
        var sites: [SiteID] = [origin]
        var siteIndex: [SiteID: Int] = [origin: 0]
        func index(_ site: SiteID) -> Int {
            if let index = siteIndex[site] { return index }
            siteIndex[site] = sites.count
            sites.append(site)
            return sites.count - 1
        }
        for record in records {
            _ = index(record.rowSite)
            if case .identity(let site, _) = record.key { _ = index(site) }
            for case let column? in record.columns {
                _ = index(column.site)
                if case .identity(let site, _) = column.value { _ = index(site) }
            }
        }
        for site in acknowledgements.keys.sorted() { _ = index(site) }

        var body = ByteWriter()
        body.reserve(payloadByteCount + records.count * 24 + 256)
        body.string(origin.rawValue)
        body.varint(UInt64(max(0, since)))
        body.varint(UInt64(max(0, through)))
        body.uint64(schemaFingerprint)
        body.count(sites.count)
        for site in sites { body.string(site.rawValue) }
        let acks = acknowledgements.sorted { $0.key < $1.key }
        body.count(acks.count)
        for (site, seq) in acks {
            body.count(index(site))
            body.varint(UInt64(max(0, seq)))
        }
        body.count(tables.count)
        for table in tables {
            body.string(table.name)
            body.string(table.primaryKey)
            body.uint64(table.fingerprint)
            body.count(table.columns.count)
            for column in table.columns { body.string(column) }
            if hasDefinition {
                let definition = table.definition
                body.string(definition?.keyKind.rawValue ?? "")
                let types = definition?.declaredTypes ?? []
                body.count(types.count)
                for type in types { body.string(type) }
                body.string(definition?.authority?.rawValue ?? "")
                if hasIdentities { body.count(definition?.hasLocalKeys == true ? 1 : 0) }
            }
        }
        body.count(records.count)
        for record in records {
            body.count(record.table)
            Self.write(record.key, to: &body, site: index)
            body.varint(UInt64(max(0, record.causalLength)))
            if hasAuthority { body.varint(UInt64(max(0, record.authorityCount))) }
            body.varint(UInt64(max(0, record.rowVersion.rawValue)))
            body.count(index(record.rowSite))
            if record.isLive {
                let present = record.presentColumns
                if hasAuthority {
                    body.count(present.count)
                    if present.count < record.columns.count {
                        for (position, _) in present { body.count(position) }
                    }
                }
                for (_, column) in present {
                    if hasAuthority { body.varint(UInt64(max(0, column.authorityCount))) }
                    body.signed(column.version.rawValue &- record.rowVersion.rawValue)
                    body.count(index(column.site))
                    Self.write(column.value, to: &body, site: index)
                }
            }
        }

        var out = ByteWriter()
        out.reserve(body.bytes.count + 16)
        out.bytes.append(contentsOf: Self.magic)
        out.uint16(formatVersion)
        out.uint16(0)
        out.uint32(UInt32(truncatingIfNeeded: body.bytes.count))
        out.bytes.append(contentsOf: body.bytes)
        out.uint32(CRC32C.checksum(out.bytes))
        return Data(out.bytes)
    }

    /// Decodes a change set, checking its magic, format version, length and checksum first.
    ///
    /// Throws ``VecSyncError/incompatibleFormat(found:supported:)`` for another format version
    /// and ``VecSyncError/corruptChangeSet(reason:offset:)`` for damaged, truncated or
    /// padded bytes.
    public init(serialized data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.count >= 16 else {
            throw VecSyncError.corruptChangeSet(
                reason: "only \(bytes.count) bytes, shorter than any change set", offset: 0)
        }
        guard Array(bytes[0..<4]) == Self.magic else {
            throw VecSyncError.corruptChangeSet(reason: "not a VecSync change set (bad magic)", offset: 0)
        }
        var header = ByteReader(bytes, offset: 4)
        let version = try header.uint16()
        guard (Self.oldestReadableFormatVersion...Self.formatVersion).contains(version) else {
            throw VecSyncError.incompatibleFormat(found: version, supported: Self.formatVersion)
        }
        let hasAuthority = version >= 2
        let hasDefinition = version >= 3
        let hasIdentities = version >= 4
        _ = try header.uint16()
        let bodyLength = Int(try header.uint32())
        guard bytes.count == 12 + bodyLength + 4 else {
            throw VecSyncError.corruptChangeSet(
                reason: "length is \(bytes.count) bytes, the header says \(12 + bodyLength + 4) (truncated or padded)",
                offset: 8)
        }
        var trailer = ByteReader(bytes, offset: 12 + bodyLength)
        let stored = try trailer.uint32()
        let computed = bytes.withUnsafeBytes {
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(12 + bodyLength)]))
        }
        guard stored == computed else {
            throw VecSyncError.corruptChangeSet(
                reason:
                    "checksum mismatch (stored \(String(stored, radix: 16)), computed \(String(computed, radix: 16)))",
                offset: 12 + bodyLength)
        }

        var reader = ByteReader(bytes, offset: 12, end: 12 + bodyLength)
        let origin = SiteID(try reader.string("origin"))
        let since = try reader.nonNegative("since")
        let through = try reader.nonNegative("through")
        let fingerprint = try reader.uint64()
        let siteCount = try reader.count(what: "site")
        var sites: [SiteID] = []
        sites.reserveCapacity(siteCount)
        for _ in 0..<siteCount { sites.append(SiteID(try reader.string("site id"))) }
        guard sites.first == origin else { throw reader.corrupt("the site table does not start with the origin") }
        var acknowledgements: [SiteID: Int64] = [:]
        for _ in 0..<(try reader.count(minimumSize: 2, what: "acknowledgement")) {
            let site = sites[try reader.index(below: sites.count, what: "site")]
            acknowledgements[site] = try reader.nonNegative("acknowledged sequence")
        }
        var tables: [Table] = []
        for _ in 0..<(try reader.count(minimumSize: 11, what: "table")) {
            let name = try reader.string("table name")
            let key = try reader.string("primary key name")
            let tableFingerprint = try reader.uint64()
            var columns: [String] = []
            for _ in 0..<(try reader.count(what: "column")) { columns.append(try reader.string("column name")) }
            var definition: Table.Definition?
            if hasDefinition {
                let kindName = try reader.string("key kind")
                var types: [String] = []
                for _ in 0..<(try reader.count(what: "declared type")) {
                    types.append(try reader.string("declared type"))
                }
                let authority = try reader.string("authority")
                let localKeys = hasIdentities ? try reader.count(what: "flag") : 0
                guard localKeys <= 1 else { throw reader.corrupt("table \(name) has local-keys flag \(localKeys)") }
                if !kindName.isEmpty {
                    guard let kind = TrackedTable.KeyKind(rawValue: kindName) else {
                        throw reader.corrupt("table \(name) has an unknown key kind '\(kindName)'")
                    }
                    guard types.count == columns.count else {
                        throw reader.corrupt(
                            "table \(name) has \(columns.count) columns and \(types.count) declared types")
                    }
                    definition = Table.Definition(
                        keyKind: kind, declaredTypes: types, authority: authority.isEmpty ? nil : SiteID(authority),
                        hasLocalKeys: localKeys == 1)
                }
            }
            let table = Table(
                name: name, primaryKey: key, columns: columns, fingerprint: tableFingerprint, definition: definition)
            if let tracked = table.trackedTable, tracked.fingerprint != tableFingerprint {
                throw reader.corrupt("the fingerprint of table \(name) does not match its definition")
            }
            tables.append(table)
        }
        var records: [Record] = []
        let recordCount = try reader.count(minimumSize: 5, what: "record")
        records.reserveCapacity(recordCount)
        for _ in 0..<recordCount {
            let table = try reader.index(below: tables.count, what: "table")
            let key = try Self.readValue(&reader, sites: hasIdentities ? sites : nil)
            switch key {
            case .integer, .text, .blob, .identity: break
            default: throw reader.corrupt("a primary key must be an integer, text or blob, not \(key)")
            }
            let causalLength = try reader.nonNegative("causal length")
            guard causalLength > 0 else { throw reader.corrupt("causal length 0") }
            let authorityCount = hasAuthority ? try reader.nonNegative("authority count") : 0
            let rowVersion = HybridLogicalClock(rawValue: try reader.nonNegative("row version"))
            let rowSite = sites[try reader.index(below: sites.count, what: "site")]
            var columns: [Column?] = []
            if causalLength % 2 == 1 {
                let count = tables[table].columns.count
                var positions = Array(0..<count)
                if hasAuthority {
                    let carried = try reader.count(what: "column")
                    guard carried <= count else {
                        throw reader.corrupt("a record carries \(carried) of \(count) columns")
                    }
                    if carried < count {
                        positions = []
                        for _ in 0..<carried {
                            let position = try reader.index(below: count, what: "column")
                            guard position > (positions.last ?? -1) else {
                                throw reader.corrupt("column positions out of order")
                            }
                            positions.append(position)
                        }
                    }
                }
                columns = Array(repeating: nil, count: count)
                for position in positions {
                    let columnAuthority = hasAuthority ? try reader.nonNegative("authority count") : 0
                    let delta = try reader.signed()
                    let (version, overflow) = rowVersion.rawValue.addingReportingOverflow(delta)
                    guard !overflow, version >= 0 else { throw reader.corrupt("column version out of range") }
                    let site = sites[try reader.index(below: sites.count, what: "site")]
                    columns[position] = Column(
                        authorityCount: columnAuthority, version: HybridLogicalClock(rawValue: version),
                        site: site, value: try Self.readValue(&reader, sites: hasIdentities ? sites : nil))
                }
            }
            records.append(
                Record(
                    table: table, key: key, causalLength: causalLength, authorityCount: authorityCount,
                    rowVersion: rowVersion, rowSite: rowSite, columns: columns))
        }
        guard reader.remaining == 0 else {
            throw reader.corrupt("\(reader.remaining) unexpected bytes after the records")
        }
        self.init(
            origin: origin, since: since, through: through, acknowledgements: acknowledgements,
            tables: tables, records: records)
        guard schemaFingerprint == fingerprint else {
            throw VecSyncError.corruptChangeSet(
                reason: "schema fingerprint does not match the table definitions", offset: 12)
        }
        guard since <= through else {
            throw VecSyncError.corruptChangeSet(reason: "range \(since)...\(through) is reversed", offset: 12)
        }
    }

    private static func write(_ value: SyncValue, to writer: inout ByteWriter, site index: (SiteID) -> Int) {
        switch value {
        case .null:
            writer.bytes.append(0)
        case .integer(let integer):
            writer.bytes.append(1)
            writer.signed(integer)
        case .real(let real):
            writer.bytes.append(2)
            writer.uint64(real.bitPattern)
        case .text(let text):
            writer.bytes.append(3)
            writer.string(text)
        case .blob(let blob):
            writer.bytes.append(4)
            writer.data(blob)
        case .identity(let site, let id):
            writer.bytes.append(5)
            writer.count(index(site))
            writer.signed(id)
        }
    }

    /// Reads a value; `sites` is the site table when identities may occur (format 4).
    private static func readValue(_ reader: inout ByteReader, sites: [SiteID]?) throws -> SyncValue {
        switch try reader.byte() {
        case 0: return .null
        case 1: return .integer(try reader.signed())
        case 2: return .real(Double(bitPattern: try reader.uint64()))
        case 3: return .text(try reader.string("text value"))
        case 4: return .blob(Data(try reader.data()))
        case 5 where sites != nil:
            let sites = sites ?? []
            let site = sites[try reader.index(below: sites.count, what: "site")]
            return .identity(site: site, id: try reader.signed())
        case let tag: throw reader.corrupt("unknown value type \(tag)")
        }
    }
}
