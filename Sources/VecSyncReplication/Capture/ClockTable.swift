import GRDB
import VecSyncCore

/// The clock table of a tracked table: its name, its column layout, and the SQL that
/// creates it and reads and writes its rows as ``ClockRow`` values.
///
/// The one owner of the layout: capture (``TriggerSQL``), the change scan and merge name
/// columns through it, and only this type knows where a field sits in a row it reads.
///
/// The table `vecsync_clock_<table>` has one row per key: `pk`, then the row state
/// `cl, cl_version, cl_site, seq`, then for each tracked column `i` its version and writer
/// `v<i>, s<i>`, then the row's authority count `ra`, the columns' authority counts `a<i>`,
/// and the columns' change numbers `q<i>` (this order is what databases already hold: the
/// later columns were added by `ALTER TABLE`; a tracked column added after tracking has its
/// four fields at the end). Every statement names the columns it reads, so the physical
/// order never matters. Authority counts of 0 are stored as NULL.
struct ClockTable {
    /// The tracked table whose versions this clock table holds.
    let table: TrackedTable

    /// The causal length column.
    static let causalLength = "cl"
    /// The column holding the version of the last change of the causal length.
    static let rowVersion = "cl_version"
    /// The column holding the site ordinal of that change.
    static let rowSite = "cl_site"
    /// The column holding the local sequence number of the row's last change.
    static let sequence = "seq"
    /// The row's authority count.
    static let rowAuthority = "ra"
    /// The version of tracked column `index`.
    static func version(_ index: Int) -> String { "v\(index)" }
    /// The writer (site ordinal) of tracked column `index`.
    static func writer(_ index: Int) -> String { "s\(index)" }
    /// The authority count of tracked column `index`.
    static func authority(_ index: Int) -> String { "a\(index)" }
    /// The local sequence number at which tracked column `index` last changed.
    static func changedAt(_ index: Int) -> String { "q\(index)" }

    /// The clock table of `table`.
    init(_ table: TrackedTable) {
        self.table = table
    }

    /// `vecsync_clock_<table>`, as stored.
    var name: String { EngineNames.clockTable(of: table.name) }

    /// ``name``, quoted for SQL.
    var quotedName: String { name.quotedSQLIdentifier }

    /// The number of tracked columns.
    private var count: Int { table.columns.count }

    /// The columns after `pk`, in stored order.
    var storedColumns: [String] {
        [Self.causalLength, Self.rowVersion, Self.rowSite, Self.sequence]
            + (0..<count).flatMap { [Self.version($0), Self.writer($0)] }
            + [Self.rowAuthority] + (0..<count).map(Self.authority) + (0..<count).map(Self.changedAt)
    }

    /// The columns added by the upgrade to authority counts and change numbers.
    var authorityAndChangeColumns: [String] {
        [Self.rowAuthority] + (0..<count).map(Self.authority) + (0..<count).map(Self.changedAt)
    }

    /// `CREATE TABLE`: the key, then ``storedColumns``, the row state NOT NULL.
    var createSQL: String {
        let keyType =
            switch table.keyKind {
            case .integer: "INTEGER PRIMARY KEY"
            case .text: "TEXT PRIMARY KEY NOT NULL"
            case .blob: "BLOB PRIMARY KEY NOT NULL"
            }
        let rowState: Set = [Self.causalLength, Self.rowVersion, Self.rowSite, Self.sequence]
        let columns = storedColumns.map { ", \($0) INTEGER" + (rowState.contains($0) ? " NOT NULL" : "") }.joined()
        let rowid = table.keyKind == .integer ? "" : " WITHOUT ROWID"
        return "CREATE TABLE \(quotedName) (pk \(keyType)\(columns))\(rowid);"
    }

    /// `DROP TABLE IF EXISTS`.
    var dropSQL: String { "DROP TABLE IF EXISTS \(quotedName)" }

