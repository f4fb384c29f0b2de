"""A file sqlite-vec 0.1.9 wrote, opened with VecSync and taken back: reading leaves it
byte for byte as it was; writes wait for vecsync_migrate_sqlite_vec; after writes,
vecsync_export_sqlite_vec hands it back and sqlite-vec answers as VecSync did.

The tables cover sqlite-vec's layouts: a text primary key, a partition key, float32, bit and
int8 vectors, boolean/integer/float/text metadata (texts longer than 12 bytes included),
an auxiliary column with NULLs, a small chunk_size so rows span several chunks, deleted rows,
and LangChain's `rowid INTEGER PRIMARY KEY` declaration.
"""
import hashlib
import random
import sqlite3
import struct

import pytest

from side_by_side import connect, same_distance

QUERIES = [
    ("select id, distance, user_id, flag, n, f, s, aux from t "
     "where e match ? and k = 12 and user_id = 1", "4f"),
    ("select id, distance from t where e match ? and k = 8 and flag = 1 and n > 40", "4f"),
    ("select id, distance from t where b match vec_bit(?) and k = 5", None),
    ("select rowid, distance from u where e match ? and k = 6", "3f"),
]
SCANS = [
    "select id, user_id, hex(e), hex(b), hex(i), flag, n, f, s, aux from t order by id",
    "select rowid, hex(e) from u order by rowid",
]


def answers(conn, rng):
    """Every query with fixed random vectors (rng seeded by the caller), then every scan: a
    list of ("knn", rows) and ("scan", rows)."""
    out = []
    for sql, fmt in QUERIES:
        for _ in range(3):
            if fmt is None:
                q = bytes([rng.randrange(256)])
            else:
                n = int(fmt[:-1])
                q = struct.pack(fmt, *[rng.uniform(-1, 1) for _ in range(n)])
            out.append(("knn", [tuple(row) for row in conn.execute(sql, (q,))]))
    for sql in SCANS:
        out.append(("scan", [tuple(row) for row in conn.execute(sql)]))
    return out


def answers_of(path, extension, seed):
    """answers() on a new connection of `extension` ("sqlite-vec" or "vecsync") to path."""
    conn = connect(extension, path)
    try:
        return answers(conn, random.Random(seed))
    finally:
        conn.close()


