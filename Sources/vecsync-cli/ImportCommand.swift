import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli import`: vectors from a file into a table.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import vectors from an .npy, JSON lines or CSV file into a table.",
        discussion: """
            Formats (by file extension, or --format):
              .npy    a 2-D float32 or float64 array (numpy.save);
                      row i gets the key --first-key + i
              .jsonl  one object a line, for example
                      {"id": "doc-1", "embedding": [0.1, 0.2], "title": "…"};
                      other scalar fields fill columns of the same name
              .csv    key,x1,x2,…,xn  or  key,"[x1, …, xn]";
                      a header line is skipped

            Vectors are stored as F32 blobs in an F32_BLOB(n) column. A missing table is \
            created (key INTEGER or TEXT PRIMARY KEY, embedding F32_BLOB(n), and the JSON \
            fields); a row whose key exists is updated. Every vector must have the table's \
            dimensions. Rows are written in transactions of --batch rows, with a progress bar \
            on a terminal.

            --index vec0 then creates (or brings up to date) a derived vec0 index named \
            <table>_<column>_vec, kept current by triggers; --index libsql creates a libSQL \
            index <table>_<column>_idx for vector_top_k. Either is filled once, after the rows \
            are in.
            """)

    /// A search index to create after the import.
    enum IndexKind: String, CaseIterable, ExpressibleByArgument {
        case none, vec0, libsql
    }

    @Option(name: .long, help: "The database file (created if missing).")
    var db: String

    @Option(name: .long, help: "The table to import into.")
    var table: String

    @Option(name: .long, help: "The vector file.")
    var file: String

    @Option(name: .long, help: "The file format: npy, jsonl or csv (default: from the extension).")
    var format: ImportFormat?

    @Option(name: .long, help: "The key column.")
    var key: String = "id"

    @Option(name: .long, help: "The vector column.")
    var column: String = "embedding"

    @Option(name: .long, help: "The key of the first row of an .npy file (or of JSON lines without an id).")
    var firstKey: Int64 = 0

    @Option(name: .long, help: "Rows per transaction.")
    var batch: Int = 5000

    @Option(name: .long, help: "The index to create afterwards: none, vec0 or libsql.")
    var index: IndexKind = .none

    @Option(name: .long, help: "The distance of the created index: cosine or l2.")
    var metric: String = "cosine"

    @Flag(
        name: .long, inversion: .prefixedNo, help: "Show a progress bar (default: when standard error is a terminal).")
    var progress: Bool = ProgressBar.stderrIsTerminal

    func validate() throws {
        guard format != nil || ImportFormat.guess(file) != nil else {
            throw ValidationError("cannot tell the format of \(file) from its extension: pass --format npy|jsonl|csv")
        }
        guard FileManager.default.fileExists(atPath: file) else { throw ValidationError("no file at \(file)") }
        guard batch > 0 else { throw ValidationError("--batch must be at least 1") }
        guard DistanceMetric(rawValue: metric) != nil else { throw ValidationError("--metric must be cosine or l2") }
    }

    func run() throws {
        let started = Date()
        let reader = try ImportReader(
            path: file, format: format ?? ImportFormat.guess(file) ?? .csv, firstKey: firstKey)
        guard let first = try reader.record(0) else {
            print("\(file): no rows")
            return
        }
        let dimensions = first.vector.dimensions
        let database = try CLIDatabase.open(db, create: true)
        let columns = try database.write { db in try prepareTable(db, first: first) }

        var bar = ProgressBar(total: reader.total, unit: "rows", enabled: progress)
        var done = 0
        var skippedFields = Set<String>()
        while done < reader.total {
            let end = Swift.min(done + batch, reader.total)
            try database.write { db in
                let sql = insertSQL(columns: columns)
                let statement = try db.cachedStatement(sql: sql)
                for index in done..<end {
                    guard let record = try reader.record(index) else { break }
                    do {
                        try record.vector.validate(dimensions: dimensions)
                    } catch {
                        throw ValidationErrorText("row \(index + 1) of \(file): \(error)")
                    }
                    var values: [DatabaseValue] = [record.key, record.vector.databaseValue]
                    let fields = Dictionary(record.fields, uniquingKeysWith: { a, _ in a })
                    for name in columns {
                        values.append(fields[name] ?? .null)
                    }
                    for (name, _) in record.fields where !columns.contains(name) { skippedFields.insert(name) }
                    try statement.execute(arguments: StatementArguments(values))
                }
            }
            done = end
            bar.update(done)
        }
        bar.finish()
        if !skippedFields.isEmpty {
            print("note: fields not in table \(table), not imported: \(skippedFields.sorted().joined(separator: ", "))")
        }
        try createIndex(database, dimensions: dimensions)
        let seconds = Date().timeIntervalSince(started)
        print(
            "imported \(done) vectors of \(dimensions) dimensions into \(table) in \(String(format: "%.2f", seconds)) s"
                + (index == .none ? "" : ", \(index.rawValue) index ready"))
    }

    /// Creates the table if missing; checks its vector column otherwise. Returns the extra
    /// columns that JSON fields fill.
    func prepareTable(_ db: Database, first: ImportRecord) throws -> [String] {
        let dimensions = first.vector.dimensions
        if try !db.tableExists(table) {
            let keyType: String
            if case .int64 = first.key.storage { keyType = "INTEGER" } else { keyType = "TEXT" }
            var definitions = [
                "\(key.quotedSQLIdentifier) \(keyType) PRIMARY KEY",
                "\(column.quotedSQLIdentifier) F32_BLOB(\(dimensions))",
            ]
            definitions += first.fields.map { $0.0.quotedSQLIdentifier }
            try db.execute(sql: "CREATE TABLE \(table.quotedSQLIdentifier) (\(definitions.joined(separator: ", ")))")
        }
        let existing = try db.columns(in: table)
        guard let vectorColumn = existing.first(where: { $0.name.lowercased() == column.lowercased() }) else {
            throw ValidationErrorText("table \(table) has no column \(column)")
        }
        guard existing.contains(where: { $0.name.lowercased() == key.lowercased() }) else {
            throw ValidationErrorText("table \(table) has no key column \(key)")
        }
        if let declared = LibSQLVectorIndex.declaredDimensions(vectorColumn.type), declared != dimensions {
            throw VecSyncError.dimensionMismatch(expected: declared, got: dimensions)
        }
        let names = Set(existing.map { $0.name.lowercased() })
        return first.fields.map(\.0).filter { names.contains($0.lowercased()) && $0.lowercased() != key.lowercased() }
    }

    /// `INSERT … ON CONFLICT(key) DO UPDATE`: an update keeps derived indexes' triggers right.
    func insertSQL(columns: [String]) -> String {
        let all = [key, column] + columns
        let names = all.map(\.quotedSQLIdentifier).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: all.count).joined(separator: ", ")
        let updates = ([column] + columns).map { "\($0.quotedSQLIdentifier) = excluded.\($0.quotedSQLIdentifier)" }
            .joined(separator: ", ")
        return "INSERT INTO \(table.quotedSQLIdentifier) (\(names)) VALUES (\(placeholders)) "
            + "ON CONFLICT(\(key.quotedSQLIdentifier)) DO UPDATE SET \(updates)"
    }

    func createIndex(_ database: VecSyncDatabase, dimensions: Int) throws {
        let distance = DistanceMetric(rawValue: metric) ?? .cosine
        switch index {
        case .none:
            return
        case .vec0:
            let vectorIndex = VectorIndex(
                table: table, primaryKey: key, embeddingColumn: column,
                dimensions: dimensions, metric: distance)
            try database.write { db in
                if try vectorIndex.exists(db) {
                    let report = try vectorIndex.verify(db)
                    if !report.isConsistent { try vectorIndex.rebuild(db) }
                } else {
                    try vectorIndex.create(db)
                }
            }
        case .libsql:
            let name = "\(table)_\(column)_idx"
            try database.write { db in
                try db.execute(
                    sql: """
                        CREATE INDEX IF NOT EXISTS \(name.quotedSQLIdentifier)
                        ON \(table.quotedSQLIdentifier)(libsql_vector_idx(\(column.quotedSQLIdentifier), 'metric=\(distance.rawValue)'))
                        """)
                try LibSQLVectorIndex(name: name, table: table, column: column, dimensions: dimensions).rebuild(db)
            }
        }
    }
}
