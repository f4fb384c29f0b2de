import GRDB

/// An external-content FTS5 table (`fts5(…, content='files', content_rowid='id')`): the index
/// stores no copy of the text, so removing a row's entry needs the values it was indexed
/// with. A ``DerivedIndex`` over such a table is kept current by triggers on the source table,
/// which see those values (`old.*`) before they change: the application's own (DriveIndex
/// installs them, as SQLite's documentation shows), or, when it has none, the three that
/// ``install(_:)`` creates. Both run during merges as during local writes, so a merge has
/// nothing left to refresh.
struct ExternalContentFTS: Sendable, Hashable {
    /// The FTS5 table.
    let name: String
    /// Its `content=` table.
    let contentTable: String
    /// Its `content_rowid=` column (`rowid` when not given).
    let contentRowid: String

    /// The external-content declaration of the FTS5 table `name`, or nil when it is not one
    /// (self-contained, contentless, or no FTS5 table at all).
    static func declared(_ name: String, in db: Database) throws -> ExternalContentFTS? {
        guard
            let sql = try String.fetchOne(
                db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                arguments: [name])
        else { return nil }
        guard let arguments = Self.moduleArguments(sql) else { return nil }
        var options: [String: String] = [:]
        for argument in arguments {
            let parts = argument.split(separator: "=", maxSplits: 1).map { String($0) }
            guard parts.count == 2 else { continue }
            let key = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            options[key] = Self.unquoted(parts[1].trimmingCharacters(in: .whitespaces))
        }
        guard let content = options["content"], !content.isEmpty else { return nil }
        return ExternalContentFTS(name: name, contentTable: content, contentRowid: options["content_rowid"] ?? "rowid")
    }

    /// The arguments between the parentheses of `CREATE VIRTUAL TABLE … USING fts5(…)`,
    /// split at top-level commas (commas inside quotes or brackets do not split).
    static func moduleArguments(_ sql: String) -> [String]? {
        guard let using = sql.range(of: "fts5", options: [.caseInsensitive]),
            let open = sql[using.upperBound...].firstIndex(of: "(")
        else { return nil }
        var arguments: [String] = []
        var current = ""
        var quote: Character?
        var depth = 0
        for character in sql[sql.index(after: open)...] {
            if let open = quote {
                current.append(character)
                if character == (open == "[" ? "]" : open) { quote = nil }
                continue
            }
            switch character {
            case "'", "\"", "`", "[":
                quote = character
                current.append(character)
            case "(":
                depth += 1
                current.append(character)
            case ")" where depth == 0:
                arguments.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                return arguments
            case ")":
                depth -= 1
                current.append(character)
            case "," where depth == 0:
                arguments.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                current = ""
            default:
                current.append(character)
            }
        }
        return nil
    }

    /// `value` without the SQL quotes around it (`'a''b'` is `a'b`).
    static func unquoted(_ value: String) -> String {
        guard let first = value.first, let last = value.last, value.count >= 2 else { return value }
        switch (first, last) {
        case ("'", "'"), ("\"", "\""), ("`", "`"):
            return String(value.dropFirst().dropLast()).replacingOccurrences(of: "\(first)\(first)", with: "\(first)")
        case ("[", "]"):
            return String(value.dropFirst().dropLast())
        default:
            return value
        }
    }

    /// The names of the three triggers ``install(_:)`` creates.
    var triggerNames: [String] { ["insert", "delete", "update"].map { "vecsync_fts_\(name)_\($0)" } }

    /// The triggers on the content table whose SQL names the index (``install(_:columns:)``
    /// drops its own first): the application keeps the index itself.
    func applicationTriggers(_ db: Database) throws -> [String] {
        try Row.fetchAll(
            db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE",
            arguments: [contentTable]
        ).compactMap { row -> String? in
            let trigger: String = row["name"]
            let sql: String = row["sql"] ?? ""
            guard sql.range(of: name, options: .caseInsensitive) != nil else { return nil }
            return trigger
        }
    }

