import GRDB

/// One row of a clock table, with named fields: the state of one key of a tracked table.
///
/// ``ClockTable`` says where each field is stored; merges read a `ClockRow`, decide, and
/// write it back whole, and the change scan reads one per changed key.
struct ClockRow: Equatable {
    /// The version, writer, authority count and change number of one column.
    struct Column: Equatable {
        /// The hybrid-logical-clock version of the column's last write (nil: never written
        /// since the engine kept track).
        var version: Int64?
        /// The local ordinal (in `vecsync_sites`) of the site that wrote it; 0 is this site.
        var writer: Int64?
        /// The authority count of the write (0 in a table without an authority).
        var authority: Int64 = 0
        /// The local sequence number at which the column last changed here, by a local write
        /// or a merge (nil: before the engine kept track, so it travels in every change set).
        var changedAt: Int64?
    }

    /// The key of the row in the tracked table.
    var key: DatabaseValue
    /// The causal length: odd while the row exists, even once deleted.
    var causalLength: Int64 = 0
    /// The version of the last change of the causal length.
    var rowVersion: Int64 = 0
    /// The local ordinal of the site that made that change.
    var rowSite: Int64 = 0
    /// The local sequence number of the row's last change (what the change scan orders by).
    var sequence: Int64 = 0
    /// The row's authority count (0 in a table without an authority).
    var rowAuthority: Int64 = 0
    /// One entry per tracked column, in the table's column order.
    var columns: [Column]

    /// A key with no clock row yet: causal length 0, no column written.
    init(key: DatabaseValue, columnCount: Int) {
        self.key = key
        self.columns = Array(repeating: Column(), count: columnCount)
    }

    /// True when the key has a clock row (a clock row's causal length is at least 1).
    var exists: Bool { causalLength > 0 }

    /// True while the row exists (odd causal length).
    var isLive: Bool { causalLength % 2 == 1 }
}
