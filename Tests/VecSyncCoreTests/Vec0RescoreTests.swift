import Foundation
import GRDB
import Testing
import VecSyncCore
import VecSyncTestSupport

/// `indexed by rescore(quantizer=int8|bit, oversample=N)`: the in-memory copy keeps codes,
/// the best k·oversample by code are re-scored from the stored float32 vectors.
@Suite("vec0 quantized scans with exact re-scoring")
struct Vec0RescoreTests {
    static let quantizers = ["int8", "bit"]

    /// A random vector of `dims` elements as JSON text.
    static func vector(_ dims: Int, _ random: inout SeededRandom) -> String {
        "["
            + (0..<dims).map { _ in String(format: "%.4f", Double.random(in: -1...1, using: &random)) }
            .joined(separator: ",") + "]"
    }

    @Test(
        "When every row is a candidate, answers equal the exact table's, through writes",
        arguments: quantizers)
    func allCandidatesMatchExact(quantizer: String) throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0140)
        // 300 rows, k = 7, oversample 64: 448 candidates, so every live row is re-scored and
        // the answer must be the exact one, distances included.
        let declaration = "embedding float[8] distance_metric=cosine, cat integer, chunk_size=16"
        var script = """
            create virtual table q using vec0(\(declaration.replacingOccurrences(of: "cosine,", with: "cosine indexed by rescore(quantizer=\(quantizer), oversample=64),")));
            create virtual table x using vec0(\(declaration));
            begin;

            """
        func both(_ sql: String) {
            script += sql.replacingOccurrences(of: "TABLE", with: "q") + "\n"
            script += sql.replacingOccurrences(of: "TABLE", with: "x") + "\n"
        }
        for row in 1...300 {
            both("insert into TABLE(rowid, embedding, cat) values (\(row), '\(Self.vector(8, &random))', \(row % 3));")
        }
        script += "commit;\n"
        var queries: [String] = []
        for round in 0..<10 {
            both("delete from TABLE where rowid = \(round * 7 + 1);")
            both("update TABLE set embedding = '\(Self.vector(8, &random))' where rowid = \(round * 11 + 2);")
            both("insert into TABLE(rowid, embedding, cat) values (\(1000 + round), '\(Self.vector(8, &random))', 1);")
            if round % 3 == 0 {
                // A rolled-back write leaves no trace in either.
                script += "begin;\n"
                both("update TABLE set embedding = '\(Self.vector(8, &random))' where rowid = \(round + 100);")
                both("delete from TABLE where rowid = \(round + 150);")
                script += "rollback;\n"
            }
            let query = Self.vector(8, &random)
            for filter in ["", " and cat = 1", " and distance > 0.5"] {
                queries.append(query + filter)
            }
        }
        for (i, query) in queries.enumerated() {
            let parts = query.split(separator: "]", maxSplits: 1).map(String.init)
            let vector = parts[0] + "]"
            let filter = parts.count > 1 ? parts[1] : ""
            for table in ["q", "x"] {
                script +=
                    "select '\(table)\(i)', group_concat(rowid || ':' || round(distance, 9), ' ') from "
                    + "(select rowid, distance from \(table) where embedding match '\(vector)' and k = 7\(filter));\n"
            }
        }
        let output = try Shell.run(script)
        #expect(output.stderr.isEmpty, "stderr: \(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == queries.count * 2, "output: \(output.stdout)")
        for i in stride(from: 0, to: lines.count - 1, by: 2) {
            let quantized = lines[i].drop { $0 != "|" }
            let exact = lines[i + 1].drop { $0 != "|" }
            #expect(quantized == exact, "\(quantizer) query \(i / 2) (seed \(random.seed)): \(quantized) vs \(exact)")
        }
    }

    @Test("At the default oversample, clustered vectors keep their neighbours", arguments: quantizers)
    func recallAtDefaultOversample(quantizer: String) throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0141)
        // 2,000 rows around 20 centres in 32 dimensions; 20 queries near the centres.
        let dims = 32
        let centres = (0..<20).map { _ in (0..<dims).map { _ in Double.random(in: -1...1, using: &random) } }
        func near(_ centre: [Double]) -> String {
            "["
                + centre.map { String(format: "%.4f", $0 + Double.random(in: -0.4...0.4, using: &random)) }
                .joined(separator: ",") + "]"
        }
        var script = """
            create virtual table q using vec0(embedding float[\(dims)] distance_metric=cosine indexed by rescore(quantizer=\(quantizer)));
            create virtual table x using vec0(embedding float[\(dims)] distance_metric=cosine);
            begin;

            """
        for row in 1...2000 {
            let v = near(centres[row % centres.count])
            script += "insert into q(rowid, embedding) values (\(row), '\(v)');\n"
            script += "insert into x(rowid, embedding) values (\(row), '\(v)');\n"
        }
        script += "commit;\n"
        for i in 0..<20 {
            let v = near(centres[i])
            for table in ["q", "x"] {
                script +=
                    "select group_concat(rowid, ' ') from (select rowid from \(table) where embedding match '\(v)' and k = 10);\n"
            }
        }
        let output = try Shell.run(script)
        #expect(output.stderr.isEmpty, "stderr: \(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map { Set($0.split(separator: " ")) }
        #expect(lines.count == 40)
        var found = 0
        for i in stride(from: 0, to: lines.count - 1, by: 2) {
            found += lines[i].intersection(lines[i + 1]).count
        }
        let recall = Double(found) / 200
        // Random candidates would give about 80/2000 = 0.04.
        let floor = quantizer == "int8" ? 0.97 : 0.85
        #expect(recall >= floor, "\(quantizer) recall@10 \(recall) (seed \(random.seed))")
    }

    @Test(
        "A new process loads the codes kept in T_codes, not the vectors, and answers the same",
        arguments: quantizers)
    func newProcessLoadsStoredCodes(quantizer: String) throws {
        var random = SeededRandom(defaultSeed: 0x5eed_0143)
        try withTemporaryFile("codes", named: "codes.db") { file in
            var script = """
                create virtual table q using vec0(embedding float[8] indexed by rescore(quantizer=\(quantizer), oversample=64), chunk_size=16);
                begin;

                """
            for row in 1...200 {
                script += "insert into q(rowid, embedding) values (\(row), '\(Self.vector(8, &random))');\n"
            }
            script +=
                "commit;\ndelete from q where rowid % 7 = 0;\nupdate q set embedding = '\(Self.vector(8, &random))' where rowid = 5;\n"
            let written = try Shell.run(script, databasePath: file)
            #expect(written.stderr.isEmpty, "stderr: \(written.stderr)")
            // A new process: its copy comes from T_codes. Every live row is a candidate (k x 64 >
            // 200), so the answer is the exact one, checked against brute force over the rows.
            let query = Self.vector(8, &random)
            let output = try Shell.run(
                """
                select count(*) from q_codes;
                select group_concat(rowid, ' ') from (select rowid from q where embedding match '\(query)' and k = 5);
                select group_concat(rowid, ' ') from (select rowid from q order by vec_distance_l2(embedding, '\(query)'), rowid limit 5);
                select json_extract(vecsync_cache_info('q'), '$.loaded');
                """, databasePath: file)
            let lines = output.stdout.split(separator: "\n").map(String.init)
            #expect(output.stderr.isEmpty, "stderr: \(output.stderr)")
            #expect(lines.count == 4 && lines[0] == "13", "200 slots in blobs of 16: \(lines)")
            if lines.count == 4 {
                #expect(lines[1] == lines[2], "\(quantizer) (seed \(random.seed)): \(lines[1]) vs exact \(lines[2])")
                #expect(lines[3] == "1")
            }
            // A blob of codes gone is damage, named, not a wrong answer.
            let damaged = try Shell.run(
                """
                delete from q_codes where chunk_id = 3;
                select rowid from q where embedding match '\(query)' and k = 1;
                """, databasePath: file)
            #expect(
                damaged.stderr.contains("storage is damaged") && damaged.stderr.contains("q_codes"),
                "stderr: \(damaged.stderr)")
        }
    }

    @Test("The copy keeps codes: 4x and 32x smaller per row than float32")
    func codesAreSmaller() throws {
        let output = try Shell.run(
            """
            create virtual table f using vec0(e float[768]);
            create virtual table i using vec0(e float[768] indexed by rescore(quantizer=int8));
            create virtual table b using vec0(e float[768] indexed by rescore(quantizer=bit, oversample=16));
            select json_extract(vecsync_cache_info('f'), '$.bytes_per_row'),
                   json_extract(vecsync_cache_info('i'), '$.bytes_per_row'),
                   json_extract(vecsync_cache_info('b'), '$.bytes_per_row'),
                   json_extract(vecsync_cache_info('b'), '$.quantizer');
            """)
        #expect(output.stderr.isEmpty, "stderr: \(output.stderr)")
        // rowid, norm and liveness (13 bytes) plus 3072 bytes of floats, 768 + 4 of int8
        // codes and scale, or 96 of bits.
        #expect(output.stdout == "3085|785|109|bit\n")
    }

    @Test("Declarations sqlite-vec accepts are read; others are refused naming the problem")
    func declarations() throws {
        let output = try Shell.run(
            """
            create virtual table a using vec0(id integer primary key, e float[16] distance_metric=l2 indexed by rescore(quantizer=bit, oversample=4), +note text);
            create virtual table b using vec0(e float[16] indexed by rescore( quantizer = int8 ));
            insert into a(id, e, note) values (1, '[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]', 'x');
            select id, distance, note from a where e match '[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]' and k = 1;
            create virtual table c using vec0(e float[16] indexed by rescore(quantizer=int4));
            create virtual table c using vec0(e float[16] indexed by rescore(oversample=0, quantizer=int8));
            create virtual table c using vec0(e float[16] indexed by hnsw());
            create virtual table c using vec0(e float[16] indexed by rescore(oversample=8));
            create virtual table c using vec0(e float[16] indexed rescore(quantizer=bit));
            create virtual table c using vec0(e float[16] indexed by rescore(quantizer=bit, colour=red));
            """)
        #expect(output.stdout == "1|0.0|x\n", "stdout: \(output.stdout)")
        for message in [
            "unknown quantizer \"int4\"", "oversample must be an integer from 1 to 1024",
            "unknown index \"hnsw\"", "rescore needs a quantizer",
            "expected \"indexed by rescore(", "unknown rescore option \"colour\"",
        ] {
            #expect(output.stderr.contains(message), "missing \(message) in \(output.stderr)")
        }
    }

    @Test(
        "A reader on another connection sees the writer's committed rows in its codes",
        arguments: quantizers)
    func sharedAcrossConnections(quantizer: String) throws {
        try withTemporaryFile("rescore", named: "rescore.db") { path in
            var random = SeededRandom(defaultSeed: 0x5eed_0142)
            let writer = try DatabaseQueue(path: path, configuration: .vecSync())
            try writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode=WAL")
                try db.execute(
                    sql: """
                        CREATE VIRTUAL TABLE v USING vec0(embedding float[8] indexed by rescore(quantizer=\(quantizer), oversample=200), chunk_size=64)
                        """)
            }
            try writer.write { db in
                for row in 1...150 {
                    let values = (0..<8).map { _ in Float.random(in: -1...1, using: &random) }
                    try db.execute(
                        sql: "INSERT INTO v(rowid, embedding) VALUES (?, ?)", arguments: [row, Vector(values)])
                }
            }
            let reader = try DatabaseQueue(path: path, configuration: .vecSync())
            let target = Vector((0..<8).map { _ in Float.random(in: -1...1, using: &random) })
            let nearestSQL = "SELECT rowid FROM v WHERE embedding MATCH ? AND k = 1"
            let before = try reader.read { try Int.fetchOne($0, sql: nearestSQL, arguments: [target]) }
            // The writer stores the query itself: the reader's next search must find it at once.
            try writer.write { db in
                try db.execute(sql: "INSERT INTO v(rowid, embedding) VALUES (500, ?)", arguments: [target])
            }
            let after = try reader.read { try Int.fetchOne($0, sql: nearestSQL, arguments: [target]) }
            #expect(before != 500)
            #expect(after == 500, "seed \(random.seed)")
            try writer.write { db in try db.execute(sql: "DELETE FROM v WHERE rowid = 500") }
            let again = try reader.read { try Int.fetchOne($0, sql: nearestSQL, arguments: [target]) }
            #expect(again == before)
        }
    }
}
