"""LangChain's SQLiteVec vector store (langchain_community.vectorstores.SQLiteVec) on
sqlite-vec 0.1.9 and on VecSync, the same calls compared.

LangChain's own tests of SQLiteVec live in its repository, not in the package: these do what
they do (from_texts on an in-memory database and a search for the first text; the three texts
with their scores in order; add_texts with metadatas doubling the store; two stores in two
tables) and what its documentation shows (a store on a file; a store on a connection opened
beforehand, with add_texts).

SQLiteVec opens its own connections in create_connection, which calls sqlite_vec.load: for
from_texts, and for SQLiteVec(connection=None), the VecSync run points sqlite_vec.load at
vecsync.load. A user who opens the connection can load VecSync into it and pass it; the
tests that pass a connection do that.
"""
import pytest
from langchain_community.vectorstores import SQLiteVec
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from side_by_side import assert_same_neighbours, connect, expect_loaded, run_both

TEXTS = ["foo", "bar", "baz"]


class IndexEmbeddings(Embeddings):
    """The embedding LangChain's vector store tests use: the i-th text of a batch is nine 1s
    and then i, every query is nine 1s and a 0, so a text's L2 distance to any query is its
    index in the batch it was added with."""

    def embed_documents(self, texts):
        return [[1.0] * 9 + [float(i)] for i in range(len(texts))]

    def embed_query(self, text):
        return [1.0] * 9 + [0.0]


def scored(pairs):
    """(document, distance) pairs as (key, distance), the key naming the document."""
    return [((doc.page_content, sorted(doc.metadata.items())), distance) for doc, distance in pairs]


def test_from_texts_finds_the_query_text_first():
    def scenario(name):
        store = SQLiteVec.from_texts(TEXTS, IndexEmbeddings(), table="test", db_file=":memory:")
        expect_loaded(store._connection, name)
        return store.similarity_search("foo", k=1)

    expected, actual = run_both(scenario)
    assert expected == [Document(page_content="foo", metadata={})]
    assert actual == expected


def paged_store(name):
    """TEXTS in a store on `name`, each with its page number as metadata."""
    store = SQLiteVec.from_texts(TEXTS, IndexEmbeddings(),
                                 metadatas=[{"page": i} for i in range(len(TEXTS))],
                                 table="test", db_file=":memory:")
    expect_loaded(store._connection, name)
    return store


def test_similarity_search_with_score_returns_each_text_at_its_distance():
    def scenario(name):
        return paged_store(name).similarity_search_with_score("foo", k=3)

    expected, actual = run_both(scenario)
    assert [doc for doc, _ in expected] == [
        Document(page_content="foo", metadata={"page": 0}),
        Document(page_content="bar", metadata={"page": 1}),
        Document(page_content="baz", metadata={"page": 2}),
    ]
    assert [distance for _, distance in expected] == [0.0, 1.0, 2.0]
    assert_same_neighbours("similarity_search_with_score('foo', k=3)",
                           scored(expected), scored(actual))


def test_add_texts_with_metadatas_adds_rows_at_tied_distances():
    """The second batch embeds like the first: each text is there twice, at one distance."""
    def scenario(name):
        store = paged_store(name)
        ids = store.add_texts(TEXTS, [{"page": i, "batch": 2} for i in range(len(TEXTS))])
        return ids, store.similarity_search_with_score("foo", k=10)

    (expected_ids, expected), (actual_ids, actual) = run_both(scenario)
    assert expected_ids == [4, 5, 6] and actual_ids == expected_ids
    assert len(expected) == 6
    assert_same_neighbours("add_texts(...) then similarity_search_with_score('foo', k=10)",
                           scored(expected), scored(actual))


def test_two_stores_in_two_tables_search_independently():
    def scenario(name):
        first = SQLiteVec.from_texts(TEXTS, IndexEmbeddings(), table="table_1", db_file=":memory:")
        second = SQLiteVec.from_texts(TEXTS[::-1], IndexEmbeddings(), table="table_2",
                                      db_file=":memory:")
        for store in (first, second):
            expect_loaded(store._connection, name)
        return (first.similarity_search_with_score("foo", k=2),
                second.similarity_search_with_score("foo", k=2))

    (expected_1, expected_2), (actual_1, actual_2) = run_both(scenario)
    assert [doc.page_content for doc, _ in expected_1] == ["foo", "bar"]
    assert [doc.page_content for doc, _ in expected_2] == ["baz", "bar"]
    assert_same_neighbours("table_1: similarity_search_with_score('foo', k=2)",
                           scored(expected_1), scored(actual_1))
    assert_same_neighbours("table_2: similarity_search_with_score('foo', k=2)",
                           scored(expected_2), scored(actual_2))


