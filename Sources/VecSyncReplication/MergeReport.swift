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
    /// Columns where this replica and the origin held different values written by different
    /// sites; the total order (version, then site id) chose the winner.
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

    /// Creates an empty report for a change set from `origin`.
    public init(origin: SiteID) {
        self.origin = origin
    }

    /// One line: counts of what happened.
    public var description: String {
        if alreadyMerged { return "\(origin): already merged" }
        return "\(origin): \(records) rows, \(applied) applied (\(inserted) inserted, \(updated) updated, "
            + "\(deleted) deleted), \(ignored) ignored, \(conflicts) conflicts"
            + (cursorAdvanced ? "" : ", cursor held back by a missing earlier change set")
    }
}
