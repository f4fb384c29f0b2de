"""The installed vecsync package, loaded the two ways Python reaches SQLite: the standard
library's sqlite3 (where the interpreter allows extension loading) and apsw.

    python -m pytest python/tests        # with vecsync, pytest and apsw installed

Run them outside python/ (make test-python does, in a fresh venv from the wheel), so
`import vecsync` is the installed package and not the source folder.
"""
import math
import os
import platform
import random
import sqlite3
import struct

import pytest

import vecsync
from loaded_connection import LoadedConnection

try:
    import apsw
except ImportError:  # pragma: no cover - make test-python installs it
    apsw = None

# VECSYNC_SEED replays a run; otherwise a fixed seed (make test is deterministic), or a new
# one under make soak's VECSYNC_EXPLORE=1.
SEED = int(os.environ.get("VECSYNC_SEED", "0"), 0) or (
    random.SystemRandom().randrange(1, 1 << 31) if os.environ.get("VECSYNC_EXPLORE") == "1" else 20261128)


def f32(values):
    """float32 bytes, as a vec0 float column stores them."""
    return struct.pack("<%df" % len(values), *values)


@pytest.fixture(params=["sqlite3", "apsw"])
def db(request):
    return LoadedConnection(request.param)


def test_loadable_path_names_the_installed_library():
    path = vecsync.loadable_path()
    assert os.path.isabs(path)
    assert os.path.basename(path) == "libvecsync"
    assert os.path.isfile(path + ".so") or os.path.isfile(path + ".dylib")


def test_load_reports_the_package_version(db):
    from importlib.metadata import version
    assert db.rows("select vecsync_version()") == [(version("vecsync"),)]


def test_vec0_knn_returns_nearest_first_with_filters(db):
    db.conn.execute("create virtual table v using vec0(id integer primary key, embedding float[3], album text)")
    for i, v, album in [(1, [1, 0, 0], "a"), (2, [0, 1, 0], "b"), (3, [2, 0, 0], "a"),
                        (4, [0, 0, 3], "b"), (5, [1, 1, 0], "a")]:
        db.conn.execute("insert into v(id, embedding, album) values (?, ?, ?)", (i, f32(v), album))
    # Rows 3 and 5 are both at distance 1: ties come by ascending id.
    assert db.rows("select id, distance from v where embedding match '[1, 0, 0]' and k = 3") == [
        (1, 0.0), (3, 1.0), (5, 1.0)]
    # The filter applies during the scan: k rows whenever k rows match. Distances are
    # sqlite-vec's float32 figures: sqrt(2) as float32.
    assert db.rows("select id, distance from v where embedding match ? and k = 3 and album = 'b'",
                   (f32([1, 0, 0]),)) == [(2, 1.4142135381698608), (4, 3.1622776985168457)]


def test_vector_top_k_uses_a_libsql_index(db):
    db.conn.execute("create table docs(id integer primary key, emb F32_BLOB(3))")
    db.conn.execute("create index docs_idx on docs(libsql_vector_idx(emb))")
    for i, v in [(1, "[1,0,0]"), (2, "[0,1,0]"), (3, "[1,0.2,0]"), (4, "[0,0,1]"), (5, "[-1,0,0]")]:
        db.conn.execute("insert into docs values (?, vector32(?))", (i, v))
    rows = db.rows("select d.id, vector_distance_cos(d.emb, vector32('[1,0.1,0]')) "
                   "from vector_top_k('docs_idx', vector32('[1,0.1,0]'), 3) t join docs d on d.id = t.id")
    assert [r[0] for r in rows] == [3, 1, 2]
    assert [round(r[1], 6) for r in rows] == [0.004771, 0.004963, 0.900496]


@pytest.mark.parametrize("sql, words", [
    ("insert into v(id, embedding) values (9, '[1,2]')", ["2 dimensions", "has 3"]),
    ("select id from v where embedding match '[1,0]' and k = 2", ["query vector", "2 dimensions"]),
    ("select vector32('[1,2')", ["invalid vector text", "offset 4"]),
    ("select * from vector_top_k('nope_idx', vector32('[1,0,0]'), 3)", ["no such index", "nope_idx"]),
])
def test_bad_input_is_a_clear_error(db, sql, words):
    db.conn.execute("create virtual table v using vec0(id integer primary key, embedding float[3])")
    with pytest.raises(db.error) as info:
        db.rows(sql)
    for word in words:
        assert word in str(info.value)
    # The connection goes on working.
    assert db.rows("select count(*) from v") == [(0,)]


