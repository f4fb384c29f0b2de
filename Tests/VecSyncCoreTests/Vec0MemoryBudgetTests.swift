import Foundation
import Testing
import VecSyncCore
import VecSyncTestSupport

/// Over the memory budget a vec0 table keeps no vectors in memory and its searches read
/// them from the database: the answers are the same. The budget is process-wide, so these
/// tests set it in the sqlite3 shell (a process of its own), not in the test process.
@Suite("vec0 over the memory budget")
struct Vec0MemoryBudgetTests {
    @Test("Searches over the budget answer exactly as searches in memory, through writes")
    func streamedSearchesMatchInMemory() throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0130)
        func vector() -> String {
            "["
                + (0..<8).map { _ in String(format: "%.4f", Double.random(in: -1...1, using: &random)) }.joined(
                    separator: ",") + "]"
        }
        var script =
            "create virtual table t using vec0(embedding float[8] distance_metric=cosine, cat integer, chunk_size=16);\nbegin;\n"
        for row in 1...300 {
            script += "insert into t(rowid, embedding, cat) values (\(row), '\(vector())', \(row % 3));\n"
        }
        script += "commit;\n"
        var vectors: [String] = []
        for round in 0..<12 {
            // Writes between the rounds: deletes, updates, inserts.
            script += "delete from t where rowid = \(round * 7 + 1);\n"
            script += "update t set embedding = '\(vector())' where rowid = \(round * 11 + 2);\n"
            script += "insert into t(rowid, embedding, cat) values (\(1000 + round), '\(vector())', 1);\n"
            vectors.append("'\(vector())'")
        }
        let queries = Shell.knnLines(
            column: "embedding", queries: vectors, k: 7, filters: ["", " and cat = 1", " and distance > 0.5"],
            distance: "round(distance, 9)")
        try Shell.expectStreamedAnswersMatch(
            setUp: script, queries: queries, budget: 1024, requireRows: false, context: "seed \(random.seed):")
    }

    @Test("The budget is read and set from SQL, and refuses what is not a byte count")
    func budgetFromSQL() throws {
        let output = try Shell.run(
            """
            select vecsync_memory_budget();
            select vecsync_memory_budget(65536);
            select vecsync_memory_budget();
            select vecsync_memory_budget(-1);
            """)
        #expect(output.stdout == "0\n65536\n65536\n", "stdout: \(output.stdout)")
        #expect(output.stderr.contains("number of bytes"), "stderr: \(output.stderr)")
    }
}