def close(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return same_distance(a, b)
    return a == b


def same_rows(a, b):
    return len(a) == len(b) and all(
        len(x) == len(y) and all(close(u, v) for u, v in zip(x, y)) for x, y in zip(a, b))


def same_knn(a, b):
    """Equal distances in order; rows at equal distance in either order (ties aside), and at
    the last distance, where k cuts a tie, any of the tied rows."""
    if len(a) != len(b) or not all(close(x[1], y[1]) for x, y in zip(a, b)):
        return False
    if not a:
        return True
    last = a[-1][1]
    groups_a, groups_b = {}, {}
    for rows, groups in ((a, groups_a), (b, groups_b)):
        for row in rows:
            if not close(row[1], last):
                groups.setdefault(round(row[1], 5), set()).add((row[0],) + tuple(row[2:]))
    return groups_a == groups_b


def same(a, b):
    return len(a) == len(b) and all(
        x[0] == y[0] and (same_knn if x[0] == "knn" else same_rows)(x[1], y[1])
        for x, y in zip(a, b))


def write_with_sqlite_vec(path):
    rng = random.Random(20261128)
    conn = connect("sqlite-vec", path)
    conn.execute(
        "create virtual table t using vec0(id text primary key, user_id integer partition key, "
        "e float[4] distance_metric=cosine, b bit[8], i int8[2], flag boolean, n integer, "
        "f float, s text, +aux text, chunk_size=8)")
    conn.execute("create virtual table u using vec0(rowid INTEGER PRIMARY KEY, e float[3])")
    for k in range(60):
        conn.execute(
            "insert into t(id, user_id, e, b, i, flag, n, f, s, aux) "
            "values (?, ?, ?, vec_bit(?), vec_int8(?), ?, ?, ?, ?, ?)",
            ("id%02d" % k, k % 3, struct.pack("4f", *[rng.uniform(-1, 1) for _ in range(4)]),
             bytes([(k * 37) % 256]), struct.pack("2b", k % 100, -(k % 100)), k % 2, k * 7,
             k / 3, "text %d %s" % (k, "x" * (k % 20)), None if k % 5 == 0 else "aux%d" % k))
    for k in range(40):
        conn.execute("insert into u(rowid, e) values (?, ?)",
                     (k + 1, struct.pack("3f", *[rng.uniform(-1, 1) for _ in range(3)])))
    conn.execute("delete from t where id in ('id05', 'id17', 'id30')")
    conn.execute("delete from u where rowid in (3, 9, 27)")
    conn.commit()
    conn.close()


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_reading_leaves_the_file_as_it_was(tmp_path):
    path = str(tmp_path / "sv.db")
    write_with_sqlite_vec(path)
    theirs = answers_of(path, "sqlite-vec", 7)
    before = digest(path)

    conn = connect("vecsync", path)
    ours = answers(conn, random.Random(7))
    with pytest.raises(sqlite3.OperationalError, match="vecsync_migrate_sqlite_vec"):
        conn.execute("insert into u(rowid, e) values (100, '[1, 2, 3]')")
    conn.close()
    assert same(ours, theirs)
    assert digest(path) == before, "a read through VecSync changed the file"

    # sqlite-vec still opens it and writes it.
    assert same(answers_of(path, "sqlite-vec", 7), theirs)
    conn = connect("sqlite-vec", path)
    conn.execute("insert into u(rowid, e) values (100, '[1, 2, 3]')")
    conn.commit()
    conn.close()


def test_migrated_written_and_exported_sqlite_vec_answers_as_vecsync_did(tmp_path):
    path = str(tmp_path / "sv.db")
    write_with_sqlite_vec(path)
    theirs = answers_of(path, "sqlite-vec", 11)

    conn = connect("vecsync", path)
    assert tuple(conn.execute(
        "select vecsync_migrate_sqlite_vec('t'), vecsync_migrate_sqlite_vec('u')"
    ).fetchone()) == ("t: 57 rows migrated", "u: 37 rows migrated")
    assert same(answers(conn, random.Random(11)), theirs)
    conn.execute(
        "insert into t(id, user_id, e, b, i, flag, n, f, s, aux) values "
        "('new', 1, '[0.5, 0.5, 0.5, 0.5]', vec_bit(x'f0'), vec_int8('[3, 4]'), 1, 99, 1.5, "
        "'a text of more than twelve bytes', 'fresh')")
    conn.execute("update t set e = '[1, 0, 0, 0]', s = 'short' where id = 'id01'")
    conn.execute("delete from t where id = 'id02'")
    conn.execute("insert into u(rowid, e) values (500, '[0.1, 0.2, 0.3]')")
    conn.execute("delete from u where rowid = 1")
    conn.commit()
    ours = answers(conn, random.Random(12))
    assert tuple(conn.execute(
        "select vecsync_export_sqlite_vec('t'), vecsync_export_sqlite_vec('u')"
    ).fetchone()) == ("t: 57 rows exported", "u: 37 rows exported")
    conn.commit()
    conn.close()

    assert same(answers_of(path, "sqlite-vec", 12), ours)
    conn = connect("sqlite-vec", path)
    # sqlite-vec keeps writing where VecSync left it: a new row, in a partition's chunk.
    conn.execute(
        "insert into t(id, user_id, e, b, i, flag, n, f, s, aux) values "
        "('later', 1, '[0.5, 0.5, 0.5, 0.6]', vec_bit(x'0f'), vec_int8('[1, 1]'), 0, 1, 0.5, "
        "'s', NULL)")
    assert tuple(conn.execute(
        "select id from t where e match '[0.5, 0.5, 0.5, 0.6]' and k = 1 and user_id = 1"
    ).fetchone()) == ("later",)
    conn.commit()
    conn.close()