    /// Creates the triggers that keep the index current for `columns`, unless the
    /// application's own triggers already do; returns whether it created them.
    @discardableResult
    func install(_ db: Database, columns: [String]) throws -> Bool {
        try db.execute(sql: Self.dropSQL(triggerNames))
        guard try applicationTriggers(db).isEmpty else { return false }
        let index = name.quotedSQLIdentifier
        let source = contentTable.quotedSQLIdentifier
        let key = contentRowid.quotedSQLIdentifier
        let list = columns.map(\.quotedSQLIdentifier).joined(separator: ", ")
        func values(_ row: String) -> String { columns.map { "\(row).\($0.quotedSQLIdentifier)" }.joined(separator: ", ") }
        let add = "INSERT INTO \(index) (rowid, \(list)) VALUES (new.\(key), \(values("new")));"
        let remove =
            "INSERT INTO \(index) (\(index), rowid, \(list)) VALUES ('delete', old.\(key), \(values("old")));"
        let names = triggerNames.map(\.quotedSQLIdentifier)
        try db.execute(
            sql: """
                CREATE TRIGGER \(names[0]) AFTER INSERT ON \(source) BEGIN \(add) END;
                CREATE TRIGGER \(names[1]) AFTER DELETE ON \(source) BEGIN \(remove) END;
                CREATE TRIGGER \(names[2]) AFTER UPDATE ON \(source) BEGIN \(remove) \(add) END;
                """)
        return true
    }

    /// SQL dropping the triggers `names`, when they exist.
    static func dropSQL(_ names: [String]) -> String {
        names.map { "DROP TRIGGER IF EXISTS \($0.quotedSQLIdentifier);" }.joined(separator: "\n")
    }

    /// Rows of the content table the index lacks, plus index entries with no row: read from
    /// the index's `_docsize` table, which holds one row per indexed row. (The index holds no
    /// copy of the text, so an entry indexed with values that changed since is not seen;
    /// ``rebuild(_:)`` mends both.) Nil when the index keeps no `_docsize` (`columnsize=0`).
    func outOfStep(_ db: Database) throws -> Int? {
        let docsize = "\(name)_docsize"
        guard try db.tableExists(docsize) else { return nil }
        let rows = "SELECT \(contentRowid.quotedSQLIdentifier) FROM \(contentTable.quotedSQLIdentifier)"
        let entries = "SELECT id FROM \(docsize.quotedSQLIdentifier)"
        let missing = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(rows) EXCEPT \(entries))") ?? 0
        let extra = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(entries) EXCEPT \(rows))") ?? 0
        return missing + extra
    }

    /// Rebuilds the index from the content table (FTS5's `rebuild` command).
    func rebuild(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO \(name.quotedSQLIdentifier) (\(name.quotedSQLIdentifier)) VALUES ('rebuild')")
    }
}

extension DerivedIndex {
    /// The derived index the existing FTS5 table `name` makes of `table`, read from the two
    /// tables: its columns (each must be a column of `table`) and its key — the rowid for an
    /// external-content table, else a column named like `table`'s primary key if it has one,
    /// else its rowid.
    public static func fts5(reading name: String, on table: String, in db: Database) throws -> DerivedIndex {
        guard try db.tableExists(name) else {
            throw VecSyncError.derivedIndex(name: name, reason: "no such table; create the FTS5 table first")
        }
        let indexColumns = try db.columns(in: name).map(\.name)
        let sourceColumns = Set(try db.columns(in: table).map { $0.name.lowercased() })
        let key = try db.primaryKey(table).columns.first ?? "rowid"
        let external = try ExternalContentFTS.declared(name, in: db) != nil
        let keyColumn = !external && indexColumns.contains { $0.lowercased() == key.lowercased() } ? key : "rowid"
        let columns = indexColumns.filter { $0.lowercased() != keyColumn.lowercased() }
        if let stranger = columns.first(where: { !sourceColumns.contains($0.lowercased()) }) {
            throw VecSyncError.derivedIndex(name: name, reason: "its column \(stranger) is no column of \(table)")
        }
        return DerivedIndex(fts5: name, on: table, keyColumn: keyColumn, columns: columns)
    }
}
