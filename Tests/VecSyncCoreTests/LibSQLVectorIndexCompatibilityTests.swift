import Foundation
import Testing
import VecSyncTestSupport

/// libSQL's vector SQL as libSQL users meet it: the compact vector types, partial indexes,
/// the checks `CREATE INDEX … libsql_vector_idx` makes (with libSQL's messages), each index's
/// own size, indexes of attached databases, `DROP INDEX`, and indexes made by the previous
/// version.
@Suite("libSQL vector index compatibility")
struct LibSQLVectorIndexCompatibilityTests {
    static let partial = """
        create table docs(id integer primary key, type int, e F32_BLOB(4));
        create index docs_idx on docs(libsql_vector_idx(e)) where type = 0;
        insert into docs values (1, 0, vector32('[1,0,0,0]')), (2, 1, vector32('[0.9,0.1,0,0]')), (3, 0, vector32('[0,1,0,0]'));

        """

    static let indexCases: [SQLCase] = [
        SQLCase(
            "a partial index holds only the rows its WHERE clause matches",
            partial + "select id, distance from vector_top_k('docs_idx', vector32('[1,0,0,0]'), 5);",
            rows: ["1|0.0", "3|1.0"]),
        SQLCase(
            "a partial index follows UPDATEs that move rows in and out, and DELETEs",
            partial + """
                select id from vector_top_k('docs_idx', vector32('[1,0,0,0]'), 5) where id < 0;
                update docs set type = 0 where id = 2;
                select 'in', id from vector_top_k('docs_idx', vector32('[1,0,0,0]'), 5);
                update docs set type = 1 where id = 1;
                delete from docs where id = 3;
                select 'out', id from vector_top_k('docs_idx', vector32('[1,0,0,0]'), 5);
                """,
            rows: ["in|1", "in|2", "in|3", "out|2"]),
        SQLCase(
            "a partial index takes a vector of any size in a row it does not cover, as libSQL does",
            partial + """
                insert into docs values (4, 1, vector32('[1,2]'));
                select count(*) from docs;
                """,
            rows: ["4"]),
        SQLCase(
            "a partial index refuses a vector of the wrong size in a row it covers",
            partial + "insert into docs values (5, 0, vector32('[1,2]'));",
            error: ["2 dimensions", "has 4"]),
        SQLCase(
            "CREATE INDEX over rows refuses a column that is not a vector type, with libSQL's message",
            """
            create table t(id integer primary key, e TEXT);
            insert into t values (1, '[1,2]');
            create index i on t(libsql_vector_idx(e));
            """,
            error: ["vector index: unexpected vector column type: TEXT"]),
        SQLCase(
            "on an empty table the first write refuses the column type",
            """
            create table t(id integer primary key, e TEXT);
            create index i on t(libsql_vector_idx(e));
            insert into t values (1, '[1,2]');
            """,
            error: ["vector index: unexpected vector column type: TEXT"]),
        SQLCase(
            "on an empty table the first search refuses the column type",
            """
            create table t(id integer primary key, e TEXT);
            create index i on t(libsql_vector_idx(e));
            select id from vector_top_k('i', '[1,2]', 1);
            """,
            error: ["vector_top_k", "vector index: unexpected vector column type: TEXT"]),
        SQLCase(
            "a column of zero dimensions is refused",
            """
            create table t(id integer primary key, e F32_BLOB(0));
            insert into t values (1, NULL);
            create index i on t(libsql_vector_idx(e));
            """,
            error: ["vector index: vector column must have non-zero dimension for index: F32_BLOB(0)"]),
        SQLCase(
            "an integer option that is not a number is refused",
            """
            create table t(id integer primary key, e F32_BLOB(2));
            insert into t values (1, '[1,2]');
            create index i on t(libsql_vector_idx(e, 'max_neighbors=abc'));
            """,
            error: [
                "vector index: invalid vector index parameter 'max_neighbors=abc': invalid representation of integer vector index parameter"
            ]),
        SQLCase(
            "an option that is not a string is refused",
            """
            create table t(id integer primary key, e F32_BLOB(2));
            insert into t values (1, '[1,2]');
            create index i on t(libsql_vector_idx(e, 5));
            """,
            error: ["vector index: all arguments after first must be strings"]),
        SQLCase(
            "a second indexed expression is refused",
            """
            create table t(id integer primary key, e F32_BLOB(2));
            insert into t values (1, '[1,2]');
            create index i on t(libsql_vector_idx(e), id);
            """,
            error: ["vector index: must contain exactly one column wrapped into the libsql_vector_idx function"]),
        SQLCase(
            "a collation on the indexed expression is refused",
            """
            create table t(id integer primary key, e F32_BLOB(2));
            insert into t values (1, '[1,2]');
            create index i on t(libsql_vector_idx(e) collate nocase);
            """,
            error: ["vector index: collation in expression is forbidden"]),
        SQLCase(
            "1-bit compression with the l2 metric is refused, as libSQL refuses it",
            """
            create table t(id integer primary key, e F32_BLOB(2));
            insert into t values (1, '[1,2]');
            create index i on t(libsql_vector_idx(e, 'metric=l2', 'compress_neighbors=float1bit'));
            """,
            error: ["1-bit compression available only for cosine metric"]),
        SQLCase(
            "a WITHOUT ROWID table with a composite key is refused with libSQL's message",
            """
            create table w(a, b, e F32_BLOB(2), primary key (a, b)) without rowid;
            insert into w values (1, 1, '[1,2]');
            create index i on w(libsql_vector_idx(e));
            """,
            error: ["vector index: unsupported for tables without ROWID and composite primary key"]),
        SQLCase(
            "a WITHOUT ROWID table with a TEXT key is indexed: id is the key, rowid the position from 0, as in libSQL",
            """
            create table w(v1, v2, v3, email TEXT PRIMARY KEY, v FLOAT32(3)) without rowid;
            create index wi on w(libsql_vector_idx(v));
            insert into w values (1, 1, 1, 'e-1', vector('[1,2,3]'));
            insert into w values (1, 1, 1, 'e-2', vector('[2,3,4]'));
            insert into w values (1, 1, 1, 'e-3', vector('[3,4,5]'));
            insert into w values (1, 1, 1, 'e-4', vector('[4,5,6]'));
            select id, rowid, typeof(id) from vector_top_k('wi', vector('[3,4,5]'), 4);
            """,
            rows: ["e-3|0|text", "e-4|1|text", "e-2|2|text", "e-1|3|text"]),
        SQLCase(
            "a WITHOUT ROWID table's INTEGER key is rowid-like: it is both id and rowid, as in libSQL",
            """
            create table w(k INTEGER PRIMARY KEY, v FLOAT32(2)) without rowid;
            create index wi on w(libsql_vector_idx(v));
            insert into w values (10, '[1,0]'), (20, '[0,1]'), (5, '[1,1]');
            select id, rowid, typeof(id) from vector_top_k('wi', '[1,0]', 4);
            """,
            rows: ["10|10|integer", "5|5|integer", "20|20|integer"]),
        SQLCase(
            "a WITHOUT ROWID index follows inserts, key updates, deletes, REPLACE and its partial WHERE",
            """
            create table w(name TEXT PRIMARY KEY, kind INT, tag UNIQUE, e F32_BLOB(2)) without rowid;
            create index wi on w(libsql_vector_idx(e)) where kind = 0;
            insert into w values ('a', 0, 1, '[1,0]'), ('b', 0, 2, '[0,1]'), ('c', 1, 3, '[1,0.1]');
            select 'first', id from vector_top_k('wi', '[1,0]', 5);
            update w set name = 'z' where name = 'a';
            update w set kind = 0 where name = 'c';
            delete from w where name = 'b';
            select 'second', id from vector_top_k('wi', '[1,0]', 5);
            insert or replace into w values ('y', 0, 3, '[0,1]');
            update or replace w set tag = 1 where name = 'y';
            select 'third', id, printf('%.3f', distance) from vector_top_k('wi', '[1,0]', 5);
            select 'rebuilt', vecsync_rebuild('wi');
            select 'fourth', id from vector_top_k('wi', '[1,0]', 5);
            """,
            rows: [
                "first|a", "first|b", "second|z", "second|c", "third|y|1.000", "rebuilt|1", "fourth|y",
            ]),
        SQLCase(
            "a WITHOUT ROWID key changed to one equal under its collation is reported as the table holds it",
            """
            create table w(k TEXT COLLATE NOCASE PRIMARY KEY, e F32_BLOB(2)) without rowid;
            create index wi on w(libsql_vector_idx(e));
            insert into w values ('A', '[1,0]'), ('b', '[0,1]');
            select 'before', id from vector_top_k('wi', '[1,0]', 5);
            update w set k = 'a' where k = 'A';
            select 'after', id from vector_top_k('wi', '[1,0]', 5);
            """,
            rows: ["before|A", "before|b", "after|a", "after|b"]),
        SQLCase(
            "a WITHOUT ROWID table in an attached database is indexed and followed",
            """
            attach ':memory:' as aux;
            create table aux.w(name TEXT PRIMARY KEY, e F32_BLOB(2)) without rowid;
            create index aux.wi on w(libsql_vector_idx(e));
            insert into aux.w values ('x', '[1,0]'), ('y', '[0,1]');
            select 'a', id from vector_top_k('aux.wi', '[0,1]', 5);
            update aux.w set name = 'z' where name = 'x';
            select 'b', id from vector_top_k('aux.wi', '[1,0]', 5);
            """,
            rows: ["a|y", "a|x", "b|z", "b|y"]),
        SQLCase(
            "on a FLOAT1BIT column the distance is the number of differing bits, as libSQL's vector_distance_cos gives it",
            """
            create table b(id integer primary key, e FLOAT1BIT(9));
            create index bi on b(libsql_vector_idx(e));
            insert into b values (1, vector1bit('[1,1,1,1,1,1,1,1,1]')), (2, vector1bit('[-1,-1,-1,-1,-1,-1,-1,-1,1]')),
              (3, vector1bit('[1,-1,1,-1,1,-1,1,-1,1]'));
            select 'index', id, distance from vector_top_k('bi', vector1bit('[1,1,1,1,1,1,1,1,-1]'), 3);
            select 'function', id, vector_distance_cos(e, vector1bit('[1,1,1,1,1,1,1,1,-1]')) from b order by id;
            select 'text query', id, distance from vector_top_k('bi', '[0.5,2,3,4,5,6,7,8,-0.1]', 1);
            """,
            rows: [
                "index|1|1.0", "index|3|5.0", "index|2|9.0", "function|1|1.0", "function|2|9.0", "function|3|5.0",
                "text query|1|1.0",
            ]),
        SQLCase(
            "an index of an attached database is searched by its qualified name, and follows writes",
            """
            attach ':memory:' as aux;
            create table aux.docs(id integer primary key, e F32_BLOB(2));
            create index aux.docs_idx on docs(libsql_vector_idx(e));
            insert into aux.docs values (1, '[1,0]'), (2, '[0,1]');
            select 'a', id, distance from vector_top_k('aux.docs_idx', '[1,0]', 5);
            update aux.docs set e = '[1,0.1]' where id = 2;
            delete from aux.docs where id = 1;
            select 'b', id from vector_top_k('aux.docs_idx', '[1,0]', 5);
            select 'c', id from vector_top_k('docs_idx', '[1,0]', 5);
            """,
            rows: ["a|1|0.0", "a|2|1.0", "b|2", "c|2"]),
        SQLCase(
            "vector_top_k finds an index by its schema and index names in any letter case, as SQL names are found",
            """
            attach ':memory:' as t;
            create table t.docs(id integer primary key, e F32_BLOB(2));
            create index t.t_attach_idx on docs(libsql_vector_idx(e));
            insert into t.docs values (1, '[1,0]'), (2, '[0,1]');
            select 'a', id from vector_top_k('T.t_attach_idx', '[1,0]', 1);
            select 'b', id from vector_top_k('T.T_ATTACH_IDX', '[0,1]', 1);
            insert into t.docs values (3, '[1,1]');
            select 'c', id from vector_top_k('t_Attach_Idx', '[1,1]', 1);
            select 'store', count(*) from t.sqlite_schema where name = 'vecsync_idx_t_attach_idx';
            """,
            rows: ["a|1", "b|2", "c|3", "store|1"]),
        SQLCase(
            "a FLOAT64 column is indexed",
            """
            create table t(id integer primary key, e FLOAT64(2));
            create index i on t(libsql_vector_idx(e, 'metric=l2'));
            insert into t values (1, vector64('[3,4]')), (2, vector64('[1,1]'));
            select id, printf('%.6f', distance) from vector_top_k('i', vector64('[0,0]'), 5);
            """,
            rows: ["2|1.414214", "1|5.000000"]),
        SQLCase(
            "after DROP INDEX the table takes any write; the next search removes the triggers, the next rebuild the tables",
            partial + """
                select id from vector_top_k('docs_idx', vector32('[1,0,0,0]'), 5) where id < 0;
                drop index docs_idx;
                insert into docs values (6, 0, vector32('[1,2]'));
                create table u(id integer primary key, e F32_BLOB(2));
                create index u_idx on u(libsql_vector_idx(e));
                select id from vector_top_k('u_idx', '[1,0]', 1);
                select 'triggers', count(*) from sqlite_schema where type = 'trigger' and name like 'vecsync_idx_docs_idx_%';
                select 'rebuilt', vecsync_rebuild('u_idx');
                select 'tables', count(*) from sqlite_schema where name like 'vecsync_idx_docs_idx%';
                """,
            rows: ["triggers|0", "rebuilt|0", "tables|0"]),
        SQLCase(
            "an index dropped and created again searches the current rows",
            partial + """
                select id from vector_top_k('docs_idx', vector32('[1,0,0,0]'), 5) where id < 0;
                drop index docs_idx;
                delete from docs where id = 1;
                create index docs_idx on docs(libsql_vector_idx(e));
                select id from vector_top_k('docs_idx', vector32('[1,0,0,0]'), 5);
                """,
            rows: ["2", "3"]),
    ]

