import Testing

/// Bad input to vec0 is one clear error, in-process and in the shell: no
/// row, no crash, no partial write. Odd table and column names work end to end.
@Suite("vec0 bad input")
struct Vec0BadInputTests {
    static let table = """
        create virtual table t using vec0(id text primary key, embedding float[4] distance_metric=cosine, cat text);
        insert into t values ('a', '[1, 0, 0, 0]', 'x'), ('b', '[0, 1, 0, 0]', 'y');

        """

    @Test(arguments: SQLPath.allCases)
    func aFailedMultiRowInsertLeavesTheTableAsItWas(path: SQLPath) throws {
        let run = try path.run(
            Self.table + """
                insert into t values ('c', '[0, 0, 1, 0]', 'x'), ('d', '[0, 0, 1]', 'x');
                insert into t values ('c', '[0, 0, 1, 0]', 'x'), ('a', '[0, 0, 0, 1]', 'x');
                select id from t order by id;
                select id from t where embedding match '[0, 0, 1, 0]' and k = 10 order by distance;
                """)
        #expect(run.rows == ["a", "b", "a", "b"], "\(run)")
        #expect(run.errors.count == 2, "\(run)")
    }

    @Test(arguments: SQLPath.allCases)
    func aMatchWithoutKOrLimitDependsOnTheSQLiteVersion(path: SQLPath) throws {
        let version = try path.run("select sqlite_version();").rows.first ?? ""
        let parts = version.split(separator: ".").compactMap { Int($0) }
        let atLeast341 = parts.count >= 2 && (parts[0], parts[1]) >= (3, 41)
        let sql = Self.table + "select id from t where embedding match '[1, 1, 0, 0.5]';"
        if atLeast341 {
            SQLCase(
                "SQLite \(version): MATCH without k or LIMIT is refused", sql,
                error: ["vec0 \"t\"", "needs \"k = ?\" or LIMIT"]
            ).verify(path)
        } else {
            // Before 3.41 SQLite does not pass LIMIT to the table: every row, nearest first.
            SQLCase(
                "SQLite \(version): MATCH without k returns every row nearest first", sql,
                rows: ["a", "b"]
            ).verify(path)
        }
    }

    @Test(arguments: SQLPath.allCases)
    func tableAndColumnNamesThatNeedQuotingWorkEndToEnd(path: SQLPath) throws {
        let run = try path.run(
            """
            create virtual table "my ""odd"" table" using vec0("select" text primary key, "the vector" float[4], "group" text, "it's" integer);
            insert into "my ""odd"" table"("select", "the vector", "group", "it's") values
              ('one', '[1, 0, 0, 0]', 'g', 1), ('two', '[0, 1, 0, 0]', 'g', 2), ('three', '[1, 1, 0, 0]', 'h', 3);
            select "select", distance from "my ""odd"" table" where "the vector" match '[1, 0, 0, 0]' and k = 2 order by distance;
            select "select" from "my ""odd"" table" where "the vector" match '[1, 0, 0, 0]' and k = 5 and "group" = 'g' and "it's" > 1;
            update "my ""odd"" table" set "the vector" = '[0, 0, 1, 0]' where "select" = 'one';
            delete from "my ""odd"" table" where "select" = 'two';
            select "select" from "my ""odd"" table" where "the vector" match '[0, 0, 1, 0]' order by distance limit 5;
            select query_index, id from vecsync_knn_batch('my "odd" table', vector32('[0, 0, 1, 0]'), 1);
            select count(*) from sqlite_master where name like 'my "odd" table%';
            drop table "my ""odd"" table";
            select count(*) from sqlite_master;
            """)
        #expect(run.errors.isEmpty, "\(run)")
        // The table and its five shadow tables (info, changes, vectors, free, rows).
        #expect(run.rows == ["one|0.0", "three|1.0", "two", "one", "three", "0|one", "6", "0"], "\(run)")
    }
}
