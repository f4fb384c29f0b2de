import ArgumentParser
import Foundation
import Testing
import VecSync
import VecSyncTestSupport

@testable import vecsync_cli

/// `vecsync-cli recall`: recall@k and time per query of an ivf index, measured on the
/// table's own rows, and clear refusals for tables it cannot measure.
@Suite("vecsync-cli recall")
struct RecallCommandTests {
    let folder: URL

    init() throws {
        folder = try temporaryDirectory("cli-recall")
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A database with `docs` (600 seeded 8-d rows, trained into 16 lists), `plain` (a vec0
    /// table without an ivf index) and `fresh` (an ivf index not trained yet).
    func makeDatabase() throws -> String {
        let file = path("ivf.db")
        let database = try VecSyncDatabase(path: file)
        var random = SeededRandom(seed: 0x1CF_0040)
        try database.write { db in
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE docs USING vec0(embedding float[8] distance_metric=cosine indexed by ivf(nlist=16));
                    CREATE VIRTUAL TABLE plain USING vec0(embedding float[8]);
                    CREATE VIRTUAL TABLE fresh USING vec0(embedding float[8] indexed by ivf());
                    """)
            for rowid in 1...600 {
                let vector = Vector.random(dimensions: 8, using: &random).blob
                try db.execute(sql: "INSERT INTO docs(rowid, embedding) VALUES (?, ?)", arguments: [rowid, vector])
                try db.execute(sql: "INSERT INTO plain(rowid, embedding) VALUES (?, ?)", arguments: [rowid, vector])
            }
            try db.execute(sql: "INSERT INTO fresh(rowid, embedding) VALUES (1, ?)", arguments: [Vector([1, 0, 0, 0, 0, 0, 0, 0]).blob])
            _ = try Int.fetchOne(db, sql: "SELECT vecsync_ivf_retrain('docs')")
        }
        return file
    }

    func measure(_ arguments: [String]) throws -> RecallReport {
        let command = try RecallCommand.parse(arguments)
        let database = try CLIDatabase.open(command.db)
        return try database.read { db in try command.measure(db) }
    }

    /// The error text a person sees for `arguments`.
    func failure(_ arguments: [String]) -> String {
        do {
            _ = try measure(arguments)
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    @Test func recallRisesWithNprobeAndIsExactAtEveryList() throws {
        let file = try makeDatabase()
        let report = try measure([file, "docs", "--queries", "50", "-k", "10", "--nprobe", "1", "4", "16"])
        #expect(report.table == "docs" && report.rows == 600 && report.lists == 16)
        #expect(report.queries == 50 && report.k == 10)
        #expect(report.settings.map(\.nprobe) == [1, 4, 16])
        let recalls = report.settings.map(\.recall)
        #expect(recalls[0] < 1, "one list of 16 misses neighbours: \(recalls)")
        #expect(recalls[0] <= recalls[1] && recalls[1] <= recalls[2], "\(recalls)")
        #expect(recalls[2] == 1, "every list is the exact scan")
        #expect(report.settings.allSatisfy { $0.millisecondsPerQuery >= 0 })
        #expect(report.description.contains("nprobe  recall@10  ms/query"))
        #expect(report.description.split(separator: "\n").count == 2 + 3 + 1)
    }

    @Test func withoutNprobePowersOfTwoUpToHalfTheLists() throws {
        let report = try measure([try makeDatabase(), "docs", "--queries", "10"])
        #expect(report.settings.map(\.nprobe) == [1, 2, 4, 8])
        #expect(RecallCommand.defaultProbes(lists: 1) == [1])
    }

    @Test func jsonCarriesEverySetting() throws {
        let report = try measure([try makeDatabase(), "docs", "--queries", "10", "--nprobe", "2"])
        let json = try JSONSerialization.jsonObject(with: JSONEncoder.sorted.encode(report)) as? [String: Any]
        #expect(json?["table"] as? String == "docs")
        #expect(json?["lists"] as? Int == 16)
        #expect(json?["exact_ms_per_query"] as? Double != nil)
        let settings = json?["settings"] as? [[String: Any]]
        #expect(settings?.first?["nprobe"] as? Int == 2)
        #expect(settings?.first?["recall"] as? Double != nil)
        #expect(settings?.first?["ms_per_query"] as? Double != nil)
    }

    @Test func tablesItCannotMeasureAreRefusedWithTheReason() throws {
        let file = try makeDatabase()
        #expect(failure([file, "nothing"]) == "no table nothing in the database")
        #expect(
            failure([file, "plain"]).contains("vec0 \"plain\" has no ivf index"), "\(failure([file, "plain"]))")
        #expect(failure([file, "fresh"]).contains("fresh's ivf index is not trained yet (1 rows)"))
        #expect(failure([path("missing.db"), "docs"]) == "no database file at \(path("missing.db"))")
        for arguments in [[file, "docs", "-k", "0"], [file, "docs", "--queries", "0"], [file, "docs", "--nprobe", "0"]] {
            #expect(throws: (any Error).self, "\(arguments)") { _ = try RecallCommand.parse(arguments) }
        }
    }

    @Test func theBuiltToolPrintsATableOrJSONAndFailsWithTheReason() throws {
        let file = try makeDatabase()
        let text = try CommandLineTests.run(["recall", file, "docs", "--queries", "20", "--nprobe", "2", "16"])
        #expect(text.status == 0, "\(text.output)")
        let lines = text.output.split(separator: "\n")
        #expect(lines.first == "docs: ivf index of 16 lists over 600 rows; 20 stored rows as queries, k = 10")
        #expect(lines.dropFirst().first == "nprobe  recall@10  ms/query  time vs exact")
        #expect(lines.map { $0.split(separator: " ").first ?? "" }.dropFirst(2) == ["2", "16", "exact"])
        let json = try CommandLineTests.run(["recall", file, "docs", "--queries", "20", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect((object?["settings"] as? [Any])?.count == 4, "\(json.output)")
        let missing = try CommandLineTests.run(["recall", file, "nothing"])
        #expect(missing.status != 0)
        #expect(missing.output.contains("no table nothing in the database"), "\(missing.output)")
    }

    @Test func aTableWithAnIvfVectorIndexIsMeasuredThroughIt() throws {
        let file = path("indexed.db")
        let database = try VecSyncDatabase(path: file)
        let index = VectorIndex(
            table: "notes", dimensions: 8, metric: .l2, name: "notes_vec", ivf: .init(lists: 8, probes: 2))
        var random = SeededRandom(seed: 0x1CF_0041)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, embedding F32_BLOB(8))")
            for id in 1...200 {
                try db.execute(
                    sql: "INSERT INTO notes VALUES (?, ?)",
                    arguments: [id, Vector.random(dimensions: 8, using: &random).blob])
            }
            try index.create(db)
            _ = try Int.fetchOne(db, sql: "SELECT vecsync_ivf_retrain('notes_vec')")
        }
        let report = try measure([file, "notes", "--queries", "20", "--nprobe", "2", "8"])
        #expect(report.table == "notes_vec" && report.lists == 8 && report.rows == 200)
        #expect(report.settings.last?.recall == 1)
    }
}
