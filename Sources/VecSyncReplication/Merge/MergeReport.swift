/// What merging one change set did.
public struct MergeReport: Sendable, Hashable, CustomStringConvertible {
    /// The site that made the change set.
    public var origin: SiteID
    /// The rows the change set carried.
    public var records: Int = 0
    /// Rows whose state here changed (values, versions or existence).
    public var applied: Int = 0
    /// Rows that changed nothing here: older than what this replica has, or already merged.
    public var ignored: Int = 0
    /// Columns where the change set's write and the local one were concurrent, whichever
    /// won by the total order (authority count, version, site id).
    ///
    /// Two writes to a column are concurrent when each was made without its site having
    /// seen the other. The engine judges it from what it records: a column of a live row
    /// counts when the incoming value differs from the local one, the two were written by
    /// different sites, and the origin had not merged the local value when it made the
    /// change set — the change set's acknowledgement of this replica (the local sequence
    /// number through which the origin had merged our changes) is below the local sequence
    /// number at which the value was written or merged here (a value from before the clock
    /// tables kept that number always counts). So a write made on top of a value the origin
    /// had merged from us is never a conflict, and a pair of writes made before either site
    /// merged the other's is counted by each replica that merges the other's. When the
    /// origin made its write before merging ours but sent it after, the pair was resolved
    /// and counted on the origin, when it merged ours. With three sites or more, a write
    /// relayed through another replica is judged by the origin's acknowledgement of this
    /// replica only: a value the origin saw through a third site still counts.
    ///
    /// Equal values, rows created or deleted, and columns of a new incarnation are not
    /// conflicts.
    public var conflicts: Int = 0
    /// Rows created (or re-created) in the tracked tables.
    public var inserted: Int = 0
    /// Rows whose values changed.
    public var updated: Int = 0
    /// Rows deleted.
    public var deleted: Int = 0
    /// True when the change set had been merged before (its range is behind the cursor):
    /// nothing was done.
    public var alreadyMerged: Bool = false
    /// True when the peer cursor moved to the change set's `through`. False when an earlier
    /// change set from the same origin is still missing; the rows were merged all the same.
    public var cursorAdvanced: Bool = false
    /// Derived indexes brought up to date, with the number of rows refreshed in each.
    public var refreshedIndexes: [String: Int] = [:]
    /// Rows of the change set not merged here, each with its reason; the rest merged. They
    /// are tried again by later merges (see ``QuarantinedRecord``).
    public var quarantined: [QuarantinedRecord] = []
    /// Changes quarantined by earlier merges that merged (or turned out superseded) this time.
    public var releasedFromQuarantine: Int = 0
    /// The rows those changes belong to, one each (with the reason they had been kept for).
    public var released: [QuarantinedRecord] = []
    /// Rows of the change set now in their tables (or deleted, as it said): those it
    /// carried, less those quarantined, plus the rows released from quarantine. What a
    /// sync's progress counts as merged.
    public var rowsMerged: Int {
        alreadyMerged ? records : max(0, records - Set(quarantined.map(\.rowID)).count) + released.count
    }
    /// Rows deleted here, per table, because the row their foreign key refers to (in a
    /// tracked table) was deleted: a child follows its deleted parent, on every replica,
    /// and the delete syncs like a local one.
    public var orphansDeleted: [String: Int] = [:]

    /// The rows whose state here changed, in the change set's order: what the merge
    /// accepted (CRDT-SQLite's merge result). ``applied`` counts them.
    public var accepted: [AcceptedChange] = []
    /// Columns the change set carried that this replica's table does not have (yet), per
    /// table: a peer added them. Their values are kept and applied when the column is added
    /// here (``Replica/adoptSchemaChanges()``); nothing is lost meanwhile.
    public var keptColumns: [String: [String]] = [:]
    /// Columns (per table) and whole tables (an empty list) that the change set carried and
    /// this replica dropped with ``Replica/alter(_:renamingColumns:_:)``: their values were
    /// ignored.
    public var retiredIgnored: [String: [String]] = [:]

    /// One row a merge accepted.
    public struct AcceptedChange: Sendable, Hashable {
        /// The row's table.
        public var table: String
        /// The row's key.
        public var key: SyncValue
        /// False when the accepted change deleted the row (or kept it deleted).
        public var isLive: Bool
        /// The columns whose incoming value was accepted (every column of a new row), in
        /// table order; empty for a delete.
        public var columns: [String]

        /// Creates an accepted change.
        public init(table: String, key: SyncValue, isLive: Bool, columns: [String]) {
            self.table = table
            self.key = key
            self.isLive = isLive
            self.columns = columns
        }
    }

    /// Creates an empty report for a change set from `origin`.
    public init(origin: SiteID) {
        self.origin = origin
    }

    /// One line: counts of what happened.
    public var description: String {
        if alreadyMerged { return "\(origin): already merged" }
        return "\(origin): \(records) rows, \(applied) applied (\(inserted) inserted, \(updated) updated, "
            + "\(deleted) deleted), \(ignored) ignored, \(conflicts) conflicts"
            + (quarantined.isEmpty ? "" : ", \(quarantined.count) quarantined")
            + (releasedFromQuarantine == 0 ? "" : ", \(releasedFromQuarantine) released from quarantine")
            + (orphansDeleted.isEmpty ? "" : ", \(orphansDeleted.values.reduce(0, +)) orphans deleted")
            + keptColumns.sorted { $0.key < $1.key }.map {
                ", columns \($0.value.joined(separator: ", ")) of \($0.key) kept until they exist here"
            }.joined()
            + retiredIgnored.sorted { $0.key < $1.key }.map {
                $0.value.isEmpty
                    ? ", table \($0.key) ignored (dropped here)"
                    : ", columns \($0.value.joined(separator: ", ")) of \($0.key) ignored (dropped here)"
            }.joined()
            + (cursorAdvanced ? "" : ", cursor held back by a missing earlier change set")
    }
}