def test_load_refuses_a_connection_without_extension_loading():
    class NoLoading:
        pass
    with pytest.raises(RuntimeError, match="apsw"):
        vecsync.load(NoLoading())


def test_serialize_float32_writes_little_endian_float32():
    # The bytes written out by hand: 1.0 = 0x3f800000, -2.5 = 0xc0200000, 0.1 rounds to
    # 0x3dcccccd; sqlite_vec.serialize_float32 gives these on a little-endian machine.
    assert vecsync.serialize_float32([1.0, -2.5, 0.1]) == bytes.fromhex("0000803f" "000020c0" "cdcccc3d")
    assert vecsync.serialize_float32([3, True]) == bytes.fromhex("00004040" "0000803f")
    assert vecsync.serialize_float32([]) == b""


def test_serialize_int8_writes_one_signed_byte_each():
    assert vecsync.serialize_int8([0, 1, -1, 127, -128]) == bytes([0x00, 0x01, 0xff, 0x7f, 0x80])
    assert vecsync.serialize_int8([]) == b""


@pytest.mark.parametrize("serialize, vector, words", [
    (vecsync.serialize_float32, [1.0, "2"], "not a float"),
    (vecsync.serialize_float32, [1.0, None], "not a float"),
    (vecsync.serialize_int8, [1, 128], "-128 <= number <= 127"),
    (vecsync.serialize_int8, [-129], "-128 <= number <= 127"),
    (vecsync.serialize_int8, [1, 2.5], "not an integer"),
])
def test_serialize_refuses_a_value_it_cannot_pack(serialize, vector, words):
    with pytest.raises(struct.error, match=words):
        serialize(vector)


def test_serialized_vectors_are_what_vec0_stores(db):
    db.conn.execute("create virtual table v using vec0(id integer primary key, f float[3], q int8[3])")
    db.conn.execute("insert into v(id, f, q) values (1, ?, vec_int8(?))",
                    (vecsync.serialize_float32([1.0, -2.5, 0.25]), vecsync.serialize_int8([1, -2, 127])))
    assert db.rows("select vec_to_json(f), vec_to_json(q) from v") == [("[1.000000,-2.500000,0.250000]", "[1,-2,127]")]
    assert db.rows("select id, distance from v where f match ? and k = 1",
                   (vecsync.serialize_float32([1.0, -2.5, 0.25]),)) == [(1, 0.0)]


def test_numpy_float32_arrays_bind_as_serialize_float32_does(db):
    np = pytest.importorskip("numpy", reason='numpy is the package\'s optional extra: pip install "vecsync[numpy]"')
    vector = np.array([1.0, -2.5, 0.1], dtype=np.float32)
    assert vector.tobytes() == vecsync.serialize_float32([1.0, -2.5, 0.1])
    db.conn.execute("create virtual table v using vec0(id integer primary key, embedding float[3])")
    db.conn.execute("insert into v(id, embedding) values (1, ?)", (vector,))
    assert db.rows("select id, distance from v where embedding match ? and k = 1",
                   (vecsync.serialize_float32([1.0, -2.5, 0.1]),)) == [(1, 0.0)]


def test_sqlite3_and_apsw_connections_share_a_process(tmp_path):
    """apsw carries its own SQLite: each gets its own copy of the library (one copy serving
    both pointed the first's connections at the second's SQLite, and closing one crashed
    the process). Run in a child process, so a crash is a failure and not the test run's."""
    if not hasattr(sqlite3.connect(":memory:"), "enable_load_extension"):
        pytest.skip("this Python's sqlite3 module was built without extension loading")
    script = (
        "import gc, sqlite3, apsw, vecsync\n"
        "def use(conn):\n"
        "    conn.enable_load_extension(True)\n"
        "    vecsync.load(conn)\n"
        "    conn.execute('create virtual table v using vec0(e float[2])')\n"
        "    conn.execute(\"insert into v(rowid, e) values (7, '[1, 2]')\")\n"
        "    return [tuple(r) for r in conn.execute(\"select rowid from v where e match '[1, 2]' and k = 1\")]\n"
        "for first, second in ((sqlite3.connect, apsw.Connection), (apsw.Connection, sqlite3.connect)):\n"
        "    a, b = first(':memory:'), second(':memory:')\n"
        "    assert use(a) == [(7,)] and use(b) == [(7,)]\n"
        "    del a; gc.collect()\n"
        "    assert [tuple(r) for r in b.execute('select count(*) from v')] == [(1,)]\n"
        "    del b; gc.collect()\n"
        "print('ok')\n")
    import subprocess
    import sys
    # Not in the current folder, which `python -c` puts first on sys.path: run from an
    # sdist, its vecsync/ (no library in it) would stand in for the installed package.
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         cwd=str(tmp_path))
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stdout, run.stderr)


