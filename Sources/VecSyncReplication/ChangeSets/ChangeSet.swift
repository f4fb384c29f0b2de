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
/// ``SyncError/missingEarlierChanges(origin:since:received:)``). Merging is
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

    /// A table's definition as the origin knows it.
    public struct Table: Sendable, Hashable {
        /// The table's name.
        public var name: String
        /// Its primary key column.
        public var primaryKey: String
        /// The synced columns, in the order each record's ``Record/columns`` follows.
        public var columns: [String]
        /// ``TrackedTable/fingerprint`` on the origin.
        public var fingerprint: UInt64
        /// The rest of the origin's definition — key kind, declared types, authority — from
        /// which ``fingerprint`` is computed. Change sets of format 3 carry it, so a replica
        /// whose table has other columns (added, dropped or renamed since) can still merge the
        /// columns both know; with nil (formats 1 and 2) only an identical definition merges.
        public var definition: Definition?

        /// The parts of a table's definition that a fingerprint covers besides the names.
        public struct Definition: Sendable, Hashable {
            /// The storage of the key.
            public var keyKind: TrackedTable.KeyKind
            /// The declared type of each column, upper-cased, in column order.
            public var declaredTypes: [String]
            /// The table's authoritative site, if any.
            public var authority: SiteID?
            /// Whether each replica keeps its own integer ids (``TrackedTable/hasLocalKeys``):
            /// the records' keys are then identities (format 4).
            public var hasLocalKeys: Bool

            /// Creates a definition.
            public init(
                keyKind: TrackedTable.KeyKind, declaredTypes: [String], authority: SiteID?, hasLocalKeys: Bool = false
            ) {
                self.keyKind = keyKind
                self.declaredTypes = declaredTypes
                self.authority = authority
                self.hasLocalKeys = hasLocalKeys
            }
        }

        /// Creates a table definition.
        public init(
            name: String, primaryKey: String, columns: [String], fingerprint: UInt64, definition: Definition? = nil
        ) {
            self.name = name
            self.primaryKey = primaryKey
            self.columns = columns
            self.fingerprint = fingerprint
            self.definition = definition
        }

        /// The table as a tracked table, when ``definition`` is known.
        var trackedTable: TrackedTable? {
            guard let definition, definition.declaredTypes.count == columns.count else { return nil }
            return TrackedTable(
                name: name, primaryKey: primaryKey, keyKind: definition.keyKind, columns: columns,
                declaredTypes: definition.declaredTypes, authority: definition.authority,
                hasLocalKeys: definition.hasLocalKeys)
        }
    }

    /// One row's state.
    public struct Record: Sendable, Hashable {
        /// Index of the row's table in ``ChangeSet/tables``.
        public var table: Int
        /// The row's primary key: an identity (``SyncValue/identity(site:id:)``) in a table
        /// with local keys.
        public var key: SyncValue
        /// The causal length: odd while the row exists, even once deleted.
        public var causalLength: Int64
        /// How many inserts and deletes of the table's authoritative site this incarnation
        /// of the row follows (0 in tables without one). Incarnations are ordered by
        /// (authority count, causal length).
        public var authorityCount: Int64
        /// The clock of the last change to the causal length (insert, delete, re-insert).
        public var rowVersion: HybridLogicalClock
        /// The site that made that change.
        public var rowSite: SiteID
        /// For a live row, every synced column in table order, nil for a column that did not
        /// change after the change set's `since`; empty for a deleted row.
        public var columns: [Column?]

        /// Creates a record.
        public init(
            table: Int, key: SyncValue, causalLength: Int64, authorityCount: Int64 = 0,
            rowVersion: HybridLogicalClock, rowSite: SiteID, columns: [Column?]
        ) {
            self.table = table
            self.key = key
            self.causalLength = causalLength
            self.authorityCount = authorityCount
            self.rowVersion = rowVersion
            self.rowSite = rowSite
            self.columns = columns
        }

        /// True when the record says the row exists.
        public var isLive: Bool { causalLength % 2 == 1 }

        /// The columns the record carries, with their positions in the table.
        public var presentColumns: [(index: Int, column: Column)] {
            columns.enumerated().compactMap { index, column in column.map { (index, $0) } }
        }

        /// True when a live record carries every column.
        public var isComplete: Bool { !columns.contains { $0 == nil } }
    }

    /// One column's value with the version and site of the write that set it.
    public struct Column: Sendable, Hashable {
        /// How many writes of the table's authoritative site to this column the write
        /// follows (0 in tables without one). Writes are ordered by (authority count,
        /// version, site).
        public var authorityCount: Int64
        /// The clock value of the write.
        public var version: HybridLogicalClock
        /// The site that made the write.
        public var site: SiteID
        /// The value written.
        public var value: SyncValue

        /// Creates a column state.
        public init(authorityCount: Int64 = 0, version: HybridLogicalClock, site: SiteID, value: SyncValue) {
            self.authorityCount = authorityCount
            self.version = version
            self.site = site
            self.value = value
        }
    }
}
