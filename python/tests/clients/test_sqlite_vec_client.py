"""sqlite-vec-client's documented API (its README: quick start, metadata filtering, bulk
operations, backup and restore) on sqlite-vec 0.1.9 and on VecSync, the same calls compared.
Its own suite runs too (test_sqlite_vec_client_suite.py), but asserts on its own terms; here
every search's rows, ids and distances are compared between the two libraries.

SQLiteVecClient.create_connection calls sqlite_vec.load; the VecSync run points that at
vecsync.load. Each library has its own database file.
"""
import random

import pytest
from sqlite_vec_client import SQLiteVecClient

from side_by_side import assert_same_neighbours, expect_loaded, run_both

SEED = 20261128


def hits(results):
    """similarity_search's (rowid, text, distance) as ((rowid, text), distance)."""
    return [((rowid, text), distance) for rowid, text, distance in results]


def test_readme_quick_start(tmp_path):
    def scenario(name):
        client = SQLiteVecClient(table="documents", db_path=str(tmp_path / ("%s.db" % name)))
        expect_loaded(client.connection, name)
        client.create_table(dim=384, distance="cosine")
        rowids = client.add(texts=["hello world", "lorem ipsum", "vector databases"], embeddings=[
            [0.1, 0.2, 0.3, *([0.0] * 381)],
            [0.05, 0.04, 0.03, *([0.0] * 381)],
            [0.2, 0.1, 0.05, *([0.0] * 381)],
        ])
        found = client.similarity_search(embedding=[0.1, 0.2, 0.3, *([0.0] * 381)], top_k=3)
        rows = client.get_many(rowids)
        client.close()
        return rowids, found, rows

    (expected_ids, expected, expected_rows), (actual_ids, actual, actual_rows) = run_both(scenario)
    assert expected_ids == [1, 2, 3] and actual_ids == expected_ids
    assert expected[0][:2] == (1, "hello world")
    assert_same_neighbours("similarity_search(embedding=query_emb, top_k=3)",
                           hits(expected), hits(actual))
    assert actual_rows == expected_rows


def library(rnd, dim, n):
    """n texts, embeddings and metadata: copies and scaled copies of a few base vectors (so
    that distances tie, under cosine most of all) among vectors of their own."""
    base = [[round(rnd.gauss(0, 1), 4) for _ in range(dim)] for _ in range(6)]
    texts, embeddings, metadata = [], [], []
    for i in range(n):
        if rnd.random() < 0.5:
            vector = [x * rnd.choice([1.0, 2.0, 0.5]) for x in rnd.choice(base)]
        else:
            vector = [round(rnd.gauss(0, 1), 4) for _ in range(dim)]
        texts.append("text %d" % i)
        embeddings.append(vector)
        metadata.append({"category": rnd.choice(["news", "blog", "paper"]), "year": 2020 + i % 5})
    return texts, embeddings, metadata


@pytest.mark.parametrize("distance", ["cosine", "L2", "L1"])
def test_searches_after_adds_updates_and_deletes(tmp_path, distance):
    """add, similarity_search (k below, at and above the row count),
    similarity_search_with_filter, then update_many (new embeddings reach the vec0 table by
    the client's UPDATE trigger), delete_many (its DELETE trigger), and the searches again."""
    dim = 24

    def scenario(name):
        rnd = random.Random(SEED)
        texts, embeddings, metadata = library(rnd, dim, 240)
        queries = [embeddings[3], embeddings[100]] + [
            [round(rnd.gauss(0, 1), 4) for _ in range(dim)] for _ in range(3)]
        client = SQLiteVecClient(table="docs", db_path=str(tmp_path / ("%s.db" % name)))
        expect_loaded(client.connection, name)
        client.create_table(dim=dim, distance=distance)
        rowids = client.add(texts=texts, embeddings=embeddings, metadata=metadata)
        answers = {"rowids": rowids}

        def search(stage):
            for q, query in enumerate(queries):
                for top_k in (1, 10, 300):
                    answers[(stage, q, top_k)] = hits(client.similarity_search(query, top_k=top_k))
                # top_k above the row count: the filter sees every row, so no tie is cut
                # before it (the client filters after the KNN query).
                answers[(stage, q, "filter")] = hits(client.similarity_search_with_filter(
                    query, filters={"category": "paper"}, top_k=300))

        search("added")
        with client.transaction():
            client.update_many([(rowid, None, {"category": "blog", "year": 2030},
                                 [round(rnd.gauss(0, 1), 4) for _ in range(dim)])
                                for rowid in rowids[::7]])
            client.delete_many(rowids[1::5])
        answers["count"] = client.count()
        search("changed")
        client.close()
        return answers

    expected, actual = run_both(scenario)
    assert actual["rowids"] == expected["rowids"] and actual["count"] == expected["count"]
    for key in expected:
        if key in ("rowids", "count"):
            continue
        stage, q, top_k = key
        call = ("similarity_search(query %d, top_k=%d)" % (q, top_k) if top_k != "filter" else
                "similarity_search_with_filter(query %d, {'category': 'paper'}, top_k=300)" % q)
        assert_same_neighbours("%s table, %s rows: %s" % (distance, stage, call),
                               expected[key], actual[key],
                               ties_cut_at=top_k if top_k != "filter" else None)


