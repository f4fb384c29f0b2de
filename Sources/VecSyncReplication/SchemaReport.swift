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
    /// Tables whose capture triggers had vanished (the table was dropped and re-created, as
    /// SQLite's 12-step rebuild does) and were put back.
    public var restoredTables: [String] = []
    /// Tables that sync again after being suspended: every row of each is sent again, since
    /// change scans passed over their changes meanwhile.
    public var resumedTables: [String] = []
    /// Rows recorded as written here when capture was restored or a column was added: rows
    /// inserted or deleted while the triggers were missing, and values written to a new
    /// column before the engine knew it (a value other than the column's default).
    public var recordedRows: Int = 0
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
            && restoredTables.isEmpty && resumedTables.isEmpty && recordedRows == 0 && appliedKeptValues == 0
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
        for table in restoredTables { lines.append("\(table): capture restored after the table was re-created") }
        for table in resumedTables { lines.append("\(table): syncing again, every row sent again") }
        if recordedRows > 0 { lines.append("\(recordedRows) rows recorded as written here") }
        if appliedKeptValues > 0 { lines.append("\(appliedKeptValues) kept values applied") }
        for (table, reason) in suspendedTables.sorted(by: { $0.key < $1.key }) {
            lines.append("\(table): not syncing: \(reason)")
        }
        return lines.isEmpty ? "no schema changes" : lines.joined(separator: "\n")
    }
}
