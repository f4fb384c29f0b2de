import Foundation

/// A batch of row changes from one replica: what `changes(since:)` returns, what a
/// transport carries, and what `merge(_:)` applies in one transaction.
///
/// A change set holds the current state of every row whose local sequence number lies in
/// `since < seq <= through` on its origin: for a live row each synced column that changed
/// there after `since` (all of them when the row was created or re-created after `since`)
/// with the version and site of its last write, for a deleted row its tombstone. So editing a
/// title sends the title, not the row's embedding. A receiver that merged an origin's change
/// sets through N has every change the origin made through N; one that skips ahead may meet
/// part of a row it lacks, and then the merge refuses the change set whole (see
/// ``VecSyncError/missingEarlierChanges(origin:since:received:)``). Merging is
/// idempotent, commutative and associative, so change sets may arrive late, twice or out
/// of order. Its binary form (``serialized()``) starts with a format version and ends with a
/// CRC-32C; ``jsonString(prettyPrinted:)`` renders it for people.
///
/// ```swift
/// var cursor: Int64 = 0
/// while true {
///     let batch = try replica.changes(since: cursor)
///     if batch.isEmpty { break }
///     try send(batch.serialized())
///     cursor = batch.through
/// }
/// ```
public struct ChangeSet: Sendable, Hashable {
    /// The newest binary format this build writes and reads. A change set is written in it
    /// only when it needs it (``writtenFormatVersion``): format 4 adds tables with local keys
    /// and their row identities (``SyncValue/identity(site:id:)``); other change sets are
    /// written in format 3, which earlier builds read.
    public static let formatVersion: UInt16 = 4
    /// The format of change sets that carry no table with local keys.
    static let formatWithoutIdentities: UInt16 = 3
    /// The oldest binary format this build still reads (its rows carry no authority counts).
    public static let oldestReadableFormatVersion: UInt16 = 1

    /// The replica that made the change set.
    public var origin: SiteID
    /// The origin's sequence number the change set starts after (exclusive).
    public var since: Int64
    /// The origin's sequence number the change set runs through (inclusive): the cursor a
    /// receiver records once it has merged this and everything before it.
    public var through: Int64
    /// How far the origin had merged each other site's changes when it made this change
    /// set; a site learns from it what its peers have acknowledged (for compaction).
    public var acknowledgements: [SiteID: Int64]
    /// The tables the records refer to, with their schema fingerprints.
    public var tables: [Table]
    /// The rows, in the origin's sequence order.
    public var records: [Record]

    /// Creates a change set.
    public init(
        origin: SiteID, since: Int64, through: Int64, acknowledgements: [SiteID: Int64] = [:],
        tables: [Table] = [], records: [Record] = []
    ) {
        self.origin = origin
        self.since = since
        self.through = through
        self.acknowledgements = acknowledgements
        self.tables = tables
        self.records = records
    }

    /// True when the change set carries no rows.
    public var isEmpty: Bool { records.isEmpty }

    /// The format ``serialized()`` and the JSON form write: ``formatVersion`` when a table
    /// has local keys or a value is an identity (a foreign key to such a table), format 3
    /// otherwise.
    public var writtenFormatVersion: UInt16 {
        func isIdentity(_ value: SyncValue) -> Bool {
            if case .identity = value { return true }
            return false
        }
        let needsIdentities =
            tables.contains { $0.definition?.hasLocalKeys == true }
            || records.contains { record in
                isIdentity(record.key) || record.columns.contains { $0.map { isIdentity($0.value) } ?? false }
            }
        return needsIdentities ? Self.formatVersion : Self.formatWithoutIdentities
    }

    /// A fingerprint of the schemas of all the tables the change set refers to.
    public var schemaFingerprint: UInt64 {
        var bytes: [UInt8] = []
        for table in tables {
            bytes.append(contentsOf: Array(table.name.utf8))
            bytes.append(0)
            withUnsafeBytes(of: table.fingerprint.littleEndian) { bytes.append(contentsOf: $0) }
        }
        return FNV1a.hash(bytes)
    }

    /// The payload bytes of all values carried: the yardstick for the encoding's overhead.
    public var payloadByteCount: Int {
        records.reduce(0) { sum, record in
            sum + record.key.payloadByteCount + record.columns.reduce(0) { $0 + ($1?.value.payloadByteCount ?? 0) }
        }
    }
}