    /// The `ALTER TABLE … ADD COLUMN` statements that give an existing clock table the
    /// fields of tracked columns `range` (columns the tracked table gained at its end). Rows
    /// take NULL in them: never written, so any write to the column wins over them. Columns
    /// are read by name, so their physical order does not matter.
    func addColumnsSQL(_ range: Range<Int>) -> String {
        range.flatMap { [Self.version($0), Self.writer($0), Self.authority($0), Self.changedAt($0)] }
            .map { "ALTER TABLE \(quotedName) ADD COLUMN \($0) INTEGER;" }.joined(separator: "\n")
    }

    /// Copies every row of the clock table `source` (named as stored) into this one, whose
    /// tracked column `i` was `source`'s column `mapping[i]` (nil: a new column, never
    /// written). The row state is copied as it is.
    func copySQL(from source: String, mapping: [Int?]) -> String {
        var targets = ["pk", Self.causalLength, Self.rowVersion, Self.rowSite, Self.sequence, Self.rowAuthority]
        var values = targets
        for (index, old) in mapping.enumerated() {
            guard let old else { continue }
            targets += [Self.version(index), Self.writer(index), Self.authority(index), Self.changedAt(index)]
            values += [Self.version(old), Self.writer(old), Self.authority(old), Self.changedAt(old)]
        }
        return
            "INSERT INTO \(quotedName) (\(targets.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) "
            + "FROM \(source.quotedSQLIdentifier)"
    }

    // MARK: Reading and writing rows

    /// The select list that ``decode(_:at:)`` reads: `pk` and ``storedColumns``, each
    /// prefixed with `alias.` when an alias is given.
    func selectList(alias: String? = nil) -> String {
        let prefix = alias.map { "\($0)." } ?? ""
        return (["pk"] + storedColumns).map { prefix + $0 }.joined(separator: ", ")
    }

    /// How many result columns ``selectList(alias:)`` has: a query that selects more after
    /// it finds them from this position on.
    var selectListCount: Int { 1 + storedColumns.count }

    /// `SELECT` of the clock row of one key (the bound parameter).
    var selectRowSQL: String { "SELECT \(selectList()) FROM \(quotedName) WHERE pk = ?" }

    /// `INSERT OR REPLACE` of a whole clock row, with ``arguments(_:)``.
    var writeRowSQL: String {
        let columns = ["pk"] + storedColumns
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "INSERT OR REPLACE INTO \(quotedName) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
    }

    /// The clock row held by `row` from result column `start` on, as ``selectList(alias:)``
    /// lays it out.
    func decode(_ row: Row, at start: Int = 0) -> ClockRow {
        var clock = ClockRow(key: row[start], columnCount: count)
        clock.causalLength = row[start + 1]
        clock.rowVersion = row[start + 2]
        clock.rowSite = row[start + 3]
        clock.sequence = row[start + 4]
        let versions = start + 5
        let authorities = versions + 2 * count
        clock.rowAuthority = row[authorities] ?? 0
        for index in 0..<count {
            clock.columns[index] = ClockRow.Column(
                version: row[versions + 2 * index],
                writer: row[versions + 2 * index + 1],
                authority: row[authorities + 1 + index] ?? 0,
                changedAt: row[authorities + 1 + count + index])
        }
        return clock
    }

    /// The arguments of ``writeRowSQL`` for `clock`, in ``storedColumns`` order after the key.
    func arguments(_ clock: ClockRow) -> StatementArguments {
        var values: [DatabaseValue] = [
            clock.key, clock.causalLength.databaseValue, clock.rowVersion.databaseValue,
            clock.rowSite.databaseValue, clock.sequence.databaseValue,
        ]
        for column in clock.columns {
            values.append(column.version?.databaseValue ?? .null)
            values.append(column.writer?.databaseValue ?? .null)
        }
        values.append(Self.storedAuthority(clock.rowAuthority))
        values += clock.columns.map { Self.storedAuthority($0.authority) }
        values += clock.columns.map { $0.changedAt?.databaseValue ?? .null }
        return StatementArguments(values)
    }

    /// An authority count as stored: NULL for 0.
    private static func storedAuthority(_ count: Int64) -> DatabaseValue {
        count == 0 ? .null : count.databaseValue
    }
}
