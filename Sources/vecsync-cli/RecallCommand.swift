import ArgumentParser
import Foundation
import VecSync

/// `vecsync-cli recall`: what an ivf index costs on a table's own rows.
struct RecallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recall",
        abstract: "Measure an ivf index's recall and speed on the table's own rows.",
        discussion: """
            TABLE is a vec0 table declared "indexed by ivf(...)", or a table whose vec0 \
            index (VectorIndex) is. Stored rows, spread evenly over the table, are taken as \
            queries; for each --nprobe the command prints recall@k (the share of the exact k \
            nearest rows the index finds, from vecsync_ivf_recall) and the time an indexed \
            query takes, beside the exact scan's. Nothing is written.

            Without --nprobe it tries 1, 2, 4, … up to half the lists. An index that has \
            not been trained yet (fewer than 4096 rows, and no vecsync_ivf_retrain) answers \
            every query exactly, and is refused.

            Example:
              vecsync-cli recall app.db docs_vec --queries 200 -k 10 --nprobe 4 8 16
            """)

    @Argument(help: "The database file.")
    var db: String

    @Argument(help: "The vec0 table (or the table its VectorIndex derives from).")
    var table: String

    @Option(name: .long, help: "How many stored rows to take as queries.")
    var queries: Int = 100

    @Option(name: .shortAndLong, help: "How many nearest rows each query asks for.")
    var k: Int = 10

    @Option(name: .long, parsing: .upToNextOption, help: "The lists each query scans; several to compare.")
    var nprobe: [Int] = []

    @Flag(name: .long, help: "Print one JSON object.")
    var json: Bool = false

    func validate() throws {
        guard (1...100_000).contains(queries) else { throw ValidationError("--queries must be from 1 to 100000") }
        guard (1...4096).contains(k) else { throw ValidationError("-k must be from 1 to 4096") }
        guard nprobe.allSatisfy({ (1...65536).contains($0) }) else {
            throw ValidationError("--nprobe must be from 1 to 65536")
        }
    }

    func run() throws {
        let database = try CLIDatabase.open(db)
        let report = try database.read { db in try measure(db) }
        if json {
            print(String(decoding: try JSONEncoder.sorted.encode(report), as: UTF8.self))
        } else {
            print(report.description)
        }
    }

    /// The measurements, made in one read transaction.
    func measure(_ db: Database) throws -> RecallReport {
        let name = try Self.ivfTable(db, named: table)
        let info = try Self.sqliteMessage { try db.ivfStatus(table: name) }
        guard info.trained else {
            throw ValidationErrorText(
                "\(name)'s ivf index is not trained yet (\(info.rows) rows): every query is exact. It trains "
                    + "itself at 4096 rows, or now with: SELECT vecsync_ivf_retrain('\(name)');")
        }
        let probes = nprobe.isEmpty ? Self.defaultProbes(lists: info.lists) : nprobe
        let vectors = try Self.queryVectors(db, name, count: queries)
        let exact = try Self.secondsPerQuery(db, name, vectors, k: k, nprobe: info.lists)
        var settings: [RecallReport.Setting] = []
        for probe in probes {
            let recall = try Self.sqliteMessage { try db.ivfRecall(table: name, queries: queries, k: k, probes: probe) } ?? 0
            let seconds = try Self.secondsPerQuery(db, name, vectors, k: k, nprobe: probe)
            settings.append(.init(nprobe: probe, recall: recall, millisecondsPerQuery: seconds * 1000))
        }
        return RecallReport(
            table: name, rows: info.rows, lists: info.lists, queries: vectors.count, k: k,
            exactMillisecondsPerQuery: exact * 1000, settings: settings)
    }

    /// `name` when it is a vec0 table; else the vec0 index of the table `name`; the error a
    /// person can act on otherwise.
    static func ivfTable(_ db: Database, named name: String) throws -> String {
        let sql = try String.fetchOne(
            db, sql: "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE",
            arguments: [name])
        guard let sql else { throw ValidationErrorText("no table \(name) in the database") }
        if sql.range(of: "using vec0", options: [.caseInsensitive]) != nil { return name }
        let indexes = try VectorIndex.registered(forTable: name, in: db)
        guard indexes.count == 1 else {
            throw ValidationErrorText(
                indexes.isEmpty
                    ? "\(name) is not a vec0 table and has no vec0 index"
                    : "\(name) has several vec0 indexes: name one of \(indexes.map(\.name).joined(separator: ", "))")
        }
        return indexes[0].name
    }

    /// 1, 2, 4, … below `lists` (at least one setting).
    static func defaultProbes(lists: Int) -> [Int] {
        let probes = sequence(first: 1) { $0 * 2 }.prefix(while: { $0 <= max(1, lists / 2) })
        return Array(probes)
    }

    /// The vectors of `count` stored rows spread evenly over the table.
    static func queryVectors(_ db: Database, _ name: String, count: Int) throws -> [Data] {
        let rows = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(name.quotedSQLIdentifier)") ?? 0
        let column = try vectorColumn(db, name)
        let step = max(1, rows / max(1, count))
        var vectors: [Data] = []
        let cursor = try Data.fetchCursor(db, sql: "SELECT \(column.quotedSQLIdentifier) FROM \(name.quotedSQLIdentifier)")
        var position = 0
        while let vector = try cursor.next(), vectors.count < count {
            if position % step == 0 { vectors.append(vector) }
            position += 1
        }
        return vectors
    }

    /// The vec0 table's first float[N] column, the one its ivf index is over: the column
    /// its VectorIndex names, or the first whose declaration says `float[`.
    static func vectorColumn(_ db: Database, _ name: String) throws -> String {
        if let index = try VectorIndex.registered(named: name, in: db) { return index.embeddingColumn }
        let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?)", arguments: [name])
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = ?", arguments: [name]) ?? ""
        for column in columns {
            let pattern = "[\"`\\[]?\\b\(NSRegularExpression.escapedPattern(for: column))\\b[\"`\\]]?\\s+float\\s*\\["
            if sql.range(of: pattern, options: [.regularExpression, .caseInsensitive]) != nil { return column }
        }
        throw ValidationErrorText("\(name) has no float[N] column")
    }

    /// Seconds a query takes at `nprobe` (at least the lists: the exact scan), over `vectors`.
    static func secondsPerQuery(_ db: Database, _ name: String, _ vectors: [Data], k: Int, nprobe: Int) throws
        -> Double
    {
        guard !vectors.isEmpty else { return 0 }
        let column = try vectorColumn(db, name).quotedSQLIdentifier
        let statement = try db.makeStatement(
            sql: "SELECT rowid, distance FROM \(name.quotedSQLIdentifier) WHERE \(column) MATCH ? AND k = ? AND nprobe = ?")
        let start = Date()
        for vector in vectors {
            _ = try Row.fetchAll(statement, arguments: [vector, k, nprobe])
        }
        return Date().timeIntervalSince(start) / Double(vectors.count)
    }

    /// The extension's own error text, without the statement around it.
    static func sqliteMessage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw ValidationErrorText(error.message ?? "\(error)")
        } catch VecSyncError.sqlite(let message, _, _) {
            throw ValidationErrorText(message)
        }
    }
}
