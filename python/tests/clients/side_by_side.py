"""What every client test here shares: running one client's code twice, once on sqlite-vec
0.1.9 and once with VecSync loaded in its place, and comparing what the two return.

A client is swapped the way its user would: where the client calls `sqlite_vec.load(conn)`
itself (LangChain's SQLiteVec.create_connection, the sqlite-utils plugin, sqlite-vec-client),
`sqlite_vec.load` is pointed at `vecsync.load` for the VecSync run and left alone for the
other; where the client takes a connection, it is handed one that loaded VecSync. Each run
checks which library its connections really carry (`loaded_extension`), so a swap that
silently fell through cannot make the two runs compare sqlite-vec with itself.

The two libraries export no symbol in common, so both load into one process.
"""
import math
import sqlite3

import pytest
import sqlite_vec

import vecsync

EXTENSIONS = ("sqlite-vec", "vecsync")

# Distances agree to this relative tolerance, or this absolute one near zero (where float32
# sums leave a few 1e-8 where the exact answer is 0).
REL_TOL = 1e-5
ABS_TOL = 1e-6


def use_extension(name, monkeypatch):
    """Make the clients' `sqlite_vec.load(conn)` load `name` ("sqlite-vec" or "vecsync") until
    monkeypatch is undone."""
    assert name in EXTENSIONS, name
    if name == "vecsync":
        monkeypatch.setattr(sqlite_vec, "load", vecsync.load)


def run_both(scenario):
    """scenario(name) once with each library in place, sqlite-vec first; returns the two
    answers (sqlite-vec's, VecSync's). The scenario uses the client as its user does and
    calls expect_loaded on a connection the client opened."""
    answers = []
    for name in EXTENSIONS:
        with pytest.MonkeyPatch.context() as monkeypatch:
            use_extension(name, monkeypatch)
            answers.append(scenario(name))
    return answers


def expect_loaded(conn, name):
    """Fail unless conn carries `name`: the swap reached the client's connection."""
    assert loaded_extension(conn) == name, "the client's connection did not load %s" % name


def loaded_extension(conn):
    """Which of the two libraries conn has loaded: VecSync defines vecsync_version(), which
    sqlite-vec does not; both define vec_version()."""
    try:
        conn.execute("select vecsync_version()").fetchall()
        return "vecsync"
    except sqlite3.OperationalError as error:
        if "no such function" not in str(error):
            raise
    conn.execute("select vec_version()").fetchall()
    return "sqlite-vec"


def connect(name, path=":memory:"):
    """A sqlite3 connection with `name` loaded, opened as the clients' own create_connection
    opens theirs (rows by column name)."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    conn.enable_load_extension(True)
    if name == "vecsync":
        vecsync.load(conn)
    else:
        sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn


def same_distance(a, b):
    """Two distances agree: both NULL (sqlite-vec's answer for a zero vector under cosine),
    or close in float32 terms."""
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def assert_same_neighbours(call, expected, actual, ties_cut_at=None):
    """`expected` (sqlite-vec's) and `actual` (VecSync's) are the nearest-first results of
    `call` (the client call, for the message), as lists of (key, distance): key is whatever
    names a row (an id, a text, a text with its metadata).

    They must have the same length and the same distance at each position. Rows at equal
    distance may come in either order, so within each run of equal distances the keys are
    compared as multisets. Where the data has exact ties, pass the query's k as ties_cut_at:
    when the result holds exactly k rows its last run may have been cut at k, and then either
    library may keep other members of that tie (elsewhere that run is compared too)."""
    message = "%s\n  sqlite-vec 0.1.9: %r\n  VecSync:          %r" % (call, expected, actual)
    assert len(actual) == len(expected), "row count differs:\n" + message
    for i, ((_, want), (_, got)) in enumerate(zip(expected, actual)):
        assert same_distance(want, got), "distance of row %d differs:\n%s" % (i + 1, message)
    start = 0
    while start < len(expected):
        end = start + 1
        while end < len(expected) and same_distance(expected[end][1], expected[start][1]):
            end += 1
        cut_tie = end == len(expected) == ties_cut_at
        if not cut_tie:
            want = sorted(repr(key) for key, _ in expected[start:end])
            got = sorted(repr(key) for key, _ in actual[start:end])
            assert got == want, "rows %d-%d (distance %r) differ:\n%s" % (
                start + 1, end, expected[start][1], message)
        start = end

