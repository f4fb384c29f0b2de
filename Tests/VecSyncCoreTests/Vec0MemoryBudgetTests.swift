import Foundation
import Testing
import VecSyncCore
import VecSyncTestSupport

/// Over the memory budget a vec0 table keeps no vectors in memory and its searches read
/// them from the database: the answers are the same. The budget is process-wide, so these
/// tests set it in the sqlite3 shell (a process of its own), not in the test process.
@Suite("vec0 over the memory budget")
struct Vec0MemoryBudgetTests {
    /// An 8-dimensional vector literal, elements in [-1, 1] to four places.
    static func vector(_ random: inout SeededRandom) -> String {
        "["
            + (0..<8).map { _ in String(format: "%.4f", Double.random(in: -1...1, using: &random)) }.joined(
                separator: ",") + "]"
    }

    /// A script making table t (`embedding float[8]`, then `options` inside `vec0(...)`, and
    /// `cat integer`) with `rows` rows in one transaction (cat = rowid % 3), its ivf index
    /// then retrained, the retrain's output hidden.
    static func ivfTable(_ random: inout SeededRandom, rows: Int, options: String) -> String {
        var script = "create virtual table t using vec0(embedding float[8] \(options), cat integer, "
            + "chunk_size=16);\nbegin;\n"
        for row in 1...rows {
            script += "insert into t(rowid, embedding, cat) values (\(row), '\(vector(&random))', \(row % 3));\n"
        }
        return script + "commit;\n.output /dev/null\nselect vecsync_ivf_retrain('t');\n.output stdout\n"
    }

