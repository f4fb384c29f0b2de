import Foundation
import Testing

/// A vec0 table whose shadow tables were damaged, a database written by sqlite-vec, an
/// interrupted query, a second `.load`: each ends in one clear error (or the right answer),
/// never a crash of the host. Every case here once crashed the sqlite3 shell or answered
/// wrongly without an error.
@Suite("vec0 damaged storage")
struct Vec0DamagedStorageTests {
    static let table = """
        create virtual table v using vec0(id text primary key, embedding float[4], album text);
        insert into v(id, embedding, album) values ('a', '[1,0,0,0]', 'x'), ('b', '[0,1,0,0]', 'y'), ('c', '[0,0,1,0]', 'x');

        """
    static let knn = "select id from v where embedding match '[1,0,0,0]' and k = 2;"

    @Test(
        "T_info that contradicts the declaration is damage, seen by the next connection",
        arguments: SQLPath.allCases)
    func infoContradictingTheDeclaration(path: SQLPath) throws {
        try path.verify(
            onFileAfter: Self.table + "update v_info set value = 8 where key = 'dimensions';",
            [SQLCase("dimensions 8 for a float[4] column", Self.knn, error: ["storage is damaged", "'dimensions'"])])
    }

    @Test("Loading the extension twice on one connection, then dropping a table")
    func loadingTwiceIsHarmless() throws {
        let again = ".load " + Shell.loadArgument(try Shell.extensionPath())
        let output = try Shell.run(Self.table + again + "\n" + Self.knn + "\ndrop table v;\nselect 'dropped';\n")
        #expect(output.stdout == "a\nb\ndropped\n", "stdout: \(output.stdout)")
        #expect(output.stderr == "", "stderr: \(output.stderr)")
    }

    @Test("An interrupted KNN query is SQLITE_INTERRUPT, and the next query answers")
    func interruptedQueryIsInterrupt() throws {
        var script = "create virtual table big using vec0(embedding float[8]);\nbegin;\n"
        var random = ExtensionRandom(defaultSeed: 0x5eed_0010)
        for row in 1...2_000 {
            let values = (0..<8).map { _ in String(format: "%.3f", Double.random(in: 0..<1, using: &random)) }
            script += "insert into big(rowid, embedding) values (\(row), '[\(values.joined(separator: ","))]');\n"
        }
        script += "commit;\n.progress 100 --limit 1\n"
        script += "select count(*) from (select rowid from big where embedding match '[1,0,0,0,0,0,0,0]' and k = 5);\n"
        script += ".progress 0\n"
        script += "select count(*) from (select rowid from big where embedding match '[1,0,0,0,0,0,0,0]' and k = 5);\n"
        let output = try Shell.run(script)
        #expect(output.stderr.contains("interrupted"), "stderr: \(output.stderr)")
        #expect(output.stdout.hasSuffix("5\n"), "stdout: \(output.stdout)")
    }

    @Test(
        "A KNN filter on the 64th column filters that column, not the rowid",
        arguments: SQLPath.allCases)
    func filterOnTheLastColumn(path: SQLPath) {
        let columns = (0..<63).map { "m\($0) integer" }.joined(separator: ", ")
        SQLCase(
            "filter on m62, the table's 64th column",
            """
            create virtual table w using vec0(embedding float[2], \(columns));
            insert into w(rowid, embedding, m62) values (1, '[1,0]', 5), (2, '[0,1]', 6);
            select rowid from w where embedding match '[1,0]' and k = 2 and m62 = 6;
            select rowid from w where embedding match '[1,0]' and k = 2 and m0 is null and m62 in (5, 6);
            """,
            rows: ["2", "1", "2"]
        ).verify(path)
    }
}