    /// libSQL's compact vector types. The bytes are the layouts libSQL's vector.c writes:
    /// FLOAT16 and FLOATB16 two bytes an element then the type byte 5 or 6; FLOAT8 the
    /// quantized bytes padded to 4, alpha and shift, a zero, the padding count, then 4;
    /// FLOAT1BIT the bits, a zero when their byte count is even, the unused bits, then 3.
    static let typeCases: [SQLCase] = [
        SQLCase(
            "vector16 writes IEEE half floats, rounded to nearest, and reads them back",
            "SELECT hex(vector16('[1.5, -2, 0.1]')), vector_extract(vector16('[1.5, -2, 0.1]'));",
            rows: ["003E00C0662E05|[1.5,-2,0.0999756]"]),
        SQLCase(
            "vectorb16 keeps the top 16 bits of each float32",
            "SELECT hex(vectorb16('[1.5, -2, 0.1]')), vector_extract(vectorb16('[1.5, -2, 0.1]'));",
            rows: ["C03F00C0CC3D06|[1.5,-2,0.0996094]"]),
        SQLCase(
            "vector8 quantizes between the minimum and the maximum",
            "SELECT hex(vector8('[1, 2, 3, -1, 0.5]')), vector_extract(vector8('[1, 2, 3, -1, 0.5]'));",
            rows: ["7FBFFF00600000008180803C000080BF000304|[0.992157,1.99608,3,-1,0.505883]"]),
        SQLCase(
            "vector8 quantizes a range wider than float32 (a fuzz finding: it was NaN cast to int)",
            "SELECT vector_extract(vector8('[-3.4e38, 3.4e38, 0]'));",
            rows: ["[-3.4e+38,3.4e+38,1.33333e+36]"]),
        SQLCase(
            "vector1bit keeps the signs, read back as +1 and -1",
            "SELECT hex(vector1bit('[1, -2, 3, 0, 5, -1, 2, 2, -3]')), vector_extract(vector1bit('[1, -2, 3, 0, 5, -1, 2, 2, -3]')), hex(vector1bit('[1, -2]'));",
            rows: ["D500001703|[1,-1,1,-1,1,-1,1,1,-1]|010E03"]),
        SQLCase(
            "vector32 and vector64 convert the compact types",
            "SELECT hex(vector32(vector16('[1, 2]'))), hex(vector64(vector8('[0, 1]')));",
            rows: ["0000803F00000040|0000000000000000000000000000F03F02"]),
        SQLCase(
            "the cosine distance of 1-bit vectors is their hamming distance, as in libSQL",
            "SELECT vector_distance_cos(vector1bit('[1, -2, 3]'), vector1bit('[1, 2, -3]'));",
            rows: ["2.0"]),
        SQLCase(
            "vector_distance_cos and _l2 give libSQL's figures: float32 sums, FLOAT64 in double, rounded to float32",
            """
            select vector_distance_cos('[1,2]', '[2,1]') = 0.20000000298023224,
              vector_distance_l2('[1,2]', '[2,1]') = 1.4142135381698608,
              vector_distance_cos('[1.1,1.0,0.3]', '[1.2,1.2,-0.7]') = 0.17027704417705536,
              vector_distance_cos(vector64('[1,2]'), vector64('[2,1]')) = 0.20000000298023224,
              vector_distance_l2(vector64('[1,3]'), vector64('[2,1]')) = 2.2360680103302,
              vector_distance_cos('[0.1,0.2,0.3]', '[0.1,0.2,0.3]') = -9.731374817079086e-09;
            """,
            rows: ["1|1|1|1|1|1"]),
        SQLCase(
            "1-bit vectors have no l2 distance",
            "SELECT vector_distance_l2(vector1bit('[1, -2, 3]'), vector1bit('[1, 2, -3]'));",
            error: ["vector_distance_l2", "not supported for float1bit"]),
        SQLCase(
            "a FLOAT16 vector beside a FLOAT32 one is refused",
            "SELECT vector_distance_cos(vector16('[1, 0]'), vector32('[1, 0]'));",
            error: ["vectors must have the same type", "FLOAT16", "FLOAT32"]),
        SQLCase(
            "FLOAT16, FLOAT8 and FLOAT1BIT columns are indexed and searched",
            """
            create table t(id integer primary key, e FLOAT16(2));
            create index i on t(libsql_vector_idx(e));
            insert into t values (1, vector16('[1,0]')), (2, vector16('[0,1]')), (3, vector16('[0.7,0.7]'));
            select 'f16', id, printf('%.4f', distance) from vector_top_k('i', vector16('[1,0]'), 3);
            create table u(id integer primary key, e FLOAT8(3));
            create index ui on u(libsql_vector_idx(e, 'metric=l2'));
            insert into u values (1, vector8('[1,0,0]')), (2, vector8('[0,1,0]'));
            select 'f8', id from vector_top_k('ui', vector8('[1,0.1,0]'), 3);
            create table b(id integer primary key, e FLOAT1BIT(9));
            create index bi on b(libsql_vector_idx(e));
            insert into b values (1, vector1bit('[1,1,1,1,1,1,1,1,1]')), (2, vector1bit('[-1,-1,-1,-1,-1,-1,-1,-1,1]'));
            select '1bit', id from vector_top_k('bi', vector1bit('[1,1,1,1,1,1,1,1,-1]'), 2);
            """,
            rows: ["f16|1|0.0000", "f16|3|0.2929", "f16|2|1.0000", "f8|1", "f8|2", "1bit|1", "1bit|2"]),
        SQLCase(
            "a FLOAT8 vector of another size is refused by its index, after a search",
            """
            create table u(id integer primary key, e FLOAT8(3));
            create index ui on u(libsql_vector_idx(e, 'metric=l2'));
            insert into u values (1, vector8('[1,0,0]'));
            select id from vector_top_k('ui', vector8('[1,0,0]'), 1) where id < 0;
            create table t(id integer primary key, e FLOAT16(2));
            create index ti on t(libsql_vector_idx(e));
            insert into u values (3, vector8('[1,2]'));
            """,
            error: ["vector index ui", "3 dimensions"]),
    ]

