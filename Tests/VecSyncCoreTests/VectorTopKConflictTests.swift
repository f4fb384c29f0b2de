import Testing

/// A libSQL vector index stays in step with its table through every way SQLite resolves a
/// conflict: OR IGNORE and upserts keep the row's index entry, OR REPLACE swaps it, a
/// replacement with a NULL embedding removes it.
@Suite("vector_top_k through conflict resolution")
struct VectorTopKConflictTests {
    static let table = """
        create table docs(id text primary key, title text, e F32_BLOB(2));
        create index docs_idx on docs(libsql_vector_idx(e));
        insert into docs values ('a', 't', vector32('[1,0]')), ('b', 'u', vector32('[0,1]'));
        select count(*) from vector_top_k('docs_idx', vector32('[1,0]'), 5);

        """
    static let search =
        "select d.id || ':' || d.title from vector_top_k('docs_idx', vector32('[1,0]'), 5) v join docs d on d.rowid = v.id;"

    static let cases: [SQLCase] = [
        SQLCase(
            "INSERT OR IGNORE of an existing key keeps its index entry",
            table + "insert or ignore into docs values ('a', 'x', vector32('[0,1]'));\n" + search,
            rows: ["2", "a:t", "b:u"]),
        SQLCase(
            "an upsert that updates only the title keeps the index entry",
            table
                + "insert into docs values ('a', 'y', vector32('[0,1]')) on conflict(id) do update set title = excluded.title;\n"
                + search,
            rows: ["2", "a:y", "b:u"]),
        SQLCase(
            "INSERT OR REPLACE swaps the entry for the new row's",
            table + "insert or replace into docs values ('a', 'z', vector32('[0.6,0.8]'));\n" + search,
            rows: ["2", "a:z", "b:u"]),
        SQLCase(
            "INSERT OR REPLACE with a NULL embedding removes the entry",
            table + "insert or replace into docs values ('a', 'n', NULL);\n" + search,
            rows: ["2", "b:u"]),
        SQLCase(
            "UPDATE OR IGNORE onto an existing key keeps both entries",
            table + "update or ignore docs set id = 'b' where id = 'a';\n" + search,
            rows: ["2", "a:t", "b:u"]),
        SQLCase(
            "UPDATE OR REPLACE onto an existing key leaves one entry",
            table + "update or replace docs set id = 'b' where id = 'a';\n" + search,
            rows: ["2", "b:t"]),
    ]

    @Test("The index follows the table through conflicts", arguments: SQLPath.allCases, cases)
    func indexFollowsConflicts(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
