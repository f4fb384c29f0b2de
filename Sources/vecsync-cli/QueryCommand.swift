import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli query`: the k nearest rows to a vector.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the k rows nearest to a vector.",
        discussion: """
            The query vector comes from --vector (libSQL text such as '[0.1, 0.2]'), \
            --vector-file (text, JSON, the first row of an .npy file, or raw float32 in a \
            .f32/.bin file), or --like KEY (the stored vector of a row).

            Where the search runs:
              --index NAME   a vec0 index made by VectorIndex (or import --index vec0),
                             or a libSQL index, searched with vector_top_k
              --table T      the table's vector index when it has exactly one, else an
                             exact scan of T.--column with vector_distance_cos or _l2

            Each result is printed as rank, key, distance and the --show columns of the \
            table, one a line (or as JSON lines with --json).

            Example:
              vecsync-cli query --db photos.db --table photos --like PH-12 -k 5 \\
                  --show description
            """)

    @Option(name: .long, help: "The database file.")
    var db: String

    @Option(name: .long, help: "The index to search (vec0 VectorIndex or libSQL index).")
    var index: String?

    @Option(name: .long, help: "The table to search (and to read --show columns from).")
    var table: String?

    @Option(name: .long, help: "The vector column of --table, for scans and --like.")
    var column: String = "embedding"

    @Option(name: .long, help: "The query vector as text: '[0.1, 0.2, …]'.")
    var vector: String?

    @Option(name: .long, help: "A file holding the query vector.")
    var vectorFile: String?

    @Option(name: .long, help: "Use the stored vector of the row with this key.")
    var like: String?

    @Option(name: .shortAndLong, help: "How many rows.")
    var k: Int = 10

    @Option(name: .long, help: "The distance of a scan: cosine or l2.")
    var metric: String = "cosine"

    @Option(name: .long, parsing: .upToNextOption, help: "Columns of the table to print beside each key.")
    var show: [String] = []

    @Flag(name: .long, help: "Print JSON lines.")
    var json: Bool = false

    func validate() throws {
        let sources = [vector != nil, vectorFile != nil, like != nil].filter { $0 }.count
        guard sources == 1 else { throw ValidationError("give exactly one of --vector, --vector-file, --like") }
        guard index != nil || table != nil else { throw ValidationError("give --index or --table") }
        guard like == nil || table != nil || index != nil else { throw ValidationError("--like needs --table") }
        guard k > 0 else { throw ValidationError("-k must be at least 1") }
        guard DistanceMetric(rawValue: metric) != nil else { throw ValidationError("--metric must be cosine or l2") }
    }

    func run() throws {
        let database = try CLIDatabase.open(db)
        try database.read { db in
            let target = try resolve(db)
            let query = try queryVector(db, target: target)
            let hits = try search(db, target: target, query: query)
            for (rank, hit) in hits.enumerated() {
                let shown = try showValues(db, target: target, key: hit.key)
                if json {
                    let line = QueryResultLine(
                        rank: rank + 1, key: Self.keyText(hit.key), distance: hit.distance,
                        columns: Dictionary(shown, uniquingKeysWith: { a, _ in a }))
                    print(String(decoding: try JSONEncoder.sorted.encode(line), as: UTF8.self))
                } else {
                    let extra = shown.map { "  \($0.1)" }.joined()
                    let position = String(rank + 1)
                    let padded = String(repeating: " ", count: Swift.max(0, 3 - position.count)) + position
                    print("\(padded)  \(Self.keyText(hit.key))  \(String(format: "%.6f", hit.distance))" + extra)
                }
            }
            if hits.isEmpty && !json { print("(no rows)") }
        }
    }

    /// Where to search, decided from the options and the database's schema.
    enum Target {
        case vectorIndex(VectorIndex)
        case libsql(LibSQLVectorIndex)
        case scan(table: String, column: String)

        var table: String {
            switch self {
            case .vectorIndex(let index): index.table
            case .libsql(let index): index.table
            case .scan(let table, _): table
            }
        }

        var column: String {
            switch self {
            case .vectorIndex(let index): index.embeddingColumn
            case .libsql(let index): index.column
            case .scan(_, let column): column
            }
        }

        /// The key column the printed keys belong to.
        var keyColumn: String {
            switch self {
            case .vectorIndex(let index): index.primaryKey
            case .libsql, .scan: "rowid"
            }
        }
    }

    func resolve(_ db: Database) throws -> Target {
        if let index {
            if let vectorIndex = try VectorIndex.registered(named: index, in: db) { return .vectorIndex(vectorIndex) }
            if let libsql = try LibSQLVectorIndex.named(index, in: db) { return .libsql(libsql) }
            throw ValidationErrorText("no vector index named \(index) (see `vecsync-cli verify --db \(self.db)`)")
        }
        guard let table else { throw ValidationErrorText("give --index or --table") }
        guard try db.tableExists(table) else { throw ValidationErrorText("no table \(table)") }
        let vec0 = try VectorIndex.registered(forTable: table, in: db).filter {
            $0.embeddingColumn.lowercased() == column.lowercased()
        }
        let libsql = try LibSQLVectorIndex.all(in: db).filter {
            $0.table.lowercased() == table.lowercased() && $0.column.lowercased() == column.lowercased()
        }
        if vec0.count + libsql.count == 1 {
            if let only = vec0.first { return .vectorIndex(only) }
            if let only = libsql.first { return .libsql(only) }
        }
        return .scan(table: table, column: column)
    }

    func queryVector(_ db: Database, target: Target) throws -> Vector {
        if let vector { return try QueryVector.parse(text: vector) }
        if let vectorFile { return try QueryVector.read(file: vectorFile) }
        guard let like else { throw ValidationErrorText("no query vector") }
        let keyColumn = target.keyColumn == "rowid" ? try primaryKeyColumn(db, table: target.table) : target.keyColumn
        let key: DatabaseValue =
            keyColumn == "rowid" ? (Int64(like)?.databaseValue ?? like.databaseValue) : like.databaseValue
        guard
            let stored = try Vector.fetchOne(
                db,
                sql:
                    "SELECT \(target.column.quotedSQLIdentifier) FROM \(target.table.quotedSQLIdentifier) WHERE \(keyColumn.quotedSQLIdentifier) = ?",
                arguments: [key])
        else { throw ValidationErrorText("no vector for key \(like) in \(target.table).\(target.column)") }
        return stored
    }

    func search(_ db: Database, target: Target, query: Vector) throws -> [VectorMatch<DatabaseValue>] {
        switch target {
        case .vectorIndex(let index):
            return try index.search(db, near: query, limit: k)
        case .libsql(let index):
            let hits = try index.search(db, near: query, k: k)
            let keyColumn = try primaryKeyColumn(db, table: index.table)
            return try hits.map { hit in
                let key =
                    try DatabaseValue.fetchOne(
                        db,
                        sql:
                            "SELECT \(keyColumn.quotedSQLIdentifier) FROM \(index.table.quotedSQLIdentifier) WHERE rowid = ?",
                        arguments: [hit.key]) ?? hit.key.databaseValue
                return VectorMatch(key: key, distance: hit.distance)
            }
        case .scan(let table, let column):
            let keyColumn = try primaryKeyColumn(db, table: table)
            let function = metric == "l2" ? "vector_distance_l2" : "vector_distance_cos"
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(keyColumn.quotedSQLIdentifier) AS key, \(function)(\(column.quotedSQLIdentifier), ?) AS distance
                    FROM \(table.quotedSQLIdentifier) WHERE \(column.quotedSQLIdentifier) IS NOT NULL
                    ORDER BY distance, key LIMIT ?
                    """,
                arguments: [query, k])
            return rows.map { row in VectorMatch(key: row["key"], distance: row["distance"] ?? .nan) }
        }
    }

    /// A key as printed: text without quotes, numbers as numbers.
    static func keyText(_ key: DatabaseValue) -> String {
        switch key.storage {
        case .string(let text): text
        case .int64(let value): String(value)
        case .double(let value): String(value)
        case .blob(let data): "<\(data.count) bytes>"
        case .null: "NULL"
        }
    }

    /// The table's primary key column, or `rowid`.
    func primaryKeyColumn(_ db: Database, table: String) throws -> String {
        let primaryKey = try db.primaryKey(table)
        return primaryKey.columns.count == 1 ? primaryKey.columns[0] : "rowid"
    }

    func showValues(_ db: Database, target: Target, key: DatabaseValue) throws -> [(String, String)] {
        guard !show.isEmpty else { return [] }
        let keyColumn = target.keyColumn == "rowid" ? try primaryKeyColumn(db, table: target.table) : target.keyColumn
        let columns = show.map(\.quotedSQLIdentifier).joined(separator: ", ")
        guard
            let row = try Row.fetchOne(
                db,
                sql:
                    "SELECT \(columns) FROM \(target.table.quotedSQLIdentifier) WHERE \(keyColumn.quotedSQLIdentifier) = ?",
                arguments: [key])
        else { return [] }
        return show.enumerated().map { index, name in
            let value: DatabaseValue = row[index]
            switch value.storage {
            case .string(let text): return (name, text)
            case .null: return (name, "NULL")
            case .blob(let data): return (name, "<\(data.count) bytes>")
            default: return (name, "\(value)")
            }
        }
    }
}