# 301 texts whose embeddings (48 normal deviates seeded by each text's hash) follow no pattern.
MANY_TEXTS = ["document %d about %s" % (i, topic) for i, topic in
              enumerate(["cats", "dogs", "ships", "planes", "rivers", "stars", "songs"] * 43)]
EMBEDDING = DeterministicFakeEmbedding(size=48)


@pytest.mark.parametrize("query, k", [("document 3 about planes", 1), ("cats", 5),
                                      ("document 150 about stars", 20), ("anything", 400)])
def test_documented_store_on_a_file_matches_sqlite_vec(tmp_path, query, k):
    """The documentation's usage: SQLiteVec(table=..., db_file=..., embedding=...), then
    add_texts and similarity_search. k=400 asks for more rows than the 301 stored."""
    def scenario(name):
        store = SQLiteVec(table="state_union", connection=None, embedding=EMBEDDING,
                          db_file=str(tmp_path / ("%s.db" % name)))
        expect_loaded(store._connection, name)
        store.add_texts(MANY_TEXTS, [{"n": i} for i in range(len(MANY_TEXTS))])
        return (store.similarity_search_with_score(query, k=k),
                [doc.page_content for doc in store.similarity_search(query, k=k)])

    (expected, expected_docs), (actual, actual_docs) = run_both(scenario)
    assert len(expected) == min(k, len(MANY_TEXTS))
    assert_same_neighbours("similarity_search_with_score(%r, k=%d)" % (query, k),
                           scored(expected), scored(actual))
    assert_same_neighbours("similarity_search(%r, k=%d)" % (query, k),
                           [(text, d) for text, (_, d) in zip(expected_docs, expected)],
                           [(text, d) for text, (_, d) in zip(actual_docs, actual)])


def test_store_on_a_connection_the_user_opened():
    """A connection opened and loaded by hand, passed to SQLiteVec (with rows by name, as
    SQLiteVec's add_texts reads them): for sqlite-vec, SQLiteVec.create_connection as its
    documentation shows; for VecSync, sqlite3.connect and vecsync.load."""
    def scenario(name):
        if name == "vecsync":
            conn = connect("vecsync")
        else:
            conn = SQLiteVec.create_connection(db_file=":memory:")
        expect_loaded(conn, name)
        store = SQLiteVec(table="state_union", connection=conn, embedding=EMBEDDING)
        ids = store.add_texts(["Ketanji Brown Jackson is awesome", "foo", "bar"])
        ids += store.add_texts(MANY_TEXTS[:100], [{"n": i} for i in range(100)])
        vector = EMBEDDING.embed_query("Ketanji Brown Jackson")
        return ids, store.similarity_search_with_score("Ketanji Brown Jackson", k=4), [
            (doc.page_content, d) for doc, d in
            store.similarity_search_with_score_by_vector([x * 3 for x in vector], k=7)]

    (expected_ids, expected, expected_by_vector), (actual_ids, actual, actual_by_vector) = \
        run_both(scenario)
    assert expected_ids == list(range(1, 104)) and actual_ids == expected_ids
    assert_same_neighbours("similarity_search_with_score('Ketanji Brown Jackson', k=4)",
                           scored(expected), scored(actual))
    assert_same_neighbours("similarity_search_with_score_by_vector(3 * query, k=7)",
                           expected_by_vector, actual_by_vector)


def test_store_reopened_on_its_file_finds_what_it_stored(tmp_path):
    """A second SQLiteVec on the same file and table (CREATE ... IF NOT EXISTS on tables that
    exist) sees the first one's rows; each library writes and reads its own file."""
    def scenario(name):
        path = str(tmp_path / ("%s.db" % name))
        first = SQLiteVec.from_texts(MANY_TEXTS[:50], EMBEDDING, table="docs", db_file=path)
        first._connection.close()
        again = SQLiteVec(table="docs", connection=None, embedding=EMBEDDING, db_file=path)
        expect_loaded(again._connection, name)
        again.add_texts(MANY_TEXTS[50:60])
        return again.similarity_search_with_score(MANY_TEXTS[55], k=5)

    expected, actual = run_both(scenario)
    assert expected[0][0].page_content == MANY_TEXTS[55] and expected[0][1] == 0.0
    assert_same_neighbours("similarity_search_with_score(MANY_TEXTS[55], k=5) after reopening",
                           scored(expected), scored(actual))