@pytest.mark.parametrize("metric", ["cosine", "l2", "dot"])
@pytest.mark.parametrize("queries", [1, 16, 40])
def test_knn_batch_answers_each_query_as_match_does(db, metric, queries):
    """vecsync_knn_batch scores with sgemm, whose float32 sums differ from the scan's: with
    more duplicates and scaled copies than the heap holds around the k-th row, it once
    returned other rows than MATCH for 5-20 of 16-40 queries. It must give the same rows in
    the same order (ties by ascending rowid) as one MATCH query each."""
    rnd = random.Random(SEED)
    dim, k = 33, 10
    base = [[round(rnd.gauss(0, 1), 6) for _ in range(dim)] for _ in range(4)]
    db.conn.execute("create virtual table t using vec0(embedding float[%d] distance_metric=%s)"
                    % (dim, metric))
    db.conn.execute("begin")
    for rowid in range(1, 501):
        scale = rnd.choice([1.0, 2.0, 0.5, 3.0, 1.5])
        db.conn.execute("insert into t(rowid, embedding) values (?, ?)",
                        (rowid, f32([x * scale for x in rnd.choice(base)])))
    db.conn.execute("commit")
    qs = [[round(rnd.gauss(0, 1), 6) for _ in range(dim)] for _ in range(queries)]
    batch = {}
    for j, rowid, distance in db.rows("select query_index, id, distance from vecsync_knn_batch('t', ?, ?)",
                                      (b"".join(f32(q) for q in qs), k)):
        batch.setdefault(j, []).append(rowid)
        assert not math.isnan(distance)
    for j, q in enumerate(qs):
        match = [r[0] for r in db.rows("select rowid from t where embedding match ? and k = ?", (f32(q), k))]
        assert batch.get(j) == match, "seed %d (VECSYNC_SEED=%d replays it), query %d" % (SEED, SEED, j)


def test_failed_retrain_of_an_earlier_layout_leaves_the_table_as_it_was(db):
    """A retrain of a table whose codes are in their rows (ivf_list_index 3) makes its
    shadow tables again; when it then fails, the rollback undoes that too (and with it the
    schema: the table is connected again, not used after it is freed), and the table
    answers as before once its damage is mended."""
    db.conn.execute("create virtual table t using vec0(e float[2] indexed by ivf(nlist=2, nprobe=1))")
    for i, v in enumerate([[0, 0], [0, 1], [1, 0], [10, 10], [10, 11], [11, 10]], start=1):
        db.conn.execute("insert into t(rowid, e) values (?, ?)", (i, f32(v)))
    assert db.rows("select vecsync_ivf_retrain('t')") == [(2,)]
    db.conn.execute("update t_ivf_assign set code = null")
    db.conn.execute("drop table t_ivf_packs")
    db.conn.execute("update t_info set value = 3 where key = 'ivf_list_index'")
    db.conn.execute("update t_info set value = value + 1 where key = 'ivf_version'")
    schema = db.rows("select name, sql from sqlite_schema where name like 't_ivf%' order by name")
    saved = db.rows("select vectors from t_vectors where chunk_id = 0")[0][0]
    db.conn.execute("update t_vectors set vectors = x'00' where chunk_id = 0")
    with pytest.raises(Exception, match="storage is damaged"):
        db.rows("select vecsync_ivf_retrain('t')")
    assert db.rows("select name, sql from sqlite_schema where name like 't_ivf%' order by name") == schema
    assert db.rows("select value from t_info where key = 'ivf_list_index'") == [(3,)]
    db.conn.execute("update t_vectors set vectors = ? where chunk_id = 0", (saved,))
    assert db.rows("select rowid from t where e match '[10, 10]' and k = 2 and nprobe = 1") == [(4,), (5,)]
    assert db.rows("select vecsync_ivf_retrain('t')") == [(2,)]
    assert db.rows("select value from t_info where key = 'ivf_list_index'") == [(4,)]
    assert db.rows("select rowid from t where e match '[10, 10]' and k = 2 and nprobe = 1") == [(4,), (5,)]


