import Crypto
import Foundation
import VecSyncCore
import VecSyncReplication

/// Who wrote what inside a change set, as the server checks it: no device can push rows in
/// another site's name, nor outrank a table's authority by inflating its counts.
///
/// A change set of origin O carries each changed row's state: the row's incarnation (causal
/// length, authority count, version and site of the insert or delete) and each changed
/// column's write (authority count, version, site, value). Some are O's own writes; the
/// others are writes O merged from other sites and relays with their original versions.
/// The server tells them apart by what it has seen:
///
/// - a write **by another site** is accepted only when the server already holds it, exactly
///   (same table, key, column, version, site, authority count and value), from a change set
///   that site pushed itself — its *attestation*. A forged write (the authority's site on a
///   row it never wrote, or a real write with another value or count) is refused, whole
///   change set, with 422 `forged-write`. So every site whose writes travel through a server
///   must push them to it itself; a relay is accepted once its author's own push is held.
/// - a write **by O itself** in a table whose declared authority is another site carries the
///   authority count of the write it followed, so its count can be no greater than the
///   greatest that authority has pushed for that column of that row (and a row's count no
///   greater than the greatest that authority pushed for any row: a new row starts from the
///   replica-wide floor of counts, which local tombstone compaction raises). The authority's
///   own writes may raise the counts; they are recorded.
///
/// A write's *declared authority* is the one the change set's table definition names:
/// replicas refuse a change set whose table definition disagrees with theirs, so a device
/// naming itself the authority gains nothing with them — and its counts are kept apart,
/// under its own name, here. Stores keep the attestations as digests (SHA-256 of a canonical
/// form, 16 bytes, hex), never the values.
public struct WriteAttestation: Sendable, Hashable {
    /// A write that must be attested, or bounded, with what a person reads when it is refused.
    public struct Claim: Sendable, Hashable {
        /// The digest of the write, or of the cell whose counts bound it.
        public var digest: String
        /// The authority count the write carries (bounded claims).
        public var count: Int64
        /// The write, for people: table, key, column, site, version.
        public var description: String
    }

    /// Digests of the origin's own writes: recorded as attested when the change set is stored.
    public var own: [String] = []
    /// Writes by other sites: each must already be attested.
    public var relayed: [Claim] = []
    /// The origin's own writes under another site's authority: each count at most the
    /// recorded count of its cell.
    public var bounded: [Claim] = []
    /// The declared authority's own writes: their counts are recorded, per cell (the largest).
    public var raised: [Claim] = []

    /// The writes of `changeSet`, sorted into the four kinds.
    public init(_ changeSet: ChangeSet) {
        let origin = changeSet.origin
        for record in changeSet.records {
            guard changeSet.tables.indices.contains(record.table) else { continue }
            let table = changeSet.tables[record.table]
            let authority = table.definition?.authority
            let key = Self.canonical(record.key)
            // The row's incarnation.
            file(
                Self.digest([
                    Data("row".utf8), Self.text(table.name), key, Self.integer(record.causalLength),
                    Self.integer(record.authorityCount),
                    Self.text(record.authorityCount > 0 ? authority?.rawValue ?? "" : ""),
                    Self.integer(record.rowVersion.rawValue), Self.text(record.rowSite.rawValue),
                ]),
                by: record.rowSite, count: record.authorityCount, origin: origin, authority: authority,
                description:
                    "\(table.name) key \(record.key) row state by '\(record.rowSite)' at \(record.rowVersion.rawValue)",
                cell: { Self.rowCell(authority) })
            // Each column carried.
            for (index, column) in record.presentColumns where table.columns.indices.contains(index) {
                let name = table.columns[index]
                file(
                    Self.digest([
                        Data("column".utf8), Self.text(table.name), key, Self.text(name),
                        Self.integer(column.authorityCount),
                        Self.text(column.authorityCount > 0 ? authority?.rawValue ?? "" : ""),
                        Self.integer(column.version.rawValue), Self.text(column.site.rawValue),
                        Self.canonical(column.value),
                    ]),
                    by: column.site, count: column.authorityCount, origin: origin, authority: authority,
                    description:
                        "\(table.name) key \(record.key) column \(name) by '\(column.site)' at \(column.version.rawValue)",
                    cell: {
                        Self.digest([
                            Data("cell".utf8), Self.text(table.name), key, Self.text(name),
                            Self.text(authority?.rawValue ?? ""),
                        ])
                    })
            }
        }
        own = Set(own).sorted()
    }

    /// Why the change set is refused, given which digests the store holds as attested and the
    /// recorded count of each cell (0 when none); nil when every write passes.
    public func refusal(isAttested: (String) throws -> Bool, recordedCount: (String) throws -> Int64) rethrows
        -> String?
    {
        for claim in relayed where try !isAttested(claim.digest) {
            return
                "\(claim.description): no change set of that site holds this write (with this value and authority count); rows of other sites are relayed only as their authors pushed them"
        }
        for claim in bounded {
            let recorded = try recordedCount(claim.digest)
            if claim.count > recorded {
                return
                    "\(claim.description): authority count \(claim.count), but the table's authority has pushed at most \(recorded) there"
            }
        }
        return nil
    }

    /// The largest count each cell of ``raised`` reaches.
    public var raisedCounts: [String: Int64] {
        raised.reduce(into: [:]) { counts, claim in counts[claim.digest] = max(counts[claim.digest] ?? 0, claim.count) }
    }

    /// The cell of row counts under one authority: a new row takes the replica-wide floor of
    /// counts, so a row's count is bounded by the largest that authority pushed for any row.
    static func rowCell(_ authority: SiteID?) -> String {
        digest([Data("rows".utf8), text(authority?.rawValue ?? "")])
    }

    /// Files one write (`digest`) by `site`: another site's is relayed, and must be attested;
    /// the origin's own is recorded, and a count it carries is bounded by `cell`'s recorded
    /// count, or raises it when the origin is the table's authority.
    private mutating func file(
        _ digest: String, by site: SiteID, count: Int64, origin: SiteID, authority: SiteID?, description: String,
        cell: () -> String
    ) {
        guard site == origin else {
            relayed.append(Claim(digest: digest, count: count, description: description))
            return
        }
        own.append(digest)
        guard count > 0 else { return }
        let claim = Claim(digest: cell(), count: count, description: description)
        if authority == origin {
            raised.append(claim)
        } else {
            bounded.append(claim)
        }
    }

    /// 16 bytes of the SHA-256 of the length-prefixed parts, in hex.
    static func digest(_ parts: [Data]) -> String {
        var hasher = SHA256()
        for part in parts {
            hasher.update(data: integer(Int64(part.count)))
            hasher.update(data: part)
        }
        return AccessToken.hex(hasher.finalize().prefix(16))
    }

    private static func integer(_ value: Int64) -> Data {
        withUnsafeBytes(of: value.littleEndian) { Data($0) }
    }

    private static func text(_ value: String) -> Data { Data(value.utf8) }

    /// A value as a type tag and its bytes: equal values, equal bytes, whatever the process.
    private static func canonical(_ value: SyncValue) -> Data {
        switch value {
        case .null: Data([0])
        case .integer(let number): Data([1]) + integer(number)
        case .real(let number): Data([2]) + withUnsafeBytes(of: number.bitPattern.littleEndian) { Data($0) }
        case .text(let string): Data([3]) + Data(string.utf8)
        case .blob(let bytes): Data([4]) + bytes
        case .identity(let site, let id): Data([5]) + integer(id) + Data(site.rawValue.utf8)
        }
    }
}
