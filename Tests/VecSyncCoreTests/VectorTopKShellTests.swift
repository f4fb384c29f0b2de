import Foundation
import Testing

/// vector_top_k in the real sqlite3 shell, libSQL's SQL unchanged, equals brute force.
@Suite("vector_top_k in the sqlite3 shell equals brute force")
struct VectorTopKShellTests {
    static let dimensions = 8

    @Test(arguments: [BruteForce.Metric.cosine, .l2], [true, false])
    func shellTopKEqualsBruteForceThroughChanges(metric: BruteForce.Metric, indexFirst: Bool) throws {
        var random = ExtensionRandom.fromEnvironment()
        let context = "\(metric), index \(indexFirst ? "before" : "after") the rows, seed \(random.seed)"
        let option = metric == .l2 ? ", 'metric=l2'" : ""
        // Text keys; rowid = i + 1 in insertion order; thread and NULL embeddings as the fixture.
        struct Doc {
            var id: String
            var rowid: Int64
            var vector: [Float]?
            var thread: String
        }
        var docs: [Doc] = []
        var sql = "create table docs(id text primary key, thread text, embedding F32_BLOB(\(Self.dimensions)));\n"
        let index = "create index docs_idx on docs(libsql_vector_idx(embedding\(option)));\n"
        if indexFirst { sql += index }
        for i in 0..<200 {
            let v: [Float]? =
                i % 13 == 4
                ? nil
                : (i % 20 == 19
                    ? docs.last(where: { $0.vector != nil })?.vector
                    : BruteForce.randomVector(Self.dimensions, using: &random))
            let doc = Doc(id: "m\(i)", rowid: Int64(i + 1), vector: v, thread: "t\(i % 5)")
            docs.append(doc)
            sql +=
                "insert into docs values ('\(doc.id)', '\(doc.thread)', \(v.map { "vector32('\(BruteForce.json($0))')" } ?? "NULL"));\n"
        }
        if !indexFirst { sql += index }

        func reference() -> BruteForce {
            BruteForce(
                metric: metric,
                rows: docs.compactMap { d in
                    d.vector.map { BruteForce.Row(key: "\(d.rowid)", rowid: d.rowid, vector: $0) }
                })
        }
        var checks: [(name: String, expected: [BruteForce.Hit], all: [BruteForce.Hit])] = []
        func addQueries(_ tag: String) {
            let ref = reference()
            for j in 0..<4 {
                let q =
                    Bool.random(using: &random)
                    ? (docs.compactMap(\.vector).randomElement(using: &random) ?? [])
                    : BruteForce.randomVector(Self.dimensions, using: &random)
                let k = Int.random(in: 1...15, using: &random)
                let all = ref.nearest(to: q)
                checks.append(("\(tag)\(j)", Array(all.prefix(k)), all))
                sql +=
                    "select '#\(tag)\(j)';\nselect id, distance from vector_top_k('docs_idx', vector32('\(BruteForce.json(q))'), \(k));\n"
                // Filters after the join: the rows of the k nearest that pass.
                let cut =
                    all.count > k && abs(all[k].distance - all[k - 1].distance) <= 1e-6 * max(1, abs(all[k].distance))
                if !cut {
                    let byRowid = Dictionary(uniqueKeysWithValues: docs.map { ("\($0.rowid)", $0) })
                    let joined = all.prefix(k).filter { byRowid[$0.key]?.thread == "t1" }
                        .map { BruteForce.Hit(key: byRowid[$0.key]?.id ?? "", distance: $0.distance) }
                    checks.append(
                        (
                            "\(tag)\(j)join", joined,
                            all.map { BruteForce.Hit(key: byRowid[$0.key]?.id ?? "", distance: $0.distance) }
                        ))
                    sql += """
                        select '#\(tag)\(j)join';
                        select m.id, v.distance from vector_top_k('docs_idx', vector32('\(BruteForce.json(q))'), \(k)) as v
                          join docs m on m.rowid = v.id where m.thread = 't1' order by v.distance, v.id;

                        """
                }
            }
        }
        addQueries("initial")

        // Updates (to a new vector, to NULL), deletes, INSERT OR REPLACE, and a ROLLBACK.
        var next: Int64 = 201
        for n in 0..<25 {
            let j = Int.random(in: docs.indices, using: &random)
            let v: [Float]? = n % 5 == 0 ? nil : BruteForce.randomVector(Self.dimensions, using: &random)
            sql +=
                "update docs set embedding = \(v.map { "vector32('\(BruteForce.json($0))')" } ?? "NULL") where id = '\(docs[j].id)';\n"
            docs[j].vector = v
        }
        for _ in 0..<25 {
            // m199 holds the largest rowid and stays, so new rows get 201, 202, ...
            let j = Int.random(in: docs.indices.dropLast(), using: &random)
            sql += "delete from docs where id = '\(docs[j].id)';\n"
            docs.remove(at: j)
        }
        for _ in 0..<5 {
            let j = Int.random(in: docs.indices, using: &random)
            let v = BruteForce.randomVector(Self.dimensions, using: &random)
            sql += "insert or replace into docs values ('\(docs[j].id)', 't1', vector32('\(BruteForce.json(v))'));\n"
            docs[j].vector = v
            docs[j].thread = "t1"
            docs[j].rowid = next  // the replaced row is a new row with a new rowid
            next += 1
        }
        sql += "begin; delete from docs where thread = 't2'; update docs set embedding = NULL; rollback;\n"
        addQueries("changed")

        let run = try Shell.run(sql).run
        #expect(run.errors.isEmpty, "\(context): \(run.errors)")
        let sections = shellSections(run.rows)
        for check in checks {
            BruteForce.expectMatches(
                BruteForce.hits(fromShellRows: sections[check.name] ?? []), check.expected, all: check.all,
                context: "[sqlite3 shell] \(context), \(check.name)")
        }
    }
}
