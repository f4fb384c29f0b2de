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

    /// A case that damages ``table`` with `damage`, then runs `statement` (``knn`` unless
    /// given): one error, that the storage is damaged, naming `detail`.
    static func damaged(
        _ title: String, _ damage: String, then statement: String = Vec0DamagedStorageTests.knn,
        naming detail: String...
    ) -> SQLCase {
        SQLCase(title, table + damage + "\n" + statement, error: ["storage is damaged"] + detail)
    }

    static let cases: [SQLCase] = [
        damaged(
            "a vector blob cut to one byte is damage, named",
            "update v_vectors set vectors = x'00';",
            naming: "vector blob 0 of v_vectors"),
        damaged(
            "a missing vectors table is damage, named",
            "drop table v_vectors;",
            naming: "v_vectors is missing"),
        damaged(
            "a missing vectors table stops an insert too",
            "drop table v_vectors;",
            then: "insert into v(id, embedding) values ('z', '[1,1,1,1]');",
            naming: "v_vectors"),
        damaged(
            "a negative slot stops a KNN query",
            "update v_rows set slot = -1 where id = 'a';",
            naming: "slot -1"),
        damaged(
            "a negative slot stops an update of the vector",
            "update v_rows set slot = -1 where id = 'a';",
            then: "update v set embedding = '[1,1,1,1]' where id = 'a';",
            naming: "slot -1"),
        damaged(
            "a negative slot stops a delete",
            "update v_rows set slot = -1 where id = 'a';",
            then: "delete from v where id = 'a';",
            naming: "slot -1"),
        damaged(
            "a negative slot stops a point lookup of the vector",
            "update v_rows set slot = -1 where id = 'a';",
            then: "select vector_extract(embedding) from v where id = 'a';",
            naming: "slot -1"),
        damaged(
            "a slot past next_slot stops a point lookup",
            "update v_rows set slot = 1000 where id = 'a';",
            then: "select vector_extract(embedding) from v where id = 'a';",
            naming: "slot 1000"),
        damaged(
            "a negative next_slot stops an insert",
            "update v_info set value = -5 where key = 'next_slot';",
            then: "insert into v(id, embedding) values ('z', '[1,1,1,1]');",
            naming: "next_slot is -5"),
        damaged(
            "a huge next_slot allocates nothing and is damage",
            "update v_info set value = 34359738368 where key = 'next_slot';",
            naming: "next_slot 34359738368"),
        damaged(
            "a blob numbered INT64_MAX is damage",
            "update v_vectors set chunk_id = 9223372036854775807;",
            naming: "9223372036854775807"),
        damaged(
            "a blob numbered INT64_MAX stops a read of the vector",
            "update v_vectors set chunk_id = 9223372036854775807;",
            then: "select vector_extract(embedding) from v where id = 'b';",
            naming: "vector blob 0"),
        damaged(
            "a missing vector blob is not read as zeros",
            "delete from v_vectors;",
            naming: "needs vector blobs 0 to 0", "v_vectors has none"),
        damaged(
            "a freed slot out of range stops an insert",
            "insert into v_free values (-3);",
            then: "insert into v(id, embedding) values ('z', '[1,1,1,1]');",
            naming: "slot -3"),
        damaged(
            "two rows in one slot are damage",
            "update v_rows set slot = 0;",
            naming: "has slot 0"),
        SQLCase(
            "k = INT64_MAX returns every row once",
            table + "select id from v where embedding match '[1,0,0,0]' and k = 9223372036854775807;",
            rows: ["a", "b", "c"]),
        SQLCase(
            "k = INT64_MAX - 8 returns every row once",
            table + "select id from v where embedding match '[1,0,0,0]' and k = 9223372036854775799;",
            rows: ["a", "b", "c"]),
        SQLCase(
            "an all-zero cosine query is refused by the batch function as by MATCH",
            "create virtual table c using vec0(embedding float[2] distance_metric=cosine);\ninsert into c(rowid, embedding) values (1, '[1,0]');\n"
                + "select * from vecsync_knn_batch('c', x'0000000000000000', 1);",
            error: ["vecsync_knn_batch", "query 0", "all zeros"]),
        SQLCase(
            "a NaN query is refused by the batch function, with the query named",
            "create virtual table c using vec0(embedding float[2]);\ninsert into c(rowid, embedding) values (1, '[1,0]');\n"
                + "select * from vecsync_knn_batch('c', x'0000803f000000000000c07f00000000', 1);",
            error: ["vecsync_knn_batch", "query 1", "NaN"]),
        SQLCase(
            "damaged storage reaches the batch function's caller",
            "create virtual table c using vec0(embedding float[2]);\ninsert into c(rowid, embedding) values (1, '[1,0]');\n"
                + "update c_rows set slot = 7;\nselect * from vecsync_knn_batch('c', x'0000803f00000000', 1);",
            error: ["vecsync_knn_batch", "storage is damaged", "slot 7"]),
        SQLCase(
            "negative rowids are rows like any other",
            "create virtual table n using vec0(embedding float[2]);\ninsert into n(rowid, embedding) values (-1, '[1,0]'), (-7, '[0,1]');\n"
                + "update n set embedding = '[1,1]' where rowid = -1;\ndelete from n where rowid = -7;\n"
                + "select rowid, vector_extract(embedding) from n;",
            rows: ["-1|[1,1]"]),
    ]

    @Test("Damaged storage is one clear error, never a crash", arguments: SQLPath.allCases, cases)
    func damagedStorageIsAnError(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }

    /// sqlite-vec 0.1.x keeps T_info, T_chunks, T_rowids and T_vector_chunksNN. A file
    /// made by it is recognised and migrated by the first statement; one whose rows point
    /// at nothing is an error that says so; DROP TABLE removes all of it.
    static let sqliteVecFile = """
        create table items_info(key text primary key, value any);
        create table items_chunks(chunk_id integer primary key autoincrement, size integer not null, validity blob not null, rowids blob not null);
        create table items_rowids(rowid integer primary key autoincrement, id, chunk_id integer, chunk_offset integer);
        create table items_vector_chunks00(rowid integer primary key, vectors blob not null);
        pragma writable_schema = on;
        insert into sqlite_schema values ('table', 'items', 'items', 0, 'CREATE VIRTUAL TABLE items USING vec0(embedding float[4])');

        """

    @Test(
        "A database written by sqlite-vec is migrated by its first statement, or is an error that says why",
        arguments: SQLPath.allCases)
    func sqliteVecFileIsRecognised(path: SQLPath) throws {
        try path.verify(
            onFileAfter: Self.sqliteVecFile,
            [
                SQLCase(
                    "a KNN query on an empty sqlite-vec table, then an insert",
                    """
                    select rowid from items where embedding match '[1,2,3,4]' and k = 1;
                    insert into items(rowid, embedding) values (1, '[1,2,3,4]');
                    select rowid from items where embedding match '[1,2,3,4]' and k = 1;
                    select count(*) from sqlite_schema where name = 'items_rowids';
                    """,
                    rows: ["1", "0"]),
                Self.dropTableRemovesItAll("DROP TABLE removes the table"),
            ])
        try path.verify(
            onFileAfter: Self.sqliteVecFile
                + "insert into items_rowids(rowid, id, chunk_id, chunk_offset) values (1, NULL, 5, 0);\n",
            [
                SQLCase(
                    "a sqlite-vec row in a chunk that is not there",
                    "select rowid from items where embedding match '[1,2,3,4]' and k = 1;",
                    error: ["written by sqlite-vec", "cannot be read", "items_vector_chunks00 has no row 5"]),
                Self.dropTableRemovesItAll("DROP TABLE removes sqlite-vec's tables too"),
            ])
    }

    /// `drop table items`, after which no table of its name is left.
    static func dropTableRemovesItAll(_ title: String) -> SQLCase {
        SQLCase(title, "drop table items;\nselect name from sqlite_schema where name like 'items%';", rows: [])
    }

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
        let again = ".load " + (try Shell.extensionPath()).replacingOccurrences(of: ".so", with: "")
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