def test_ivf_index_follows_another_connections_writes(tmp_path, request):
    """Two connections on one file: what one writes (small transactions, replayed from the
    change log, and a large one, read again whole), the other's ivf index finds, with the
    exact table's answers whenever every list is probed past the filter."""
    kind = "apsw" if apsw is not None else "sqlite3"
    path = str(tmp_path / "ivf.db")
    a = LoadedConnection(kind, path)
    b = LoadedConnection(kind, path)
    rng = random.Random(SEED)
    print("seed", SEED)
    dim = 8

    def vec():
        return f32([rng.gauss(0, 1) for _ in range(dim)])

    a.conn.execute("create virtual table t using vec0(e float[%d] indexed by ivf(nlist=16, nprobe=2),"
                   " tag integer)" % dim)
    a.conn.execute("create virtual table x using vec0(e float[%d], tag integer)" % dim)

    def write(conn, sql, params):
        conn.conn.execute(sql.replace("{t}", "t"), params)
        conn.conn.execute(sql.replace("{t}", "x"), params)

    for i in range(1, 301):
        write(a, "insert into {t}(rowid, e, tag) values (?, ?, ?)", (i, vec(), i % 3))
    assert a.rows("select vecsync_ivf_retrain('t')") == [(16,)]
    q = vec()
    a.rows("select rowid from t where e match ? and k = 5", (q,))    # a reads the lists
    next_id = 301
    for step in range(40):
        op = rng.random()
        if op < 0.5:
            write(b, "insert into {t}(rowid, e, tag) values (?, ?, ?)", (next_id, vec(), next_id % 3))
            next_id += 1
        elif op < 0.75:
            write(b, "delete from {t} where rowid = ?", (rng.randrange(1, next_id),))
        elif op < 0.95:
            write(b, "update {t} set e = ? where rowid = ?", (vec(), rng.randrange(1, next_id)))
        else:
            b.conn.execute("begin")
            for _ in range(200):
                write(b, "insert into {t}(rowid, e, tag) values (?, ?, ?)", (next_id, vec(), 1))
                next_id += 1
            b.conn.execute("commit")
        q = vec()
        want = a.rows("select rowid from x where e match ? and k = 7 and tag = 1", (q,))
        got = a.rows("select rowid from t where e match ? and k = 7 and tag = 1 and nprobe = 15", (q,))
        assert len(got) == len(want), (SEED, step)
        listed = a.rows("select json_extract(vecsync_index_info('t'), '$.listed_rows'),"
                        " (select count(*) from x)")
        assert listed[0][0] == listed[0][1], (SEED, step)
        found = a.rows("select rowid from t where e match ? and k = 1 and nprobe = 16", (q,))
        assert found == a.rows("select rowid from x where e match ? and k = 1", (q,)), (SEED, step)
    a.close()
    b.close()


def _runs_under(script, variable, values, tmp_path):
    """The JSON each run of script prints, a new Python process with the environment variable
    set to each of values in turn (a kernel is chosen once, when the extension loads)."""
    import json
    import subprocess
    import sys
    if not hasattr(sqlite3.connect(":memory:"), "enable_load_extension"):
        pytest.skip("this Python's sqlite3 module was built without extension loading")
    runs = {}
    for want in values:
        env = dict(os.environ, **{variable: want})
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                             cwd=str(tmp_path), env=env)
        assert run.returncode == 0, (variable, want, run.stderr)
        runs[want] = json.loads(run.stdout)
    return runs


