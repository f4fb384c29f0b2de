import Foundation
import Testing

/// Bad input to vector_top_k and libsql_vector_idx is one clear error, in-process and in
/// the shell.
@Suite("vector_top_k bad input")
struct VectorTopKBadInputTests {
    static let index = """
        create table docs(id text primary key, embedding F32_BLOB(4), cat text);
        create index docs_idx on docs(libsql_vector_idx(embedding));
        create index docs_cat on docs(cat);
        insert into docs values ('a', vector32('[1, 0, 0, 0]'), 'x'), ('b', vector32('[0, 1, 0, 0]'), 'y');

        """

    /// A k that is not a non-negative integer is refused, and the message shows it.
    static let badKCases: [SQLCase] = [
        ("a negative k is refused", "-1", "-1"),
        ("a non-integer k is refused", "2.5", "2.5"),
        ("a text k is refused", "'ten'", "ten"),
        ("a text k that reads as a number is refused, as libSQL refuses it", "'2'", "2"),
    ].map { title, k, shown in
        SQLCase(
            title, index + "select id from vector_top_k('docs_idx', vector32('[1, 0, 0, 0]'), \(k));",
            error: ["k must be a non-negative integer, got \(shown)"])
    }

    static let topKCases: [SQLCase] = badKCases + [
        SQLCase(
            "k as an integral REAL is accepted, as libSQL does",
            index + "select id from vector_top_k('docs_idx', vector32('[1, 0, 0, 0]'), 2.0);",
            rows: ["1", "2"]),
        SQLCase(
            "a hit's rowid is the row's rowid, so joins on it find the row",
            index + """
                select d.id from vector_top_k('docs_idx', vector32('[0, 1, 0, 0]'), 1) as v join docs d on d.rowid = v.rowid;
                select rowid = id from vector_top_k('docs_idx', vector32('[1, 0, 0, 0]'), 2);
                """,
            rows: ["b", "1", "1"]),
        SQLCase(
            "an unknown index is named",
            index + "select id from vector_top_k('nope', vector32('[1, 0, 0, 0]'), 1);",
            error: ["vector_top_k", "no such index: nope"]),
        SQLCase(
            "an index that is not a vector index is named",
            index + "select id from vector_top_k('docs_cat', vector32('[1, 0, 0, 0]'), 1);",
            error: ["vector_top_k", "docs_cat is not a vector index"]),
        SQLCase(
            "k = 0 returns no row, as in libSQL; the other arguments are still checked",
            index + """
                select id from vector_top_k('docs_idx', vector32('[1, 0, 0, 0]'), 0);
                select id from vector_top_k('nope', vector32('[1, 0, 0, 0]'), 0);
                """,
            error: ["vector_top_k", "no such index: nope"]),
        SQLCase(
            "a query of the wrong dimension names both",
            index + "select id from vector_top_k('docs_idx', vector32('[1, 0, 0]'), 1);",
            error: ["query vector has 3 dimensions", "docs_idx has 4"]),
        SQLCase(
            "an insert of the wrong dimension into an indexed column is refused, before any search",
            index + "insert into docs values ('c', vector32('[1, 0]'), 'x');",
            error: ["2 dimensions", "has 4"]),
        SQLCase(
            "an insert of the wrong dimension into an indexed column is refused, after a search",
            index + """
                select id from vector_top_k('docs_idx', vector32('[1, 0, 0, 0]'), 1) where id < 0;
                insert into docs values ('c', vector32('[1, 0]'), 'x');
                """,
            error: ["2 dimensions", "has 4"]),
        SQLCase(
            "an unknown option is refused when the index is created over rows",
            index + "create index docs_bad on docs(libsql_vector_idx(embedding, 'neighbours=8'));",
            error: ["vector index: invalid vector index parameter 'neighbours=8': invalid parameter"]),
        SQLCase(
            "an unknown option on an empty table is refused at the first search",
            """
            create table e(id integer primary key, embedding F32_BLOB(2));
            create index e_idx on e(libsql_vector_idx(embedding, 'neighbours=8'));
            select id from vector_top_k('e_idx', vector32('[1, 0]'), 1);
            """,
            error: ["vector index: invalid vector index parameter 'neighbours=8': invalid parameter"]),
        SQLCase(
            "an unknown metric is refused",
            index + "create index docs_bad on docs(libsql_vector_idx(embedding, 'metric=manhattan'));",
            error: ["vector index: invalid vector index parameter 'metric=manhattan': invalid parameter"]),
        SQLCase(
            "libSQL's ANN tuning options are accepted and ignored",
            index + """
                create index docs_ann on docs(libsql_vector_idx(embedding, 'metric=cosine', 'max_neighbors=20', 'compress_neighbors=float8', 'alpha=1.2', 'search_l=200', 'insert_l=70'));
                select id from vector_top_k('docs_ann', vector32('[0, 1, 0, 0]'), 1);
                """,
            rows: ["2"]),
        SQLCase(
            "k larger than the row count returns every row, NULL embeddings skipped",
            index + """
                insert into docs values ('c', NULL, 'z');
                select id, distance from vector_top_k('docs_idx', vector32('[1, 0, 0, 0]'), 50);
                """,
            rows: ["1|0.0", "2|1.0"]),
    ]

    @Test(arguments: SQLPath.allCases, topKCases)
    func vectorTopKBadInputIsOneClearError(path: SQLPath, sqlCase: SQLCase) {
        sqlCase.verify(path)
    }
}
