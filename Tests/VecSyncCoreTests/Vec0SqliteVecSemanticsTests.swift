import Foundation
import Testing

/// What sqlite-vec 0.1.9 does with typed columns, primary keys and tables without one, done
/// the same way here (messages as sqlite-vec words them), in-process and in the shell.
@Suite("vec0 column types, keys and rowid as sqlite-vec has them")
struct Vec0SqliteVecSemanticsTests {
    static let typed = """
        create virtual table t using vec0(id text primary key, e float[2], n integer, f float,
          s text, b boolean, +a integer);
        insert into t(id, e, n, f, s, b, a) values ('ok', '[1, 2]', 1, 1.5, 's', 1, 1);

        """
    static let noKey = """
        create virtual table r using vec0(e float[2], m integer);
        insert into r values (1, '[1, 0]', 10);
        insert into r(rowid, e, m) values (2, '[0, 1]', 20);
        insert into r(e, m) values ('[1, 1]', 30);

        """

    static let cases: [SQLCase] = [
        SQLCase(
            "text in an integer metadata column is refused",
            typed + "insert into t(id, e, n, f, s, b, a) values ('x', '[1, 2]', 'one', 1.5, 's', 1, 1);",
            error: ["Expected integer for INTEGER metadata column n, received TEXT"]),
        SQLCase(
            "text in a float metadata column is refused",
            typed + "insert into t(id, e, n, f, s, b, a) values ('x', '[1, 2]', 1, 'y', 's', 1, 1);",
            error: ["Expected float for FLOAT metadata column f, received TEXT"]),
        SQLCase(
            "a number in a text metadata column is refused",
            typed + "insert into t(id, e, n, f, s, b, a) values ('x', '[1, 2]', 1, 1.5, 5, 1, 1);",
            error: ["Expected text for TEXT metadata column s, received INTEGER"]),
        SQLCase(
            "a boolean metadata column takes 0 or 1 only",
            typed + "insert into t(id, e, n, f, s, b, a) values ('x', '[1, 2]', 1, 1.5, 's', 2, 1);",
            error: ["Expected 0 or 1 for BOOLEAN metadata column b"]),
        SQLCase(
            "a typed auxiliary column refuses another type as a constraint error",
            typed + "insert into t(id, e, n, f, s, b, a) values ('x', '[1, 2]', 1, 1.5, 's', 1, 'zz');",
            error: ["Auxiliary column type mismatch", "auxiliary column a has type INTEGER, but TEXT"]),
        SQLCase(
            "an update is type-checked too, and leaves the row as it was",
            typed + "update t set n = 'zz' where id = 'ok';",
            error: ["Expected integer for INTEGER metadata column n, received TEXT"]),
        SQLCase(
            "NULL metadata and an integer in a float column are accepted (sqlite-vec refuses both)",
            typed + """
                insert into t(id, e, n, f, s, b, a) values ('x', '[1, 2]', null, 2, null, null, null);
                select id, n is null, f, typeof(f) from t order by id;
                """,
            rows: ["ok|0|1.5|real", "x|1|2.0|real"]),
        SQLCase(
            "a text primary key refuses a number",
            typed + "insert into t(id, e, n, f, s, b, a) values (5, '[1, 2]', 1, 1.5, 's', 1, 1);",
            error: ["declared with a TEXT primary key, but a non-TEXT value was provided"]),
        SQLCase(
            "an integer primary key refuses text and fractions",
            """
            create virtual table i using vec0(id integer primary key, e float[2]);
            insert into i(id, e) values ('x', '[1, 2]');
            """,
            error: ["Only integers are allows for primary key values on i"]),
        SQLCase(
            "a text primary key cannot be updated",
            typed + "update t set id = 'other' where id = 'ok';",
            error: ["UPDATEs on vec0 primary key values are not allowed."]),
        SQLCase(
            "an integer primary key cannot be updated",
            """
            create virtual table i using vec0(id integer primary key, e float[2]);
            insert into i(id, e) values (1, '[1, 2]');
            update i set id = 7 where id = 1;
            """,
            error: ["UPDATEs on vec0 primary key values are not allowed."]),
        SQLCase(
            "updating a row's other columns leaves its key alone and works",
            typed + "update t set n = 7, e = '[2, 1]' where id = 'ok'; select id, n, vec_to_json(e) from t;",
            rows: ["ok|7|[2.000000,1.000000]"]),
        SQLCase(
            "a table without a primary key shows rowid as its first column",
            noKey + "select * from pragma_table_info('r');",
            rows: ["0|rowid||0|NULL|0", "1|e|BLOB|0|NULL|0", "2|m|INTEGER|0|NULL|0"]),
        SQLCase(
            "rows go in by position, with rowid first, or by name, or get the next rowid",
            noKey + "select rowid, vec_to_json(e), m from r order by rowid;",
            rows: ["1|[1.000000,0.000000]|10", "2|[0.000000,1.000000]|20", "3|[1.000000,1.000000]|30"]),
        SQLCase(
            "select * returns the rowid first; rowid filters, KNN and point lookups see it",
            noKey + """
                select rowid, m from r where rowid = 2;
                select r.rowid, distance from r where e match '[1, 0]' and k = 2;
                select rowid, m from r where e match '[1, 0]' and k = 3 and rowid > 1;
                """,
            rows: ["2|20", "1|0.0", "3|1.0", "3|30", "2|20"]),
        SQLCase(
            "the rowid column can be updated, and the row keeps its vector",
            noKey + """
                update r set rowid = 9 where rowid = 1;
                update r set m = 90 where rowid = 9;
                select rowid, m, vec_to_json(e) from r where rowid = 9;
                select count(*) from r where rowid = 1;
                """,
            rows: ["9|90|[1.000000,0.000000]", "0"]),
        SQLCase(
            "a partition key is indexed, so its rows are found without reading the others",
            """
            create virtual table p using vec0(user_id integer partition key, e float[2]);
            insert into p(rowid, user_id, e) values (1, 1, '[1, 0]'), (2, 2, '[1, 0]'), (3, 1, '[0, 1]');
            select count(*) from sqlite_schema where type = 'index' and tbl_name = 'p_rows';
            select rowid from p where e match '[1, 0]' and k = 2 and user_id = 1;
            alter table p rename to q;
            create virtual table p using vec0(user_id integer partition key, e float[2]);
            insert into p(rowid, user_id, e) values (7, 2, '[1, 0]');
            select rowid from q where e match '[1, 0]' and k = 5 and user_id = 2;
            select rowid from p where e match '[1, 0]' and k = 5 and user_id = 2;
            select count(*) from sqlite_schema where type = 'index' and tbl_name in ('p_rows', 'q_rows');
            """,
            rows: ["1", "1", "3", "2", "7", "2"]),
        SQLCase(
            "distance_metric=l1 ranks by the sum of absolute differences: vec_distance_l1, kept as a float",
            """
            create virtual table l using vec0(e float[3] distance_metric=l1);
            insert into l(rowid, e) values (1, '[1, 2, 3]'), (2, '[0.1, 0.2, 0.3]'), (3, '[-1, 5, 2]'),
              (4, '[0.3, 0.7, -1.1]');
            select rowid, abs(distance - vec_distance_l1(e, '[0.3, 0.7, 1.1]')) < 1e-6 from l
             where e match '[0.3, 0.7, 1.1]' and k = 4;
            select rowid, round(distance, 6), abs(distance - vec_distance_l1(e, '[0, 0, 0]')) < 1e-6 from l
             where e match '[0, 0, 0]' and k = 2;
            """,
            rows: ["2|1", "4|1", "1|1", "3|1", "2|0.6|1", "4|2.1|1"]),
        SQLCase(
            "distance_metric=l1 reports sqlite-vec's figures: the double sum rounded to float32",
            """
            create virtual table l using vec0(e float[3] distance_metric=l1);
            insert into l(rowid, e) values (1, '[0.1, 0.2, 0.3]'), (2, '[1.1, -0.7, 0.25]'), (3, '[0.3, 0.3, 0.3]');
            select rowid, distance in (1.2000000476837158, 1.5, 2.549999952316284) from l
             where e match '[0.5, 0.5, -0.5]' and k = 3;
            select vec_distance_l1('[0.1, 0.2, 0.3]', '[0.5, 0.5, -0.5]') = 1.5000000074505806;
            """,
            rows: ["3|1", "1|1", "2|1", "1"]),
        SQLCase(
            "distance_metric=l1 with indexed by rescore(...) is refused, naming the column",
            "create virtual table l using vec0(e float[4] distance_metric=l1 indexed by rescore(quantizer=int8));",
            error: ["column \"e\"", "rescore", "does not support distance_metric=l1"]),
        SQLCase(
            "distance_metric=l1 is refused in either order with rescore",
            "create virtual table l using vec0(e float[4] indexed by rescore(quantizer=bit) distance_metric=l1);",
            error: ["does not support distance_metric=l1"]),
    ]

    @Test(arguments: SQLPath.allCases, cases)
    func behavesAsSqliteVec(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
