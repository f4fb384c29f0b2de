/// What adopting the schema changes of tracked tables did (see
/// ``Replica/adoptSchemaChanges()`` and ``Replica/alter(_:renamingColumns:_:)``).
public struct SchemaReport: Sendable, Hashable, CustomStringConvertible {
    /// Columns that now sync, per table: added with `ALTER TABLE … ADD COLUMN` (or by an
    /// `alter` call).
    public var addedColumns: [String: [String]] = [:]
    /// Columns dropped by an `alter` call, per table.
    public var droppedColumns: [String: [String]] = [:]
    /// Columns renamed by an `alter` call, per table: old name to new name.
    public var renamedColumns: [String: [String: String]] = [:]
    /// Tables dropped by an `alter` call: no longer tracked, their incoming changes ignored.
    public var droppedTables: [String] = []
    /// Tables renamed by an `alter` call: old name to new name. They sync under the new name;
    /// changes peers still make under the old one merge into it.
    public var renamedTables: [String: String] = [:]
    /// Tables whose capture triggers had vanished (the table was dropped and re-created, as
    /// SQLite's 12-step rebuild does) and were put back.
    public var restoredTables: [String] = []
    /// Tables re-created while capture was off (see ``restoredTables``) that kept rows from
    /// before, with what to do: an update made meanwhile — a copy step that changed values —
    /// was not recorded, so those values do not sync until ``Replica/restamp(_:columns:)``
    /// records them. Rebuilding inside ``Replica/alter(_:renamingColumns:_:)`` records them.
    /// Also listed by ``Replica/unverifiedTables()`` until restamped.
    public var unverifiedTables: [String: String] = [:]
    /// Tables that sync again after being suspended: every row of each is sent again, since
    /// change scans passed over their changes meanwhile.
    public var resumedTables: [String] = []
    /// Rows recorded as written here when capture was restored or a column was added: rows
    /// inserted or deleted while the triggers were missing, rows whose values an `alter`
    /// body changed, and values written to a new column before the engine knew it (a value
    /// other than the column's default).
    public var recordedRows: Int = 0
    /// Rows whose new column held its DEFAULT when the column was added, recorded as this
    /// site's writes of version 0: they travel once, so that replicas that added the column
    /// with different defaults converge (any real write wins; between defaults, the site).
    public var defaultedRows: Int = 0
    /// Values kept from peers for columns this replica did not have, applied now that it does.
    public var appliedKeptValues: Int = 0
    /// Tables whose schema the engine cannot follow on its own, with the reason: they stop
    /// syncing (the others go on) until fixed, usually with an `alter` call.
    public var suspendedTables: [String: String] = [:]

    /// Creates an empty report.
    public init() {}

    /// True when nothing changed (suspended tables aside).
    public var isEmpty: Bool {
        addedColumns.isEmpty && droppedColumns.isEmpty && renamedColumns.isEmpty && droppedTables.isEmpty
            && restoredTables.isEmpty && unverifiedTables.isEmpty && resumedTables.isEmpty && recordedRows == 0
            && defaultedRows == 0 && appliedKeptValues == 0
    }

    /// One line per kind of change.
    public var description: String {
        var lines: [String] = []
        for (table, columns) in addedColumns.sorted(by: { $0.key < $1.key }) {
            lines.append("\(table): columns \(columns.joined(separator: ", ")) added")
        }
        for (table, columns) in droppedColumns.sorted(by: { $0.key < $1.key }) {
            lines.append("\(table): columns \(columns.joined(separator: ", ")) dropped")
        }
        for (table, renames) in renamedColumns.sorted(by: { $0.key < $1.key }) {
            let pairs = renames.sorted { $0.key < $1.key }.map { "\($0.key) → \($0.value)" }
            lines.append("\(table): columns renamed \(pairs.joined(separator: ", "))")
        }
        for table in droppedTables { lines.append("\(table): dropped, no longer tracked") }
        for (old, new) in renamedTables.sorted(by: { $0.key < $1.key }) { lines.append("\(old): renamed \(new)") }
        for table in restoredTables { lines.append("\(table): capture restored after the table was re-created") }
        for (table, reason) in unverifiedTables.sorted(by: { $0.key < $1.key }) {
            lines.append("\(table): values may have changed without capture: \(reason)")
        }
        for table in resumedTables { lines.append("\(table): syncing again, every row sent again") }
        if recordedRows > 0 { lines.append("\(recordedRows) rows recorded as written here") }
        if defaultedRows > 0 {
            lines.append("\(defaultedRows) rows' new columns recorded at their default (version 0)")
        }
        if appliedKeptValues > 0 { lines.append("\(appliedKeptValues) kept values applied") }
        for (table, reason) in suspendedTables.sorted(by: { $0.key < $1.key }) {
            lines.append("\(table): not syncing: \(reason)")
        }
        return lines.isEmpty ? "no schema changes" : lines.joined(separator: "\n")
    }
}

extension SchemaReport {
    /// Adds what `other` reports.
    mutating func merge(_ other: SchemaReport) {
        addedColumns.merge(other.addedColumns) { $0 + $1 }
        droppedColumns.merge(other.droppedColumns) { $0 + $1 }
        renamedColumns.merge(other.renamedColumns) { $0.merging($1) { $1 } }
        droppedTables += other.droppedTables
        renamedTables.merge(other.renamedTables) { $1 }
        restoredTables += other.restoredTables
        unverifiedTables.merge(other.unverifiedTables) { $1 }
        recordedRows += other.recordedRows
        defaultedRows += other.defaultedRows
        appliedKeptValues += other.appliedKeptValues
        suspendedTables.merge(other.suspendedTables) { $1 }
    }
}
