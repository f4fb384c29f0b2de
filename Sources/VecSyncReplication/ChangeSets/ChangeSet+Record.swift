import Foundation

extension ChangeSet {
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