    @Test("Searches over the budget answer exactly as searches in memory, through writes")
    func streamedSearchesMatchInMemory() throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0130)
        func vector() -> String { Self.vector(&random) }
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

    @Test("An ivf index over the budget answers from its codes exactly as in memory, through writes")
    func ivfOverBudgetMatchesInMemory() throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0132)
        func vector() -> String { Self.vector(&random) }
        var script = Self.ivfTable(
            &random, rows: 400, options: "distance_metric=cosine indexed by ivf(nlist=16, nprobe=1)")
        // Per query: the index's answer (nprobe 1) and the exact one (nprobe 16, every list),
        // in memory and then over a budget of 1 KiB, then whether the copy was streamed.
        let rounds = 12
        for round in 0..<rounds {
            script += "delete from t where rowid = \(round * 7 + 1);\n"
            script += "update t set embedding = '\(vector())' where rowid = \(round * 11 + 2);\n"
            script += "insert into t(rowid, embedding, cat) values (\(1000 + round), '\(vector())', 1);\n"
            let q = "'\(vector())'"
            let filter = round % 2 == 0 ? "" : " and cat = 1"
            func knn(_ nprobe: Int) -> String {
                "select group_concat(rowid || ':' || round(distance, 9), ' ') from (select rowid, distance "
                    + "from t where embedding match \(q) and k = 5 and nprobe = \(nprobe)\(filter));\n"
            }
            script += "select vecsync_memory_budget(0);\n" + knn(1) + knn(16)
            script += "select vecsync_memory_budget(1024);\n" + knn(1) + knn(16)
            script += "select json_extract(vecsync_cache_info('t'), '$.streamed');\n"
        }
        let output = try Shell.run(script)
        #expect(output.stderr.isEmpty, "stderr: \(output.stderr)")
        let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(lines.count >= rounds * 7, "output: \(output.stdout)")
        var approximate = 0
        for round in 0..<rounds {
            let l = Array(lines[(round * 7)..<(round * 7 + 7)])
            #expect(l[0] == "0" && l[3] == "1024" && l[6] == "1", "round \(round): \(l)")
            #expect(!l[1].isEmpty, "round \(round): no rows")
            #expect(l[4] == l[1], "round \(round): index over the budget \(l[4]), in memory \(l[1])")
            #expect(l[5] == l[2], "round \(round): exact over the budget \(l[5]), in memory \(l[2])")
            if l[1] != l[2] { approximate += 1 }
        }
        // The index answered (at nprobe 1 of 16 lists it misses rows the exact scan finds),
        // so the equality above is the codes' path over the budget, not the exact scan's.
        #expect(approximate > 0, "every nprobe 1 answer was the exact one: \(lines)")
    }

    @Test("Under the budget an ivf index gives back its least recently scanned lists, answering the same")
    func ivfListsStayUnderTheBudget() throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0133)
        func vector() -> String { Self.vector(&random) }
        // 2,000 rows in 16 lists: about 125 rows a list, 24 bytes a row (slot, 8-byte code,
        // scale, norm), 3 KB a list. A budget of 8 KiB holds two or three lists.
        let budget = 8192
        var script = Self.ivfTable(&random, rows: 2000, options: "indexed by ivf(nlist=16, nprobe=3)")
        func info(_ field: String) -> String { "select json_extract(vecsync_index_info('t'), '$.\(field)');\n" }
        // A retrain under the budget keeps no list: each is read when a query scans it.
        script += ".output /dev/null\nselect vecsync_memory_budget(\(budget));\n"
        script += "select vecsync_ivf_retrain('t');\n.output stdout\n" + info("lists_in_memory")
        let rounds = 16
        for round in 0..<rounds {
            script += "delete from t where rowid = \(round * 13 + 5);\n"
            script += "update t set embedding = '\(vector())' where rowid = \(round * 17 + 9);\n"
            script += "insert into t(rowid, embedding, cat) values (\(3000 + round), '\(vector())', 1);\n"
            let filter = round % 3 == 2 ? " and cat = 1" : ""
            let knn =
                "select group_concat(rowid || ':' || round(distance, 9), ' ') from (select rowid, distance "
                + "from t where embedding match '\(vector())' and k = 6\(filter));\n"
            script += "select vecsync_memory_budget(0);\n" + knn
            script += "select vecsync_memory_budget(\(budget));\n" + knn
            script += "select json_extract(vecsync_index_info('t'), '$.list_bytes') <= \(budget) + 4096;\n"
        }
        script += info("lists_given_back") + info("lists_in_memory") + info("listed_rows")
        let output = try Shell.run(script)
        #expect(output.stderr.isEmpty, "stderr: \(output.stderr)")
        let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(lines.count >= 1 + rounds * 5 + 3, "output: \(output.stdout)")
        #expect(lines[0] == "0", "lists in memory after a retrain under the budget: \(lines[0])")
        for round in 0..<rounds {
            let l = Array(lines[(1 + round * 5)..<(1 + round * 5 + 5)])
            #expect(l[0] == "0" && l[2] == "\(budget)", "round \(round): \(l)")
            #expect(!l[1].isEmpty && l[3] == l[1], "round \(round): under the budget \(l[3]), without \(l[1])")
            #expect(l[4] == "1", "round \(round): the lists held more than the budget and a list")
        }
        let tail = Array(lines[(1 + rounds * 5)...])
        #expect((Int(tail[0]) ?? 0) > 0, "no list was given back: \(tail)")
        #expect((Int(tail[1]) ?? 99) < 16, "every list stayed in memory: \(tail)")
        #expect(tail[2] == "2000", "rows listed: \(tail)")
    }

    @Test("A retrain under the budget writes its codes as parts of the lists' packs, answering as one without it")
    func leanRetrainWritesPackParts() throws {
        // 40,000 rows in 16 lists, blobs of at most 20,000 bytes (.limit length): about
        // 1,240 codes of 16 bytes a part, two or three parts a list. A retrain under the
        // budget (t) holds no list whole and writes each list's part as its block of rows
        // reaches it, parts numbered across lists; one without the budget (u) writes each
        // list's parts from memory, numbered within the list. Same centroids, same codes,
        // same answers.
        let rows = 40000
        var script = ""
        for table in ["t", "u"] {
            script += "create virtual table \(table) using vec0(embedding float[8] indexed by ivf(nlist=16, nprobe=1));\n"
        }
        // Each element cycles with a prime period of its own: no two rows alike.
        let vector = [1009, 1013, 1019, 1021, 1031, 1033, 1039, 1049].map { "((i * 7919 % \($0)) * 2.0 / \($0) - 1)" }
            .joined(separator: " || ',' || ")
        script += "with recursive n(i) as (select 1 union all select i + 1 from n where i < \(rows))\n"
            + "insert into t(rowid, embedding) select i, '[' || \(vector) || ']' from n;\n"
            + "insert into u(rowid, embedding) select rowid, embedding from t;\n"
            + ".output /dev/null\n.limit length 20000\nselect vecsync_ivf_retrain('u');\n"
            + "select vecsync_memory_budget(1048576);\nselect vecsync_ivf_retrain('t');\n"
            + "select vecsync_memory_budget(0);\n.output stdout\n"
        for table in ["t", "u"] {
            script += "select count(*), count(distinct list), sum(length(codes)), max(part), max(length(codes)) <= 20000"
                + " from \(table)_ivf_packs;\n"
            script += "select count(*), sum(typeof(code) = 'integer') from \(table)_ivf_assign;\n"
        }
        script += "select (select group_concat(hex(centroid)) from (select centroid from t_ivf_centroids order by list))"
            + " = (select group_concat(hex(centroid)) from (select centroid from u_ivf_centroids order by list));\n"
        for q in ["[0.5,0.5,0,0,0,0,0,0]", "[-1,0.25,0.5,-0.5,1,0,0,-0.75]", "[0,0,0,0,0,0,0,1]"] {
            for table in ["t", "u"] {
                script += "select group_concat(rowid || ':' || distance, ' ') from (select rowid, distance from \(table)"
                    + " where embedding match '\(q)' and k = 8 and nprobe = 2);\n"
            }
        }
        script += "delete from t where rowid % 10 = 0;\n"
        script += "select json_extract(vecsync_index_info('t'), '$.stale_pack_codes'), "
            + "json_extract(vecsync_index_info('t'), '$.codes_in_packs');\n"
        let output = try Shell.run(script)
        #expect(output.stderr.isEmpty, "stderr: \(output.stderr)")
        // The shell prints the limit .limit sets whatever .output says.
        let lines = output.stdout.split(separator: "\n").map(String.init)
            .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("length ") }
        try #require(lines.count == 12, "output: \(output.stdout)")
        let bytes = rows * (8 + 8)  // int8 codes: a byte a dimension, the norm and the scale
        let t = lines[0].split(separator: "|").map(String.init), u = lines[2].split(separator: "|").map(String.init)
        try #require(t.count == 5 && u.count == 5, "packs: \(lines[0]), \(lines[2])")
        #expect(t[0] == u[0] && (Int(t[0]) ?? 0) > 32, "parts: t \(lines[0]), u \(lines[2])")
        #expect(t[1] == "16" && u[1] == "16" && t[2] == "\(bytes)" && u[2] == "\(bytes)", "t \(lines[0]), u \(lines[2])")
        #expect(Int(t[3]) == (Int(t[0]) ?? 0) - 1 && (Int(u[3]) ?? 99) < 4, "part numbers: t \(lines[0]), u \(lines[2])")
        #expect(t[4] == "1" && u[4] == "1", "a part longer than the limit: \(lines[0]), \(lines[2])")
        #expect(lines[1] == "\(rows)|\(rows)" && lines[3] == lines[1], "rows: \(lines[1]), \(lines[3])")
        #expect(lines[4] == "1", "the two retrains trained other centroids")
        for i in stride(from: 5, to: 11, by: 2) {
            #expect(!lines[i].isEmpty && lines[i] == lines[i + 1], "t: \(lines[i]), u: \(lines[i + 1])")
        }
        #expect(lines[11] == "4000|36000", "after deleting a tenth: \(lines[11])")
    }

    @Test("Coded lists that keep their rowids answer without the copy as they answer with it")
    func ivfAnswersWithoutTheCopy() throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0134)
        func vector() -> String { Self.vector(&random) }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("vecsync-nocopy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("t.db").path
        let setUp = Self.ivfTable(
            &random, rows: 1500, options: "distance_metric=cosine indexed by ivf(nlist=12, nprobe=2)")
        let built = try Shell.run(setUp, databasePath: path)
        #expect(built.stderr.isEmpty, "stderr: \(built.stderr)")
        func knn(_ q: String) -> String {
            "select group_concat(rowid || ':' || round(distance, 9), ' ') from (select rowid, distance "
                + "from t where embedding match \(q) and k = 6);\n"
        }
        let info = "select json_extract(vecsync_index_info('t'), '$.queries_without_copy');\n"
        // A new process's first query, without a budget: no copy; its next query makes one.
        let first = "'\(vector())'"
        let opened = try Shell.run(knn(first) + info + knn(first) + info, databasePath: path)
        #expect(opened.stderr.isEmpty, "stderr: \(opened.stderr)")
        let o = opened.stdout.split(separator: "\n").map(String.init)
        try #require(o.count == 4, "output: \(opened.stdout)")
        #expect(!o[0].isEmpty && o[2] == o[0], "first query \(o[0]), with the copy \(o[2])")
        #expect(o[1] == "1" && o[3] == "1", "queries without the copy: \(o)")
        // Then through writes (a delete, an update of a vector and of a key, an insert), each
        // query over a budget (no copy: the lists' rowids, T_vectors' vectors) and without.
        let rounds = 10
        var script = ""
        for round in 0..<rounds {
            script += "delete from t where rowid = \(round * 7 + 1);\n"
            script += "update t set embedding = '\(vector())' where rowid = \(round * 11 + 2);\n"
            script += "update t set rowid = \(5000 + round) where rowid = \(round * 13 + 4);\n"
            script += "insert into t(rowid, embedding, cat) values (\(2000 + round), '\(vector())', 1);\n"
            let q = "'\(vector())'"
            script += ".output /dev/null\nselect vecsync_memory_budget(1);\n.output stdout\n" + knn(q)
            script += ".output /dev/null\nselect vecsync_memory_budget(0);\n.output stdout\n" + knn(q)
        }
        script += info
        let output = try Shell.run(script, databasePath: path)
        #expect(output.stderr.isEmpty, "stderr: \(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == rounds * 2 + 1, "output: \(output.stdout)")
        for round in 0..<rounds {
            let (without, with) = (lines[round * 2], lines[round * 2 + 1])
            #expect(!with.isEmpty && without == with, "round \(round): without the copy \(without), with \(with)")
        }
        // Every query over the budget, and the process's first without one (it would have
        // streamed the copy): the other nine re-scored from the copy.
        #expect(lines[rounds * 2] == "\(rounds + 1)", "queries without the copy: \(lines[rounds * 2])")
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