def test_backup_then_restore_into_a_new_client_searches_the_same(tmp_path):
    def scenario(name):
        rnd = random.Random(SEED + 1)
        texts, embeddings, metadata = library(rnd, 16, 80)
        source = SQLiteVecClient(table="notes", db_path=str(tmp_path / ("%s-a.db" % name)))
        source.create_table(dim=16, distance="L2")
        source.add(texts=texts, embeddings=embeddings, metadata=metadata)
        backup = str(tmp_path / ("%s.jsonl" % name))
        source.backup(backup)
        source.close()
        restored = SQLiteVecClient(table="notes", db_path=str(tmp_path / ("%s-b.db" % name)))
        expect_loaded(restored.connection, name)
        restored.create_table(dim=16, distance="L2")
        count = restored.restore(backup)
        found = hits(restored.similarity_search(embeddings[10], top_k=12))
        restored.close()
        return count, found

    (expected_count, expected), (actual_count, actual) = run_both(scenario)
    assert expected_count == 80 and actual_count == expected_count
    assert_same_neighbours("restore(backup) then similarity_search(embeddings[10], top_k=12)",
                           expected, actual, ties_cut_at=12)



def zero_embeddings_scenario(tmp_path):
    """A cosine table of ten rows, three of them all-zero embeddings (the client's own suite
    stores one: its get_all test embeds "text 0" as [0, 0, 0]), searched with a query and
    with a zero query, k above the row count; and the rows as get_all returns them."""
    def scenario(name):
        client = SQLiteVecClient(table="docs", db_path=str(tmp_path / ("%s.db" % name)))
        expect_loaded(client.connection, name)
        client.create_table(dim=3, distance="cosine")
        client.add(texts=["text %d" % i for i in range(10)],
                   embeddings=[[float(i), float(i % 3), 1.0] if i % 4 else [0.0, 0.0, 0.0]
                               for i in range(10)])
        found = hits(client.similarity_search([1.0, 2.0, 3.0], top_k=20))
        zero_query = hits(client.similarity_search([0.0, 0.0, 0.0], top_k=20))
        stored = [(rowid, text, embedding) for rowid, text, _, embedding in client.get_all()]
        client.close()
        return found, zero_query, stored

    return run_both(scenario)


def test_zero_embeddings_in_a_cosine_table_are_stored_with_null_distances(tmp_path):
    """Both libraries store the zero embeddings and give them a NULL distance, as they give
    every row for a zero query; the other rows come in the same order. (Where the NULL rows
    come is the next test's.)"""
    (expected, expected_zero, expected_stored), (actual, actual_zero, actual_stored) = \
        zero_embeddings_scenario(tmp_path)
    assert actual_stored == expected_stored and len(expected_stored) == 10
    null_rows = [(1, "text 0"), (5, "text 4"), (9, "text 8")]
    assert sorted(key for key, d in expected if d is None) == null_rows
    assert sorted(key for key, d in actual if d is None) == null_rows
    assert_same_neighbours("similarity_search([1, 2, 3], top_k=20), rows with a distance",
                           [row for row in expected if row[1] is not None],
                           [row for row in actual if row[1] is not None])
    assert len(expected_zero) == 10 and {d for _, d in expected_zero} == {None}
    assert_same_neighbours("similarity_search([0, 0, 0], top_k=20)", expected_zero, actual_zero)


def test_order_by_distance_puts_null_distances_first(tmp_path):
    """similarity_search's SQL ends in ORDER BY v.distance: with every row among the k, the
    order is SQL's, NULL distances first, then nearest first."""
    (expected, _, _), (actual, _, _) = zero_embeddings_scenario(tmp_path)
    assert [d for _, d in expected[:3]] == [None] * 3
    assert_same_neighbours("similarity_search([1, 2, 3], top_k=20) (ORDER BY v.distance)",
                           expected, actual)
