import Testing

extension Shell {
    /// KNN queries of `t` for each query vector (an SQL expression) with each of `filters`
    /// (" and cat = 1"), each answering its rows as one line `rowid:distance rowid:distance …`.
    static func knnLines(
        column: String, queries: [String], k: Int, filters: [String], distance: String = "distance"
    ) -> [String] {
        queries.flatMap { q in
            filters.map { filter in
                "select group_concat(rowid || ':' || \(distance), ' ') from "
                    + "(select rowid, distance from t where \(column) match \(q) and k = \(k)\(filter));"
            }
        }
    }

    /// Runs `setUp`, then each of `queries` twice in one `sqlite3` session: with no memory
    /// budget (the table's copy in memory) and over a budget of `budget` bytes (its searches
    /// read the file). Records an issue for a query whose two answers differ, that was not
    /// streamed over the budget, or, with `requireRows`, that answered nothing. The budget is
    /// process-wide: a shell session is a process of its own, the test process keeps its own.
    static func expectStreamedAnswersMatch(
        setUp: String, queries: [String], budget: Int, table: String = "t", requireRows: Bool, context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var script = setUp
        for query in queries {
            script += "select vecsync_memory_budget(0);\n" + query + "\n"
            script += "select vecsync_memory_budget(\(budget));\n" + query + "\n"
            script += "select json_extract(vecsync_cache_info('\(table)'), '$.streamed');\n"
        }
        let output = try run(script)
        #expect(output.stderr.isEmpty, "stderr: \(output.stderr)", sourceLocation: sourceLocation)
        let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Per query: "0", the answer in memory, the budget, the streamed answer, "1" (streamed).
        #expect(lines.count >= queries.count * 5, "output: \(output.stdout)", sourceLocation: sourceLocation)
        for i in 0..<queries.count where lines.count >= (i + 1) * 5 {
            let inMemory = lines[i * 5 + 1]
            let streamed = lines[i * 5 + 3]
            if requireRows {
                #expect(!inMemory.isEmpty, "\(context) query \(i): no rows", sourceLocation: sourceLocation)
            }
            #expect(
                streamed == inMemory, "\(context) query \(i): streamed \(streamed), in memory \(inMemory)",
                sourceLocation: sourceLocation)
            #expect(lines[i * 5 + 4] == "1", "\(context) query \(i) was not streamed", sourceLocation: sourceLocation)
        }
    }
}