    @Test("libSQL's compact vector types", arguments: SQLPath.allCases, typeCases)
    func compactTypesAreReadWrittenAndIndexed(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }

    @Test("libSQL's vector index behaviours", arguments: SQLPath.allCases, indexCases)
    func vectorIndexBehavesAsLibSQLs(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }

    @Test(
        "each of two vector indexes of a table refuses a vector of another size",
        arguments: SQLPath.allCases)
    func eachIndexRefusesAnotherSize(path: SQLPath) throws {
        let sql = """
            create table t(id integer primary key, a F32_BLOB(2), b F32_BLOB(3));
            create index ia on t(libsql_vector_idx(a));
            create index ib on t(libsql_vector_idx(b));
            select 1 from vector_top_k('ia', '[1,0]', 1);
            select 1 from vector_top_k('ib', '[1,0,0]', 1);
            insert into t values (1, '[1,0]', '[0,1,0]');
            insert into t values (2, '[1,0,0]', '[0,1,0]');
            insert into t values (3, '[1,0]', '[0,1]');
            select 'rows', group_concat(id) from t;
            select 'ia', id from vector_top_k('ia', '[1,0]', 5);
            select 'ib', id from vector_top_k('ib', '[0,1,0]', 5);
            """
        let run = try path.run(sql)
        #expect(run.rows == ["rows|1", "ia|1", "ib|1"], "\(sql)\ngot: \(run)")
        #expect(run.errors.count == 2, "\(sql)\ngot: \(run)")
        #expect(
            run.errors.first?.contains("vector index ia: the vector's size is not the 2 dimensions of t.a") == true,
            "\(run)")
        #expect(
            run.errors.last?.contains("vector index ib: the vector's size is not the 3 dimensions of t.b") == true,
            "\(run)")
    }

    @Test(
        "writes of a connection that never searched are applied by the next search that can write; a read-only search answers from the table meanwhile",
        arguments: SQLPath.allCases)
    func loggedWritesAreAppliedByTheNextWritableSearch(path: SQLPath) throws {
        // Each run is a new connection: only the first one searched, so only it had the
        // TEMP trigger that applies the log at once.
        try path.verify(
            onFileAfter: "",
            [
                SQLCase(
                    "step 1",
                    """
                    create table docs(id integer primary key, e F32_BLOB(2));
                    create index docs_idx on docs(libsql_vector_idx(e));
                    insert into docs values (1, '[1,0]'), (2, '[0,1]'), (3, '[1,1]');
                    select id from vector_top_k('docs_idx', '[1,0]', 5);
                    """,
                    rows: ["1", "3", "2"]),
                SQLCase(
                    "step 2",
                    """
                    insert into docs values (4, '[1,0.1]');
                    update docs set e = '[0,1]' where id = 1;
                    delete from docs where id = 2;
                    select count(*) from vecsync_idx_docs_idx_log;
                    """,
                    rows: ["3"]),
                SQLCase(
                    "step 3",
                    """
                    pragma query_only = 1;
                    select id from vector_top_k('docs_idx', '[1,0]', 5);
                    select count(*) from vecsync_idx_docs_idx_log;
                    """,
                    rows: ["4", "3", "1", "3"]),
                SQLCase(
                    "step 4",
                    """
                    select id from vector_top_k('docs_idx', '[1,0]', 5);
                    select count(*) from vecsync_idx_docs_idx_log;
                    select count(*) from vecsync_idx_docs_idx;
                    """,
                    rows: ["4", "3", "1", "0", "3"]),
            ])
    }

    @Test(
        "a WITHOUT ROWID index: a read-only search answers from the table by key, and the next writable search applies the log",
        arguments: SQLPath.allCases)
    func withoutRowidLoggedWritesAreAnsweredAndApplied(path: SQLPath) throws {
        // Ties (equal distances) are ordered by key on the read-only path, and by the order
        // the rows were indexed once the search data holds them (a build indexes in key order).
        try path.verify(
            onFileAfter: "",
            [
                SQLCase(
                    "step 1",
                    """
                    create table w(name TEXT PRIMARY KEY, e F32_BLOB(2)) without rowid;
                    create index wi on w(libsql_vector_idx(e));
                    insert into w values ('b', '[1,0]'), ('a', '[1,0]'), ('c', '[0,1]');
                    select id, rowid from vector_top_k('wi', '[1,0]', 5);
                    """,
                    rows: ["a|0", "b|1", "c|2"]),
                SQLCase(
                    "step 2",
                    """
                    insert into w values ('0', '[1,0]');
                    delete from w where name = 'c';
                    update w set e = '[0,1]' where name = 'b';
                    select count(*) from vecsync_idx_wi_log;
                    """,
                    rows: ["3"]),
                SQLCase(
                    "step 3",
                    """
                    pragma query_only = 1;
                    select id, rowid, distance from vector_top_k('wi', '[1,0]', 5);
                    select count(*) from vecsync_idx_wi_log;
                    """,
                    rows: ["0|0|0.0", "a|1|0.0", "b|2|1.0", "3"]),
                SQLCase(
                    "step 4",
                    """
                    select id, distance from vector_top_k('wi', '[1,0]', 5);
                    select count(*) from vecsync_idx_wi_log;
                    select count(*) from vecsync_idx_wi_keys;
                    """,
                    rows: ["a|0.0", "0|0.0", "b|1.0", "0", "3"]),
            ])
    }

    /// Runs `sql` in the `sqlite3` shell on `path` without loading the extension.
    static func plainShell(_ sql: String, path: String) throws -> (stdout: String, stderr: String) {
        let process = Process()
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Shell.shellBinary, "-batch", path]
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        try process.run()
        input.fileHandleForWriting.write(Data(sql.utf8))
        try input.fileHandleForWriting.close()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (stdout, stderr)
    }

    @Test("after DROP INDEX a client without the extension can write the table again")
    func dropIndexLetsAClientWithoutTheExtensionWrite() throws {
        try withTemporaryFile("drop-index", named: "docs.sqlite") { path in
            let setUp = try Shell.run(
                Self.partial + """
                    select id from vector_top_k('docs_idx', vector32('[1,0,0,0]'), 5) where id < 0;
                    """, databasePath: path)
            #expect(setUp.stderr == "", "\(setUp.stderr)")
            // While the index exists SQLite needs libsql_vector_idx() to write the table.
            let before = try Self.plainShell("insert into docs values (7, 1, NULL);", path: path)
            #expect(before.stderr.contains("libsql_vector_idx"), "without the extension, before DROP INDEX: \(before)")
            let drop = try Shell.run("drop index docs_idx;", databasePath: path)
            #expect(drop.stderr == "", "\(drop.stderr)")
            let after = try Self.plainShell(
                """
                insert into docs values (8, 0, x'0000803f');
                update docs set type = 1 where id = 1;
                delete from docs where id = 3;
                select group_concat(id) from docs;
                """, path: path)
            #expect(after.stderr == "", "without the extension, after DROP INDEX: \(after.stderr)")
            #expect(after.stdout == "1,2,8\n", "\(after)")
        }
    }

    /// The schema and search data an index had under the previous version (triggers version
    /// 2, writing the vec0 table directly), as its `.dump`, the triggers written to the schema.
    static let previousVersionDump = """
        PRAGMA foreign_keys=OFF;
        BEGIN TRANSACTION;
        CREATE TABLE docs(id integer primary key, title text, e F32_BLOB(3));
        INSERT INTO docs VALUES(1,'a',X'0000803f0000000000000000');
        INSERT INTO docs VALUES(2,'b',X'000000000000803f00000000');
        INSERT INTO docs VALUES(3,'c',X'00000000000000000000803f');
        PRAGMA writable_schema=ON;
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','vecsync_idx_docs_idx','vecsync_idx_docs_idx',0,'CREATE VIRTUAL TABLE "vecsync_idx_docs_idx" USING vec0(embedding float[3] distance_metric=l2)');
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_info"(key TEXT PRIMARY KEY, value);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('format',1);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('chunk_size',1024);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('dimensions',3);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('metric','l2');
        INSERT INTO vecsync_idx_docs_idx_info VALUES('vectors_per_blob',1024);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('uid',5722761904882813665);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('log_from',0);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('generation',1);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('next_slot',3);
        INSERT INTO vecsync_idx_docs_idx_info VALUES('backfilled',2);
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_changes"(generation INTEGER NOT NULL, slot INTEGER NOT NULL, rowid INTEGER, PRIMARY KEY(generation, slot)) WITHOUT ROWID;
        INSERT INTO vecsync_idx_docs_idx_changes VALUES(1,0,1);
        INSERT INTO vecsync_idx_docs_idx_changes VALUES(1,1,2);
        INSERT INTO vecsync_idx_docs_idx_changes VALUES(1,2,3);
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_vectors"(chunk_id INTEGER PRIMARY KEY, vectors BLOB NOT NULL);
        INSERT INTO vecsync_idx_docs_idx_vectors VALUES(0,(X'0000803F0000000000000000000000000000803F0000000000000000000000000000803F'||zeroblob(12252)));
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_free"(slot INTEGER PRIMARY KEY);
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_rows"(rowid INTEGER PRIMARY KEY, slot INTEGER NOT NULL);
        INSERT INTO vecsync_idx_docs_idx_rows VALUES(1,0);
        INSERT INTO vecsync_idx_docs_idx_rows VALUES(2,1);
        INSERT INTO vecsync_idx_docs_idx_rows VALUES(3,2);
        CREATE TABLE IF NOT EXISTS "vecsync_idx_docs_idx_pending"(rowid INTEGER PRIMARY KEY);
        CREATE INDEX docs_idx on docs(libsql_vector_idx(e, 'metric=l2'));
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('trigger','vecsync_idx_docs_idx_bi','docs',0,'CREATE TRIGGER "vecsync_idx_docs_idx_bi" BEFORE INSERT ON "docs" BEGIN  INSERT OR IGNORE INTO "vecsync_idx_docs_idx_pending"(rowid)    SELECT rowid FROM "docs" WHERE rowid=new.rowid; END');
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('trigger','vecsync_idx_docs_idx_bu','docs',0,'CREATE TRIGGER "vecsync_idx_docs_idx_bu" BEFORE UPDATE ON "docs" BEGIN  INSERT OR IGNORE INTO "vecsync_idx_docs_idx_pending"(rowid)    SELECT rowid FROM "docs" WHERE (rowid=new.rowid) AND rowid<>old.rowid; END');
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('trigger','vecsync_idx_docs_idx_ai','docs',0,'CREATE TRIGGER "vecsync_idx_docs_idx_ai" AFTER INSERT ON "docs" BEGIN  DELETE FROM "vecsync_idx_docs_idx" WHERE rowid IN (SELECT p.rowid FROM "vecsync_idx_docs_idx_pending" p    WHERE NOT EXISTS (SELECT 1 FROM "docs" t WHERE t.rowid=p.rowid));  DELETE FROM "vecsync_idx_docs_idx_pending";  DELETE FROM "vecsync_idx_docs_idx" WHERE rowid=new.rowid;  INSERT INTO "vecsync_idx_docs_idx"(rowid, embedding)    SELECT new.rowid, new."e" WHERE new."e" IS NOT NULL; END');
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('trigger','vecsync_idx_docs_idx_au','docs',0,'CREATE TRIGGER "vecsync_idx_docs_idx_au" AFTER UPDATE ON "docs" BEGIN  DELETE FROM "vecsync_idx_docs_idx" WHERE rowid IN (SELECT p.rowid FROM "vecsync_idx_docs_idx_pending" p    WHERE NOT EXISTS (SELECT 1 FROM "docs" t WHERE t.rowid=p.rowid));  DELETE FROM "vecsync_idx_docs_idx_pending";  DELETE FROM "vecsync_idx_docs_idx" WHERE rowid=old.rowid    AND (old.rowid IS NOT new.rowid OR old."e" IS NOT new."e");  INSERT OR REPLACE INTO "vecsync_idx_docs_idx"(rowid, embedding)    SELECT new.rowid, new."e" WHERE new."e" IS NOT NULL    AND (old.rowid IS NOT new.rowid OR old."e" IS NOT new."e"); END');
        INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('trigger','vecsync_idx_docs_idx_ad','docs',0,'CREATE TRIGGER "vecsync_idx_docs_idx_ad" AFTER DELETE ON "docs" BEGIN  DELETE FROM "vecsync_idx_docs_idx" WHERE rowid=old.rowid; END');
        PRAGMA writable_schema=OFF;
        COMMIT;
        """

    @Test("an index made by the previous version keeps working: its writes, then a search")
    func indexMadeByThePreviousVersionKeepsWorking() throws {
        try withTemporaryFile("previous-index", named: "docs.sqlite") { path in
            let load = try Shell.run(Self.previousVersionDump, databasePath: path)
            #expect(load.stderr == "", "\(load.stderr)")
            // Writes go through the old triggers first; the search then rebuilds with the new ones.
            let run = try Shell.run(
                """
                insert into docs values (4, 'd', vector32('[0.9,0.1,0]'));
                update docs set e = vector32('[0,0.2,1]') where id = 2;
                delete from docs where id = 3;
                select id, printf('%.4f', distance) from vector_top_k('docs_idx', vector32('[1,0,0]'), 5);
                insert into docs values (5, 'e', vector32('[1,1,1]'));
                select id from vector_top_k('docs_idx', vector32('[1,1,1]'), 1);
                select value from vecsync_idx_docs_idx_info where key = 'backfilled';
                """, databasePath: path)
            #expect(run.stderr == "", "\(run.stderr)")
            #expect(run.stdout == "1|0.0000\n4|0.1414\n2|1.4283\n5\n3\n", "\(run.stdout)")
        }
    }
}
