import Foundation
import Testing

/// Bad input to vec0 is one clear error, in-process and in the shell: no
/// row, no crash, no partial write. Odd table and column names work end to end.
@Suite("vec0 bad input")
struct Vec0BadInputTests {
    static let tableWithAux = """
        create virtual table a using vec0(embedding float[2], +caption text);
        insert into a(rowid, embedding, caption) values (1, '[1, 0]', 'c1');

        """
    static let table = """
        create virtual table t using vec0(id text primary key, embedding float[4] distance_metric=cosine, cat text);
        insert into t values ('a', '[1, 0, 0, 0]', 'x'), ('b', '[0, 1, 0, 0]', 'y');

        """

    static let vec0Cases: [SQLCase] = [
        SQLCase(
            "a query of the wrong dimension names both dimensions",
            table + "select id from t where embedding match '[1, 0, 0]' and k = 1;",
            error: ["vec0 \"t\"", "query vector has 3 dimensions", "\"embedding\" has 4"]),
        SQLCase(
            "an insert of the wrong dimension names both dimensions",
            table + "insert into t values ('c', '[1, 0, 0, 0, 0]', 'x');",
            error: ["inserted vector has 5 dimensions", "\"embedding\" has 4"]),
        SQLCase(
            "an update to the wrong dimension names both dimensions",
            table + "update t set embedding = '[1, 2]' where id = 'a';",
            error: ["has 2 dimensions", "\"embedding\" has 4"]),
        SQLCase(
            "an unknown metric is refused and named",
            "create virtual table u using vec0(embedding float[4] distance_metric=hamming);",
            error: ["unknown distance_metric \"hamming\"", "cosine, l2, dot or l1"]),
        SQLCase(
            "an unknown column option is refused and named",
            "create virtual table u using vec0(embedding float[4] distance=l2);",
            error: ["column \"embedding\"", "unknown option \"distance\""]),
        SQLCase(
            "an unknown table option is refused and named",
            "create virtual table u using vec0(embedding float[4], shards=4);",
            error: ["unknown table option \"shards\""]),
        SQLCase(
            "LIKE on a metadata column inside a KNN query is refused, not post-filtered",
            table + "select id from t where embedding match '[1, 0, 0, 0]' and k = 2 and cat like 'x%';",
            error: ["LIKE, GLOB", "not supported in a KNN query"]),
        SQLCase(
            "a filter on an auxiliary column inside a KNN query is refused, naming the column",
            tableWithAux + "select rowid from a where embedding match '[1, 0]' and k = 1 and caption = 'c1';",
            error: ["auxiliary column \"caption\" cannot be filtered"]),
        SQLCase(
            "ORDER BY distance DESC in a KNN query without k is refused (LIMIT would pick the nearest)",
            table + "select id from t where embedding match '[1, 0, 0, 0]' order by distance desc limit 2;",
            error: ["without \"k = ?\"", "ordered by distance ascending only"]),
        SQLCase(
            "a value for the hidden distance column is refused",
            table + "insert into t(id, embedding, distance) values ('c', '[0, 0, 1, 0]', 0.5);",
            error: ["hidden column \"distance\" cannot be written"]),
        SQLCase(
            "a value for the hidden k column is refused",
            table + "insert into t(id, embedding, k) values ('c', '[0, 0, 1, 0]', 3);",
            error: ["hidden column \"k\" cannot be written"]),
        SQLCase(
            "vec_f32 refuses a zero-length vector, as sqlite-vec does",
            "select vec_f32('[]');",
            error: ["vec_f32", "zero-length vectors are not supported"]),
        SQLCase(
            "vec_version names the version as sqlite-vec does",
            "select substr(vec_version(), 1, 1), vec_version() = 'v' || vecsync_version();",
            rows: ["v|1"]),
        SQLCase(
            "a partition key column, declared as in sqlite-vec, restricts the search",
            """
            create virtual table pk using vec0(user_id integer partition key, embedding float[2]);
            insert into pk(rowid, user_id, embedding) values (1, 7, '[1,0]'), (2, 8, '[1,0]'), (3, 7, '[0,1]');
            select group_concat(rowid) from (select rowid from pk where embedding match '[1,0]' and k = 5 and user_id = 7);
            """,
            rows: ["1,3"]),
        SQLCase(
            "a partition key of another type is refused, naming the forms",
            "create virtual table pk using vec0(u blob partition key, embedding float[2]);",
            error: ["\"u\"", "integer partition key"]),
        SQLCase(
            "a deleted vector is zeroed in the file, and its slot reused",
            """
            create virtual table z using vec0(embedding float[2]);
            insert into z(rowid, embedding) values (1, '[1,2]'), (2, '[3,4]');
            delete from z where rowid = 1;
            select hex(substr(vectors, 1, 16)) from z_vectors;
            insert into z(rowid, embedding) values (3, '[5,6]');
            select rowid, vector_extract(embedding) from z order by rowid;
            """,
            rows: ["00000000000000000000404000008040", "2|[3,4]", "3|[5,6]"]),
        SQLCase(
            "k = 0 returns no row, as in sqlite-vec",
            table + "select id from t where embedding match '[1, 0, 0, 0]' and k = 0;",
            rows: []),
        SQLCase(
            "a negative k is refused",
            table + "select id from t where embedding match '[1, 0, 0, 0]' and k = -3;",
            error: ["k must be a non-negative integer, got -3"]),
        SQLCase(
            "LIMIT 0 returns no row",
            table + "select id from t where embedding match '[1, 0, 0, 0]' order by distance limit 0;",
            rows: []),
        SQLCase(
            "a NULL query is refused",
            table + "select id from t where embedding match NULL and k = 1;",
            error: ["query vector is NULL"]),
        SQLCase(
            "a NaN in a query blob is refused",
            table + "select id from t where embedding match x'0000c07f000000000000000000000000' and k = 1;",
            error: ["element 0 is NaN"]),
        SQLCase(
            "a NaN in an inserted blob is refused and nothing is written",
            table + """
                insert into t values ('c', x'000000000000c07f0000000000000000', 'x');
                """,
            error: ["element 1 is NaN"]),
        SQLCase(
            "an all-zero vector is refused under cosine",
            table + "insert into t values ('c', '[0, 0, 0, 0]', 'x');",
            error: ["all zeros", "cosine"]),
        SQLCase(
            "a plain duplicate insert is a UNIQUE error",
            table + "insert into t values ('a', '[0, 0, 1, 0]', 'z');",
            error: ["UNIQUE constraint failed: t.id"]),
        SQLCase(
            "INSERT OR REPLACE replaces the row",
            table + """
                insert or replace into t values ('a', '[0, 0, 1, 0]', 'z');
                select id, cat, distance from t where embedding match '[0, 0, 1, 0]' and k = 1;
                """,
            rows: ["a|z|0.0"]),
        SQLCase(
            "a failed multi-row insert writes no row",
            table + """
                insert into t values ('c', '[0, 0, 1, 0]', 'x'), ('d', '[0, 0, 1]', 'x');
                """,
            error: ["3 dimensions"]),
        SQLCase(
            "vecsync_knn_batch refuses an unknown table",
            "select * from vecsync_knn_batch('nope', x'0000803f', 1);",
            error: ["no such vec0 table: nope"]),
        SQLCase(
            "vecsync_knn_batch refuses k = 0",
            table + "select * from vecsync_knn_batch('t', vector32('[1, 0, 0, 0]'), 0);",
            error: ["k must be a positive integer"]),
    ]

    @Test(arguments: SQLPath.allCases, vec0Cases)
    func vec0BadInputIsOneClearError(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }

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