def test_portable_and_avx2_distances_alike(tmp_path):
    """The exact distances that order every answer are double-precision sums, taken by an
    AVX2 kernel where the CPU has one and by portable C elsewhere (VECSYNC_SIMD=c asks for
    it here too). Both must give the same bits, for every metric and at every length around
    the eight running sums, or the same rows would be reported with other distances and
    ties broken differently on another machine."""
    script = (
        "import json, random, struct, sqlite3, vecsync\n"
        "conn = sqlite3.connect(':memory:')\n"
        "conn.enable_load_extension(True)\n"
        "vecsync.load(conn)\n"
        "simd = [l for l in conn.execute('select vecsync_debug()').fetchone()[0].splitlines()\n"
        "        if l.startswith('simd:')][0]\n"
        "rnd = random.Random(%d)\n"
        "out = []\n"
        "for dim in (1, 3, 7, 8, 9, 15, 16, 17, 100, 768):\n"
        "    f32 = lambda v: struct.pack('<%%df' %% len(v), *v)\n"
        "    rows = [f32([rnd.gauss(0, 1) * 10 ** rnd.randint(-3, 3) for _ in range(dim)]) for _ in range(300)]\n"
        "    for metric in ('cosine', 'l2'):\n"
        "        t = 'm_%%s_%%d' %% (metric, dim)\n"
        "        conn.execute('create table %%s(id integer primary key, e F32_BLOB(%%d))' %% (t, dim))\n"
        "        conn.execute(\"create index %%s_i on %%s(libsql_vector_idx(e, 'metric=%%s'))\" %% (t, t, metric))\n"
        "        conn.executemany('insert into %%s(id, e) values (?, ?)' %% t, list(enumerate(rows, 1)))\n"
        "        for _ in range(5):\n"
        "            q = f32([rnd.gauss(0, 1) for _ in range(dim)])\n"
        "            out.append([(r[0], r[1].hex()) for r in conn.execute(\n"
        "                \"select id, distance from vector_top_k('%%s_i', ?, 8)\" %% t, (q,))])\n"
        "    t = 'd%%d' %% dim\n"
        "    conn.execute('create virtual table %%s using vec0(e float[%%d] distance_metric=dot)' %% (t, dim))\n"
        "    conn.executemany('insert into %%s(rowid, e) values (?, ?)' %% t, list(enumerate(rows, 1)))\n"
        "    for _ in range(5):\n"
        "        q = f32([rnd.gauss(0, 1) for _ in range(dim)])\n"
        "        out.append([(r[0], r[1].hex()) for r in conn.execute(\n"
        "            'select rowid, distance from %%s where e match ? and k = 8' %% t, (q,))])\n"
        "print(json.dumps({'simd': simd, 'answers': out}))\n") % SEED
    runs = _runs_under(script, "VECSYNC_SIMD", ("", "c"), tmp_path)
    if platform.machine() in ("x86_64", "AMD64"):
        assert runs["c"]["simd"] == "simd: portable C (VECSYNC_SIMD=c)", runs["c"]["simd"]
    assert runs[""]["answers"] == runs["c"]["answers"], (runs[""]["simd"], "seed %d" % SEED)


def test_int8_kernels_answer_alike(tmp_path):
    """Int8 codes are scored by the best kernel the CPU runs (AVX-512 VNNI, AVX2, or portable
    C; VECSYNC_INT8=avx2 or =c asks for a lesser one). The sums are integers, so every kernel
    must choose the same candidates: at every length around the kernels' 32-byte steps and
    their four rows at a time, in a rescore table (oversample 1: the codes alone choose) and in
    an ivf index past 64 lists (its centroids scored by code too)."""
    script = (
        "import json, random, struct, sqlite3, vecsync\n"
        "conn = sqlite3.connect(':memory:')\n"
        "conn.enable_load_extension(True)\n"
        "vecsync.load(conn)\n"
        "kernel = [l for l in conn.execute('select vecsync_debug()').fetchone()[0].splitlines()\n"
        "          if l.startswith('int8 codes:')][0]\n"
        "rnd = random.Random(%d)\n"
        "out = []\n"
        "for dim in (3, 7, 31, 32, 33, 65, 100, 768):\n"
        "    f32 = lambda v: struct.pack('<%%df' %% len(v), *v)\n"
        "    rows = [f32([rnd.gauss(0, 1) for _ in range(dim)]) for _ in range(1003)]\n"
        "    for name, decl in (('r', 'indexed by rescore(quantizer=int8, oversample=1)'),\n"
        "                       ('i', 'indexed by ivf(nlist=100, nprobe=3)')):\n"
        "        t = '%%s%%d' %% (name, dim)\n"
        "        conn.execute('create virtual table %%s using vec0(e float[%%d] %%s)' %% (t, dim, decl))\n"
        "        conn.executemany('insert into %%s(rowid, e) values (?, ?)' %% t, list(enumerate(rows, 1)))\n"
        "        if name == 'i':\n"
        "            conn.execute(\"select vecsync_ivf_retrain('%%s')\" %% t)\n"
        "        for _ in range(12):\n"
        "            q = f32([rnd.gauss(0, 1) for _ in range(dim)])\n"
        "            out.append([r[0] for r in conn.execute('select rowid from %%s where e match ? and k = 7' %% t, (q,))])\n"
        "print(json.dumps({'kernel': kernel, 'answers': out}))\n") % SEED
    runs = _runs_under(script, "VECSYNC_INT8", ("", "avx2", "c"), tmp_path)
    assert runs["c"]["kernel"] == "int8 codes: portable C"
    assert runs["avx2"]["kernel"] in ("int8 codes: avx2 kernel", "int8 codes: portable C")
    for want in ("", "avx2"):
        assert runs[want]["answers"] == runs["c"]["answers"], (runs[want]["kernel"], "seed %d" % SEED)
