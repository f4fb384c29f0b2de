"""A pytest plugin under which sqlite-vec-client's own test suite (the tests/ folder of its
sdist) runs: `python -m pytest -p sqlite_vec_client_suite_plugin SDIST/tests`, with this
folder on PYTHONPATH. test_sqlite_vec_client_suite.py runs it so, once per library.

VECSYNC_CLIENT_EXTENSION ("sqlite-vec" or "vecsync") chooses the library: for "vecsync",
sqlite_vec.load, which sqlite-vec-client's create_connection calls, loads VecSync instead.
The run fails at its start unless the client's connections carry that library.
VECSYNC_CLIENT_OUTCOMES names a JSON file that receives each test's outcome ("passed",
"failed", "skipped", or "error" for a fixture that failed) and a failure's text.

The sdist ships the tests without the conftest.py that gives them their fixtures; they are
defined here, as the suite uses them: a client on a file in a temporary folder, with a
3-dimensional cosine table (with a unique text index for the on_conflict tests), three
texts, three embeddings, three metadata dictionaries.
"""
import json
import os
import tempfile

import pytest
import sqlite_vec

import vecsync

EXTENSION = os.environ.get("VECSYNC_CLIENT_EXTENSION", "sqlite-vec")
if EXTENSION == "vecsync":
    sqlite_vec.load = vecsync.load

from sqlite_vec_client import SQLiteVecClient  # noqa: E402  (after the swap, as a user's import)

from side_by_side import loaded_extension  # noqa: E402

_outcomes = {}


def pytest_configure(config):
    for marker in ("unit", "integration", "slow"):
        config.addinivalue_line("markers", "%s: sqlite-vec-client's marker" % marker)


def pytest_sessionstart(session):
    conn = SQLiteVecClient.create_connection(":memory:")
    try:
        found = loaded_extension(conn)
    finally:
        conn.close()
    if found != EXTENSION:
        raise pytest.UsageError("sqlite-vec-client's connections loaded %s, not %s"
                                % (found, EXTENSION))


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        outcome = report.outcome
        if report.when != "call" and outcome == "failed":
            outcome = "error"
        if report.nodeid not in _outcomes or _outcomes[report.nodeid]["outcome"] == "passed":
            _outcomes[report.nodeid] = {"outcome": outcome, "text": report.longreprtext[-3000:]}


def pytest_sessionfinish(session):
    path = os.environ.get("VECSYNC_CLIENT_OUTCOMES")
    if path:
        with open(path, "w") as out:
            json.dump({"extension": EXTENSION, "outcomes": _outcomes}, out, indent=1)


@pytest.fixture
def temp_db():
    with tempfile.TemporaryDirectory() as folder:
        yield os.path.join(folder, "test.db")


@pytest.fixture
def client(temp_db):
    client = SQLiteVecClient(table="test_table", db_path=temp_db)
    yield client
    client.close()


@pytest.fixture
def client_with_table(client):
    client.create_table(dim=3, distance="cosine")
    return client


@pytest.fixture
def client_with_unique_table(client):
    client.create_table(dim=3, distance="cosine", unique_text=True)
    return client


@pytest.fixture
def sample_texts():
    return ["hello world", "lorem ipsum", "vector database"]


@pytest.fixture
def sample_embeddings():
    return [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]]


@pytest.fixture
def sample_metadata():
    return [{"category": "greeting", "lang": "en"}, {"category": "placeholder", "lang": "la"},
            {"category": "tech", "lang": "en"}]
