"""The ivf index of vec0 beside the approximate indexes people would use instead, one run.

Every system indexes the same vectors and answers the same queries (cosine, k = 10), each in
a child process of its own (so that its resident memory is its own), on one thread
(OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1, faiss.omp_set_num_threads(1), one thread asked
of every library that takes a count). Per system: build time, size on disk, resident memory
(VmRSS before the build and after the queries: the difference is what the index holds to
search), and query latency (mean, p50) and recall@10 at each setting of its knob.

Systems (--systems, comma-separated; all by default):

- ``vecsync-exact``: our exact vec0, the reference row.
- ``vecsync-ivf``: our vec0 ``indexed by ivf()``: inserts (the index trains itself at 4,096
  rows and takes every later row into its nearest list), then ``vecsync_ivf_retrain('v')``
  (the build from an existing table), queried ``and nprobe = N``. On the clustered set the
  same child then measures growth and deletes without a retrain, a filtered query, and
  queries while another process writes (--no-extras skips them).
- ``vecsync-ivf-budget``: the same under a memory budget of (D + 32) bytes a row: the
  table's copy (4·D + 13 bytes a row) is over it and keeps rowids and liveness only, the
  lists' int8 codes fit; the index answers from them and reads only the candidates' float32
  vectors from the file (no growth, delete or filter measurements).
- ``vecsync-libsql-ivf``: ours through libSQL's syntax: a plain table with an
  ``F32_BLOB(D)`` column, filled, then ``create index ... (libsql_vector_idx(e, 'type=ivf'))``,
  queried ``vector_top_k('i', vector32(?), 10, nprobe)``.
- ``faiss-ivf-flat``, ``faiss-ivf-sq8``: faiss ``IndexIVFFlat`` and
  ``IndexIVFScalarQuantizer(QT_8bit)``, inner product on normalised vectors, the number of
  lists our index picks (⌊√n + ½⌋), the same nprobe values.
- ``faiss-hnsw``, ``hnswlib``, ``usearch``: HNSW, M = 16 and efConstruction = 64 in each,
  queried at each ef_search of --ef.
- ``vectorlite``: HNSW inside SQLite (pip ``vectorlite-py``, hnswlib inside), the same M and
  efConstruction, ``knn_search(e, knn_param(?, 10, ef))``; its index is kept in a file of
  its own beside the database, written when the connection closes.
- ``sqlite-vec-ivf``, ``sqlite-vec-diskann``: sqlite-vec 0.1.10's own indexes, built from
  source by bench/peers.sh (--sqlite-vec names the loadable): ``indexed by
  ivf(nlist=…)`` (float lists, its default) filled, then ``'compute-centroids'``, queried at
  each nprobe; ``indexed by diskann(neighbor_quantizer=binary)`` (its defaults: 72 neighbours,
  search list 128), queried at each search_list_size_search of --search-list.
- ``libsql-diskann``: libSQL's DiskANN (pip ``libsql``): ``libsql_vector_idx(e,
  'metric=cosine', 'compress_neighbors=float8')`` (--libsql-options), the index in place
  during the inserts; it has no query-time knob. Its defaults keep every neighbour's vector
  in float32 in each node's block: at 768 dimensions that was 314 MiB and 113 s for 2,000
  rows here, too slow to run at 100,000; float8 neighbours, its documented option to shrink
  the index, took 2.2x less disk and 3.5x less time.

SQLite systems write a database file (WAL, synchronous=NORMAL, 1,000-row transactions);
its size is taken after a checkpoint. The libraries' size is their own saved index file.

Data sets (--datasets): ``clustered`` (bench/datasets.py: 100 clusters, --rows x --dim,
default 100,000 x 768; it flatters IVF) and ``minilm`` (bench/embeddings.py: real
all-MiniLM-L6-v2 sentence embeddings, 384-d, as many rows as its corpus yields up to
--rows). Recall is counted against the exact float64 answer (datasets.recall_at_k, near
ties included).

    bench/.venv/bin/python bench/ivf.py                                   # everything
    bench/.venv/bin/python bench/ivf.py --rows 20000 --queries 100        # a quick look
    bench/.venv/bin/python bench/ivf.py --systems libsql-diskann --merge  # add one peer
    bench/.venv/bin/python bench/ivf.py --datasets clustered --rows 1000000 --dim 384 \\
        --systems vecsync-ivf,faiss-ivf-flat,faiss-ivf-sq8 --json bench/data/ivf-1m.json

--merge adds the systems run to the JSON already at --json (a slow peer need not run
again); the Markdown tables are printed from the whole JSON (--report prints them without
running anything).
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import common  # noqa: E402
import datasets  # noqa: E402

K = 10
BATCH = 1000  # rows per transaction for every SQLite system
WARMUP = 5  # untimed queries before each knob setting
HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64
MIB = 1 << 20

log = common.log


# --------------------------------------------------------------------------------------
# What every system's child shares: the data, timing a knob sweep, SQLite files.


class Run:
    """One system's measurement in its child: the data, the knobs, and the result."""

    def __init__(self, plan: dict):
        self.plan = plan
        d = plan["data_dir"]
        rows = plan["rows"]
        self.X = np.ascontiguousarray(np.load(os.path.join(d, "vectors.npy"), mmap_mode="r")[:rows])
        self.Q = np.ascontiguousarray(np.load(os.path.join(d, "queries.npy"))[: plan["queries"]])
        self.gt = np.load(plan["gt"])
        # The libraries get unit vectors (inner product = cosine); made before the first
        # VmRSS reading so that the copy weighs on no system's figure.
        self.Xn = self.X / np.linalg.norm(self.X, axis=1, keepdims=True)
        self.Qn = self.Q / np.linalg.norm(self.Q, axis=1, keepdims=True)
        self.dim = self.X.shape[1]
        self.result = {"system": plan["system"], "status": "ok", "n": len(self.X),
                       "load_before": os.getloadavg(), "versions": {}, "extra": {}}
        self.result["rss_before_mib"] = common.rss_mib()

    def sweep(self, knob: str, values, set_knob, search, queries=None) -> None:
        """For each knob value: set it, WARMUP untimed queries, then every query timed;
        search(i) answers query i with 0-based rows."""
        rows = []
        for value in values:
            set_knob(value)
            for i in range(min(WARMUP, len(self.Q))):
                search(i)
            lat, out = [], []
            for i in range(len(self.Q)):
                t0 = time.perf_counter()
                got = search(i)
                lat.append((time.perf_counter() - t0) * 1000)
                out.append(got)
            recall, _ = datasets.recall_at_k(self.X, self.Q, self.gt, out, K)
            rows.append({"knob": knob, "value": value, "recall": recall,
                         "mean_ms": statistics.fmean(lat), "p50_ms": statistics.median(lat)})
            log(f"{self.plan['system']} {knob}={value}: recall {recall:.3f}, "
                f"{rows[-1]['mean_ms']:.3f} ms mean")
        self.result["rows"] = rows
        self.result["rss_after_mib"] = common.rss_mib()

    def timed(self, key: str, fn):
        t0 = time.perf_counter()
        out = fn()
        self.result[key] = time.perf_counter() - t0
        log(f"{self.plan['system']}: {key} {self.result[key]:.2f} s")
        return out

    def path(self, suffix: str) -> str:
        d = self.plan["db_dir"]
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, f"{self.plan['system']}{suffix}")
        common.remove_db(p)
        return p


def nlist_for(n: int) -> int:
    """The number of lists our index picks at training, ⌊√n + ½⌋: the peers' IVF get it too."""
    return max(1, int(math.sqrt(n) + 0.5))


def open_apsw(path: str, extensions: list[str]):
    import apsw

    conn = apsw.Connection(path)
    conn.enable_load_extension(True)
    for ext in extensions:
        conn.load_extension(ext)
    conn.execute("pragma journal_mode = wal")
    conn.execute("pragma synchronous = normal")
    return conn


def fill(conn, sql: str, X: np.ndarray, start_id: int = 1, many=None) -> None:
    """Inserts X in BATCH-row transactions, row i as id start_id + i."""
    many = many or conn.executemany
    for start in range(0, len(X), BATCH):
        stop = min(start + BATCH, len(X))
        conn.execute("begin")
        many(sql, [(start_id + i, X[i].tobytes()) for i in range(start, stop)])
        conn.execute("commit")


def close_and_size(run: Run, conn, path: str, also=()) -> None:
    """Closes the connection (the last one: SQLite checkpoints the WAL into the database and
    removes it), then records the database's size on disk, with the files in `also`."""
    conn.close()
    files = [path + s for s in ("", "-wal") if os.path.exists(path + s)] + list(also)
    run.result["disk_bytes"] = sum(os.path.getsize(f) for f in files)


def knn_rows(conn, sql: str, q: np.ndarray, params=()) -> list[int]:
    return [r[0] - 1 for r in conn.execute(sql, (q.tobytes(), *params)).fetchall()]


# --------------------------------------------------------------------------------------
# Ours.


def _our_extension(run: Run) -> str:
    ext = run.plan["extension"]
    if not os.path.exists(ext):
        raise RuntimeError(f"{ext} not found (make extension)")
    return ext


def _our_database(run: Run):
    """A new database file of this run with our extension loaded, its versions recorded:
    (its path, the connection)."""
    path = run.path(".db")
    conn = open_apsw(path, [_our_extension(run)])
    run.result["versions"]["sqlite"] = conn.execute("select sqlite_version()").fetchone()[0]
    run.result["versions"]["vecsync_debug"] = conn.execute("select vecsync_debug()").fetchone()[0]
    return path, conn


def vecsync_exact(run: Run) -> None:
    path, conn = _our_database(run)
    conn.execute(f"create virtual table v using vec0(e float[{run.dim}] distance_metric=cosine)")
    run.timed("build_s", lambda: fill(conn, "insert into v(rowid, e) values (?, ?)", run.X))
    run.result["build_note"] = "inserts"
    run.result["insert_rows_s"] = len(run.X) / run.result["build_s"]
    sql = f"select rowid from v where e match ? and k = {K}"
    run.sweep("-", [None], lambda v: None, lambda i: knn_rows(conn, sql, run.Q[i]))
    close_and_size(run, conn, path)


def vecsync_ivf(run: Run, budget: bool = False) -> None:
    path, conn = _our_database(run)
    if budget:
        # Room for the lists' int8 codes (a code, its scale and norm, and the slot: D + 16
        # bytes a row, with a margin) but not for the copy's vectors (4·D + 13): the copy
        # keeps rowids and liveness only, the index answers from its lists' codes and reads
        # the candidates' vectors from the file. A budget below the lists would give them
        # back and read them again.
        conn.execute(f"select vecsync_memory_budget({len(run.X) * (run.dim + 32)})")
    options = run.plan["ivf_options"]
    conn.execute(f"create virtual table v using vec0(e float[{run.dim}] distance_metric=cosine "
                 f"indexed by ivf({options}))")
    run.timed("insert_s", lambda: fill(conn, "insert into v(rowid, e) values (?, ?)", run.X))
    nlist = run.timed("retrain_s",
                      lambda: conn.execute("select vecsync_ivf_retrain('v')").fetchone()[0])
    run.result["build_s"] = run.result["insert_s"] + run.result["retrain_s"]
    run.result["build_note"] = "inserts, then vecsync_ivf_retrain"
    run.result["insert_rows_s"] = len(run.X) / run.result["insert_s"]
    run.result["nlist"] = nlist
    run.result["extra"]["info"] = json.loads(
        conn.execute("select vecsync_index_info('v')").fetchone()[0])
    sql = f"select rowid from v where e match ? and k = {K} and nprobe = ?"
    nprobe = [0]
    run.sweep("nprobe", run.plan["nprobe"], lambda v: nprobe.__setitem__(0, v),
              lambda i: knn_rows(conn, sql, run.Q[i], (nprobe[0],)))
    close_and_size(run, conn, path)
    if run.plan["extras"] and not budget:  # on a connection of their own: the figures above are taken
        conn = open_apsw(path, [_our_extension(run)])
        _ivf_growth_and_deletes(run, conn, sql)
        _ivf_filtered(run, conn)
        _ivf_writes_while_reading(run, conn, path, sql)
        conn.close()


def _ivf_sweep(run: Run, conn, sql: str, X, gt, where=None) -> list[dict]:
    """Recall and latency at each nprobe against (X, gt); where maps rowid - 1 to X's row."""
    rows = []
    for nprobe in run.plan["nprobe"]:
        lat, out = [], []
        for q in run.Q:
            t0 = time.perf_counter()
            got = knn_rows(conn, sql, q, (nprobe,))
            lat.append((time.perf_counter() - t0) * 1000)
            out.append([where.get(r, -1) for r in got] if where is not None else got)
        recall, _ = datasets.recall_at_k(X, run.Q, gt, out, K)
        rows.append({"nprobe": nprobe, "recall": recall, "full": sum(len(o) == K for o in out),
                     "mean_ms": statistics.fmean(lat), "p50_ms": statistics.median(lat)})
    return rows


def _ivf_growth_and_deletes(run: Run, conn, sql: str) -> None:
    """10% more rows into the trained index (the next rows of the same stream: new points
    of the same clusters), then every tenth of the first rows deleted, each without a
    retrain; recall against the exact answer over the rows then in the table."""
    n, plan = len(run.X), run.plan
    extra = datasets.generate(n + n // 10, 1, plan["seed"], dim=run.dim)[0][n:]
    # Two queries first: this new connection loads the copy and the lists now, so the
    # timing below is the inserts' own, not a load's.
    for q in run.Q[:2]:
        knn_rows(conn, sql, q, (plan["nprobe"][0],))
    t0 = time.perf_counter()
    fill(conn, "insert into v(rowid, e) values (?, ?)", extra, start_id=n + 1)
    run.result["insert_trained_rows_s"] = len(extra) / (time.perf_counter() - t0)
    X2 = np.concatenate([run.X, extra])
    _, gt2 = datasets.exact_topk(X2, run.Q, K)
    run.result["after_growth"] = _ivf_sweep(run, conn, sql, X2, gt2)
    conn.execute("delete from v where rowid % 10 = 0 and rowid <= ?", (n,))
    keep = np.array([i for i in range(len(X2)) if not ((i + 1) % 10 == 0 and i < n)])
    _, gt3 = datasets.exact_topk(X2[keep], run.Q, K)
    where = {int(r): j for j, r in enumerate(keep)}
    run.result["after_deletes"] = _ivf_sweep(run, conn, sql, X2[keep], gt3, where)
    run.result["extra"]["info_after"] = json.loads(
        conn.execute("select vecsync_index_info('v')").fetchone()[0])


def _ivf_filtered(run: Run, conn) -> None:
    """A metadata column that 1% of the rows pass (tag = i % 100), queried `and tag = 7`:
    recall against the exact answer among the passing rows."""
    X = run.X
    conn.execute(f"create virtual table f using vec0(e float[{run.dim}] distance_metric=cosine "
                 f"indexed by ivf({run.plan['ivf_options']}), tag integer)")
    for start in range(0, len(X), BATCH):
        conn.execute("begin")
        conn.executemany("insert into f(rowid, e, tag) values (?, ?, ?)",
                         [(i + 1, X[i].tobytes(), i % 100)
                          for i in range(start, min(start + BATCH, len(X)))])
        conn.execute("commit")
    conn.execute("select vecsync_ivf_retrain('f')")
    sel = np.flatnonzero(np.arange(len(X)) % 100 == 7)
    _, gtf = datasets.exact_topk(X[sel], run.Q, K)
    where = {int(r): j for j, r in enumerate(sel)}
    sql = f"select rowid from f where e match ? and k = {K} and tag = 7 and nprobe = ?"
    run.result["filtered"] = _ivf_sweep(run, conn, sql, X[sel], gtf, where)


QUIET_SECONDS = 10.0  # the queries alone, before the writes-while-reading measurement


def _ivf_writes_while_reading(run: Run, conn, path: str, sql: str) -> None:
    """This connection queries for QUIET_SECONDS alone, then while another process writes
    half the table's rows again as fast as it can (1,000 new rows of the same clusters a
    transaction, then 100 of the oldest deleted): each query sees the last commit, so it
    first takes in the rows written since its last one. The queries run at the smallest
    nprobe that reached recall 0.99 in the sweep above; reported: their mean, p50 and p99
    in each phase, and the writer's rows a second."""
    good = [r["value"] for r in run.result["rows"] if r["recall"] >= 0.99]
    nprobe = min(good) if good else max(run.plan["nprobe"])
    n = len(run.X)
    # Points of the same clusters past those _ivf_growth_and_deletes inserted.
    fresh = datasets.generate(n + n // 10 + n // 2, 1, run.plan["seed"], dim=run.dim)[0][n + n // 10:]
    rows_path = os.path.join(run.plan["db_dir"], "writer-rows.npy")
    np.save(rows_path, fresh)
    writer_plan = {"db": path, "extension": _our_extension(run), "rows": rows_path,
                   "first_id": 10 * n,
                   "out": os.path.join(run.plan["db_dir"], "writer.json")}
    plan_path = os.path.join(run.plan["db_dir"], "writer-plan.json")
    with open(plan_path, "w") as f:
        json.dump(writer_plan, f)

    def phase(proc=None) -> dict:
        lat, i = [], 0
        begin = time.perf_counter()
        end = begin + QUIET_SECONDS
        while (time.perf_counter() < end) if proc is None else (proc.poll() is None or not lat):
            t0 = time.perf_counter()
            knn_rows(conn, sql, run.Q[i % len(run.Q)], (nprobe,))
            lat.append((time.perf_counter() - t0) * 1000)
            i += 1
        wall = time.perf_counter() - begin
        mean = sum(lat) / len(lat)
        lat.sort()
        return {"queries": len(lat), "wall_s": wall, "mean_ms": mean, "p50_ms": lat[len(lat) // 2],
                "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))], "max_ms": lat[-1]}

    for q in run.Q[:WARMUP]:
        knn_rows(conn, sql, q, (nprobe,))
    quiet = phase()
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--writer", plan_path])
    busy = phase(proc)
    proc.wait()
    with open(writer_plan["out"]) as f:
        wrote = json.load(f)
    run.result["writes_while_reading"] = {"nprobe": nprobe, "quiet": quiet, "writing": busy,
                                          **wrote}


def writer(plan_path: str) -> int:
    """The writer of _ivf_writes_while_reading, a process of its own."""
    with open(plan_path) as f:
        plan = json.load(f)
    X = np.load(plan["rows"])
    conn = open_apsw(plan["db"], [plan["extension"]])
    conn.execute("pragma busy_timeout = 60000")
    first, oldest = plan["first_id"], 1
    done, start = 0, time.perf_counter()
    while done + BATCH <= len(X):
        conn.execute("begin")
        conn.executemany("insert into v(rowid, e) values (?, ?)",
                         [(first + done + i, X[done + i].tobytes()) for i in range(BATCH)])
        conn.execute("delete from v where rowid >= ? and rowid < ?", (oldest, oldest + BATCH // 10))
        conn.execute("commit")
        done += BATCH
        oldest += BATCH // 10
    elapsed = time.perf_counter() - start
    conn.close()
    with open(plan["out"], "w") as f:
        json.dump({"rows_written": done, "rows_deleted": done // 10, "write_s": elapsed,
                   "insert_rows_s": done / elapsed}, f)
    return 0


def vecsync_libsql_ivf(run: Run) -> None:
    path, conn = _our_database(run)
    conn.execute(f"create table m(id integer primary key, e F32_BLOB({run.dim}))")
    run.timed("insert_s", lambda: fill(conn, "insert into m(id, e) values (?, ?)", run.X))
    run.timed("index_s", lambda: conn.execute(
        "create index m_idx on m(libsql_vector_idx(e, 'type=ivf', 'metric=cosine'))"))
    run.result["build_s"] = run.result["insert_s"] + run.result["index_s"]
    run.result["build_note"] = "inserts into a plain table, then create index"
    sql = f"select id from vector_top_k('m_idx', vector32(?), {K}, ?)"
    nprobe = [0]
    run.sweep("nprobe", run.plan["nprobe"], lambda v: nprobe.__setitem__(0, v),
              lambda i: knn_rows(conn, sql, run.Q[i], (nprobe[0],)))
    close_and_size(run, conn, path)


# --------------------------------------------------------------------------------------
# Libraries: faiss, hnswlib, usearch.


def _faiss(run: Run):
    import faiss

    faiss.omp_set_num_threads(1)
    run.result["versions"]["faiss"] = faiss.__version__
    return faiss


def _faiss_finish(run: Run, faiss, index) -> None:
    path = run.path(".faiss")
    faiss.write_index(index, path)
    run.result["disk_bytes"] = os.path.getsize(path)
    os.remove(path)


def _faiss_ivf(kind: str):
    def measure(run: Run) -> None:
        faiss = _faiss(run)
        nlist = nlist_for(len(run.X))
        quantizer = faiss.IndexFlatIP(run.dim)
        if kind == "flat":
            index = faiss.IndexIVFFlat(quantizer, run.dim, nlist, faiss.METRIC_INNER_PRODUCT)
        else:
            index = faiss.IndexIVFScalarQuantizer(quantizer, run.dim, nlist,
                                                  faiss.ScalarQuantizer.QT_8bit,
                                                  faiss.METRIC_INNER_PRODUCT)
        run.timed("build_s", lambda: (index.train(run.Xn), index.add(run.Xn)))
        run.result["build_note"] = "train + add"
        run.result["nlist"] = nlist
        _faiss_finish(run, faiss, index)
        run.sweep("nprobe", run.plan["nprobe"], lambda v: setattr(index, "nprobe", v),
                  lambda i: [int(x) for x in index.search(run.Qn[i:i + 1], K)[1][0]])

    return measure


def faiss_hnsw(run: Run) -> None:
    faiss = _faiss(run)
    index = faiss.IndexHNSWFlat(run.dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    run.timed("build_s", lambda: index.add(run.Xn))
    run.result["build_note"] = "add"
    _faiss_finish(run, faiss, index)
    run.sweep("ef", run.plan["ef"], lambda v: setattr(index.hnsw, "efSearch", v),
              lambda i: [int(x) for x in index.search(run.Qn[i:i + 1], K)[1][0]])


def hnswlib_hnsw(run: Run) -> None:
    import hnswlib
    from importlib.metadata import version

    run.result["versions"]["hnswlib"] = version("hnswlib")
    index = hnswlib.Index(space="cosine", dim=run.dim)
    index.init_index(max_elements=len(run.X), ef_construction=HNSW_EF_CONSTRUCTION, M=HNSW_M)
    index.set_num_threads(1)
    run.timed("build_s", lambda: index.add_items(run.X, np.arange(len(run.X)), num_threads=1))
    run.result["build_note"] = "add_items"
    path = run.path(".hnsw")
    index.save_index(path)
    run.result["disk_bytes"] = os.path.getsize(path)
    os.remove(path)
    run.sweep("ef", run.plan["ef"], index.set_ef,
              lambda i: [int(x) for x in index.knn_query(run.Q[i], k=K, num_threads=1)[0][0]])


def usearch_hnsw(run: Run) -> None:
    from importlib.metadata import version

    from usearch.index import Index

    run.result["versions"]["usearch"] = version("usearch")
    index = Index(ndim=run.dim, metric="cos", dtype="f32", connectivity=HNSW_M,
                  expansion_add=HNSW_EF_CONSTRUCTION)
    run.timed("build_s", lambda: index.add(np.arange(len(run.X)), run.X, threads=1))
    run.result["build_note"] = "add"
    path = run.path(".usearch")
    index.save(path)
    run.result["disk_bytes"] = os.path.getsize(path)
    os.remove(path)
    run.sweep("ef", run.plan["ef"], lambda v: setattr(index, "expansion_search", v),
              lambda i: [int(x) for x in index.search(run.Q[i], K, threads=1).keys])


# --------------------------------------------------------------------------------------
# Indexes inside SQLite: vectorlite, sqlite-vec 0.1.10, libSQL.


def vectorlite(run: Run) -> None:
    import importlib.util
    from importlib.metadata import version

    # vectorlite_py's own helper imports Python's sqlite3 (a second SQLite library in the
    # process beside apsw's); the loadable sits in the package's directory.
    spec = importlib.util.find_spec("vectorlite_py")
    if spec is None or not spec.origin:
        raise RuntimeError("pip package vectorlite-py not installed")
    ext = os.path.join(os.path.dirname(spec.origin), "vectorlite")
    run.result["versions"]["vectorlite-py"] = version("vectorlite-py")
    # The index file's path goes into the declaration as bare tokens, which SQLite's
    # tokenizer must accept: no path part such as "100000x768" (digits, then letters).
    path = run.path(".db")
    index_path = os.path.join(common.DATA, "ivf-db", f"vectorlite_p{os.getpid()}.index")
    common.remove_db(index_path)
    conn = open_apsw(path, [ext])
    run.result["versions"]["vectorlite"] = conn.execute("select vectorlite_info()").fetchone()[0]
    conn.execute(f"create virtual table v using vectorlite(e float32[{run.dim}] cosine, "
                 f"hnsw(max_elements={len(run.X)}, ef_construction={HNSW_EF_CONSTRUCTION}, "
                 f"M={HNSW_M}), {index_path})")
    run.timed("build_s", lambda: fill(conn, "insert into v(rowid, e) values (?, ?)", run.X))
    run.result["build_note"] = "inserts"
    ef = [0]
    sql = f"select rowid from v where knn_search(e, knn_param(?, {K}, ?))"
    run.sweep("ef", run.plan["ef"], lambda v: ef.__setitem__(0, v),
              lambda i: knn_rows(conn, sql, run.Q[i], (ef[0],)))
    close_and_size(run, conn, path, also=[index_path])  # the close writes the index file
    run.result["extra"]["index_file_bytes"] = os.path.getsize(index_path)
    os.remove(index_path)


def _sqlite_vec(run: Run):
    ext = run.plan["sqlite_vec"]
    if not ext or not os.path.exists(ext):
        raise RuntimeError(f"sqlite-vec 0.1.10 loadable {ext!r} not found "
                           "(bash bench/peers.sh SQLITE_VEC_REPO)")
    path = run.path(".db")
    conn = open_apsw(path, [ext])
    run.result["versions"]["sqlite-vec"] = conn.execute("select vec_version()").fetchone()[0]
    stamp = os.path.join(os.path.dirname(ext), "VERSION")
    if os.path.exists(stamp):
        with open(stamp) as f:
            run.result["versions"]["sqlite-vec source"] = f.read().strip()
    return conn, path


def sqlite_vec_ivf(run: Run) -> None:
    conn, path = _sqlite_vec(run)
    nlist = nlist_for(len(run.X))
    conn.execute(f"create virtual table v using vec0(e float[{run.dim}] distance_metric=cosine "
                 f"indexed by ivf(nlist={nlist}))")
    run.timed("insert_s", lambda: fill(conn, "insert into v(rowid, e) values (?, ?)", run.X))
    run.timed("train_s", lambda: conn.execute("insert into v(v) values ('compute-centroids')"))
    run.result["build_s"] = run.result["insert_s"] + run.result["train_s"]
    run.result["build_note"] = "inserts, then 'compute-centroids'"
    run.result["nlist"] = nlist
    sql = f"select rowid from v where e match ? and k = {K}"
    run.sweep("nprobe", run.plan["nprobe"],
              lambda v: conn.execute("insert into v(v) values (?)", (f"nprobe={v}",)),
              lambda i: knn_rows(conn, sql, run.Q[i]))
    close_and_size(run, conn, path)


def sqlite_vec_diskann(run: Run) -> None:
    conn, path = _sqlite_vec(run)
    conn.execute(f"create virtual table v using vec0(e float[{run.dim}] distance_metric=cosine "
                 f"indexed by diskann(neighbor_quantizer=binary))")
    run.timed("build_s", lambda: fill(conn, "insert into v(rowid, e) values (?, ?)", run.X))
    run.result["build_note"] = "inserts"
    sql = f"select rowid from v where e match ? and k = {K}"
    run.sweep("L", run.plan["search_list"],
              lambda v: conn.execute("insert into v(v) values (?)",
                                     (f"search_list_size_search={v}",)),
              lambda i: knn_rows(conn, sql, run.Q[i]))
    close_and_size(run, conn, path)


def libsql_diskann(run: Run) -> None:
    import libsql
    from importlib.metadata import version

    run.result["versions"]["pip libsql"] = version("libsql")
    path = run.path(".db")
    conn = libsql.connect(path, isolation_level=None)
    run.result["versions"]["sqlite"] = conn.execute("select sqlite_version()").fetchone()[0]
    conn.execute("pragma journal_mode = wal")
    conn.execute("pragma synchronous = normal")
    conn.execute(f"create table m(id integer primary key, e F32_BLOB({run.dim}))")
    options = ", ".join(f"'{o}'" for o in run.plan["libsql_options"].split(",") if o)
    run.result["extra"]["index_options"] = options
    conn.execute(f"create index m_idx on m(libsql_vector_idx(e, {options}))")
    run.timed("build_s", lambda: fill(conn, "insert into m(id, e) values (?, ?)", run.X))
    run.result["build_note"] = "inserts with the index in place"
    sql = f"select id from vector_top_k('m_idx', ?, {K})"
    run.sweep("-", [None], lambda v: None, lambda i: knn_rows(conn, sql, run.Q[i]))
    close_and_size(run, conn, path)


SYSTEMS = {
    "vecsync-exact": ("vec0 exact (ours)", vecsync_exact),
    "vecsync-ivf": ("vec0 ivf (ours)", vecsync_ivf),
    "vecsync-ivf-budget": ("vec0 ivf over a memory budget (ours)",
                           lambda run: vecsync_ivf(run, budget=True)),
    "vecsync-libsql-ivf": ("libsql_vector_idx type=ivf (ours)", vecsync_libsql_ivf),
    "faiss-ivf-flat": ("faiss IVF-Flat", _faiss_ivf("flat")),
    "faiss-ivf-sq8": ("faiss IVF-SQ8", _faiss_ivf("sq8")),
    "faiss-hnsw": ("faiss HNSW-Flat", faiss_hnsw),
    "hnswlib": ("hnswlib", hnswlib_hnsw),
    "usearch": ("usearch HNSW", usearch_hnsw),
    "vectorlite": ("vectorlite (HNSW in SQLite)", vectorlite),
    "sqlite-vec-ivf": ("sqlite-vec 0.1.10 ivf", sqlite_vec_ivf),
    "sqlite-vec-diskann": ("sqlite-vec 0.1.10 diskann", sqlite_vec_diskann),
    "libsql-diskann": ("libSQL DiskANN", libsql_diskann),
}


def child(plan_path: str) -> int:
    """Measures one system (the plan a JSON file written by the parent), writes its result."""
    with open(plan_path) as f:
        plan = json.load(f)
    run = Run(plan)
    try:
        SYSTEMS[plan["system"]][1](run)
    except Exception as e:  # the parent records it and goes on with the next system
        import traceback

        traceback.print_exc()
        run.result.update(status="failed", error=f"{type(e).__name__}: {e}")
    run.result["load_after"] = os.getloadavg()
    with open(plan["out"], "w") as f:
        json.dump(run.result, f)
    return 0


# --------------------------------------------------------------------------------------
# The parent: data sets, exact answers, one child per system, the JSON and the tables.


def clustered(args) -> tuple[str, str, dict]:
    dim_tag = "" if args.dim == datasets.DIM else f"-d{args.dim}"
    d = os.path.join(common.DATA, f"lowrank{dim_tag}-seed{args.seed}-n{args.rows}-q{args.queries}")
    meta = {"kind": "lowrank", "n": args.rows, "queries": args.queries, "seed": args.seed,
            "dim": args.dim, "clusters": datasets.CLUSTERS, "rank": datasets.RANK,
            "noise": datasets.NOISE, "chunk": datasets.CHUNK, "format": 2}
    datasets.cached(d, meta, lambda: datasets.generate(args.rows, args.queries, args.seed,
                                                       dim=args.dim))
    return f"clustered-{args.rows}x{args.dim}", d, meta


def minilm(args) -> tuple[str, str, dict]:
    import embeddings

    d = embeddings.prepare(common.DATA, 40_000, 210, 42)  # the set bench/quantized.py uses
    meta = embeddings.meta(d)
    n = min(meta["n"], args.rows)
    if args.queries > 210:
        raise SystemExit("--queries: the MiniLM set holds out 210 queries")
    about = {"kind": "minilm", "n": n, "queries": args.queries, "dim": meta["dim"],
             "model": meta["model"], "corpus_sentences": meta["n"]}
    return f"minilm-{n}x{meta['dim']}", d, about


def run_systems(args, names, key, d, meta) -> dict:
    X = np.load(os.path.join(d, "vectors.npy"), mmap_mode="r")[: meta["n"]]
    Q = np.load(os.path.join(d, "queries.npy"))[: meta["queries"]]
    log(f"{key}: {len(X):,} x {X.shape[1]}, {len(Q)} queries; exact answers")
    _, gt = datasets.exact_topk(np.asarray(X), Q, K)
    # One file per process: a run of a slow peer beside this one writes its own.
    gt_path = os.path.join(d, f"exact-k{K}-n{len(X)}-q{len(Q)}-{os.getpid()}.npy")
    np.save(gt_path, gt)
    # Files of this process only (a slow peer may run beside it): the child's plan, its
    # result and its databases, removed after each system.
    db_dir = os.path.join(common.DATA, "ivf-db", f"{key}-{os.getpid()}")
    out = {}
    for name in names:
        plan = {"system": name, "data_dir": d, "rows": len(X), "queries": len(Q), "gt": gt_path,
                "seed": args.seed, "extension": args.extension, "sqlite_vec": args.sqlite_vec,
                "nprobe": args.nprobe, "ef": args.ef, "search_list": args.search_list,
                "ivf_options": args.ivf_options, "libsql_options": args.libsql_options,
                "db_dir": db_dir,
                "extras": not args.no_extras and meta["kind"] == "lowrank",
                "out": os.path.join(db_dir, "result.json")}
        plan_path = os.path.join(db_dir, "plan.json")
        os.makedirs(db_dir, exist_ok=True)
        with open(plan_path, "w") as f:
            json.dump(plan, f)
        log(f"{key}: {name}")
        t0 = time.perf_counter()
        r = common.run_json_process([sys.executable, os.path.abspath(__file__), "--child", plan_path],
                                    plan["out"], dict(os.environ), args.timeout, name)
        shutil.rmtree(db_dir, ignore_errors=True)
        r.setdefault("system", name)
        r["wall_s"] = time.perf_counter() - t0
        r["date"] = time.strftime("%Y-%m-%d %H:%M")
        out[name] = r
        if r.get("status") != "ok":
            log(f"{key}: {name} {r.get('status')}: {r.get('error')}")
        save(args, {key: {"data": meta, "systems": {name: r}}})
    os.remove(gt_path)
    return out


def save(args, runs: dict, session: dict | None = None) -> dict:
    """Adds `runs` (and the session, when given) to the JSON at --json and writes it; every
    system is saved as soon as it has run. Without --merge the file starts afresh at this
    process's first save. The file is read just before it is written, so that the rows of
    a slow peer running in another process are kept."""
    import machine

    result = {"runs": {}}
    if os.path.exists(args.json) and (args.merge or getattr(args, "saved", False)):
        with open(args.json) as f:
            result = json.load(f)
    args.saved = True
    result.setdefault("machine", machine.describe(common.REPO))
    for key, run in runs.items():
        into = result["runs"].setdefault(key, {"systems": {}})
        into.update(data=run["data"], k=K)
        into["systems"].update(run["systems"])
    if session:
        # Each session names its machine and revision: a --merge may add runs made on
        # another machine, or at another commit, than the file's first ones.
        session.setdefault("machine", machine.describe(common.REPO))
        result.setdefault("sessions", []).append(session)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    tmp = f"{args.json}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, args.json)
    return result


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"load average {os.getloadavg()}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default="clustered,minilm")
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=datasets.DIM, help="clustered set only")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--nprobe", default="1,2,4,6,8,16,32")
    p.add_argument("--ef", default="16,32,64,128,256", help="HNSW ef_search values")
    p.add_argument("--search-list", default="16,32,64,128,256",
                   help="sqlite-vec diskann search_list_size_search values")
    p.add_argument("--libsql-options", default="metric=cosine,compress_neighbors=float8",
                   help="libSQL DiskANN's index options, comma-separated")
    p.add_argument("--extension", default=common.EXTENSION)
    p.add_argument("--sqlite-vec", default=os.path.join(common.DATA, "peers", "sqlite-vec-0.1.10", "vec0.so"))
    p.add_argument("--json", default=os.path.join(common.DATA, "ivf.json"))
    p.add_argument("--merge", action="store_true", help="add to the JSON already at --json")
    p.add_argument("--report", action="store_true", help="print the tables of --json only")
    p.add_argument("--no-extras", action="store_true",
                   help="skip our index's growth, delete and filter measurements")
    p.add_argument("--ivf-options", default="",
                   help="what goes inside ivf(...) in our declaration, e.g. oversample=4")
    p.add_argument("--timeout", type=float, default=3 * 3600, help="seconds per system")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--writer", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args.child)
    if args.writer:
        return writer(args.writer)
    if args.report:
        with open(args.json) as f:
            print_report(json.load(f))
        return 0
    args.nprobe = [int(x) for x in args.nprobe.split(",")]
    args.ef = [int(x) for x in args.ef.split(",")]
    args.search_list = [int(x) for x in args.search_list.split(",")]
    names = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in names if s not in SYSTEMS]
    if unknown:
        raise SystemExit(f"--systems: unknown {unknown}; known: {', '.join(SYSTEMS)}")

    session = {"started": time.strftime("%Y-%m-%d %H:%M"), "uptime_start": uptime(),
               "systems": names, "argv": sys.argv[1:]}
    for which in args.datasets.split(","):
        key, d, meta = {"clustered": clustered, "minilm": minilm}[which.strip()](args)
        run_systems(args, names, key, d, meta)
    session["uptime_end"] = uptime()
    result = save(args, {}, session)
    log(f"wrote {common.rel(args.json)}")
    print_report(result)
    return 0


# --------------------------------------------------------------------------------------
# Markdown.


def _mib(x) -> str:
    return "-" if x is None else f"{x / MIB:,.1f}"


def _best(rows, floor):
    """The fastest row (by median: on a shared machine the mean carries every stall of the
    run) whose recall reaches floor, or None."""
    ok = [r for r in rows if r["recall"] >= floor]
    return min(ok, key=lambda r: r["p50_ms"]) if ok else None


def print_report(result: dict) -> None:
    for s in result.get("sessions", []):
        m = s.get("machine") or {}
        where = f" on {m['cpu']}, {m['revision']}" if m.get("cpu") else ""
        print(f"- session {s['started']}{where}: {', '.join(s['systems'])}; at start "
              f"`{s['uptime_start']}`, at end `{s['uptime_end']}`")
    for key, run in result["runs"].items():
        systems = run["systems"]
        print(f"\n### {key}\n")
        print("| system | knob | build s | disk MiB | RSS before → after MiB (Δ) | "
              "query ms mean / p50 | recall@10 |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for name in SYSTEMS:
            r = systems.get(name)
            if r is None:
                continue
            label = SYSTEMS[name][0]
            if r.get("status") != "ok":
                print(f"| {label} | - | - | - | - | {r.get('status')}: {r.get('error')} | - |")
                continue
            rb, ra = r.get("rss_before_mib"), r.get("rss_after_mib")
            rss = (f"{rb:,.0f} → {ra:,.0f} ({ra - rb:+,.0f})" if rb is not None and ra is not None
                   else "-")
            for i, row in enumerate(r["rows"]):
                knob = "-" if row["value"] is None else f"{row['knob']} {row['value']}"
                # build, disk and memory once per system, on its first row
                once = (f"{r['build_s']:.2f} | {_mib(r.get('disk_bytes'))} | {rss}" if i == 0
                        else " | | ")
                print(f"| {label if i == 0 else ''} | {knob} | {once} | "
                      f"{row['mean_ms']:.3f} / {row['p50_ms']:.3f} | {row['recall']:.3f} |")
        ours = systems.get("vecsync-ivf")
        if ours and ours.get("status") == "ok":
            print("\nThe fastest setting of each system at a recall@10 floor (by median latency), "
                  "and that median as a ratio to ours (vec0 ivf) at the same floor:\n")
            print("| system | ≥ 0.95: setting, recall, p50 ms, × ours | "
                  "≥ 0.99: setting, recall, p50 ms, × ours |")
            print("| --- | --- | --- |")
            for name in SYSTEMS:
                r = systems.get(name)
                if not r or r.get("status") != "ok" or name == "vecsync-exact":
                    continue
                cells = []
                for floor in (0.95, 0.99):
                    b, o = _best(r["rows"], floor), _best(ours["rows"], floor)
                    if b is None:
                        cells.append(f"not reached (best {max(x['recall'] for x in r['rows']):.3f})")
                        continue
                    knob = "-" if b["value"] is None else f"{b['knob']} {b['value']}"
                    ratio = f", {b['p50_ms'] / o['p50_ms']:.2f}×" if o else ""
                    cells.append(f"{knob}: {b['recall']:.3f} in {b['p50_ms']:.3f} ms{ratio}")
                print(f"| {SYSTEMS[name][0]} | {cells[0]} | {cells[1]} |")
            _print_our_extras(ours, systems.get("vecsync-exact"), run["data"])


def _print_our_extras(v: dict, exact: dict | None, data: dict) -> None:
    print(f"\nOur build: {v['insert_s']:.2f} s of inserts ({v['insert_rows_s']:,.0f} rows/s, "
          f"training at 4,096 rows included), then vecsync_ivf_retrain {v['retrain_s']:.2f} s "
          f"({v['nlist']} lists).")
    if exact and exact.get("status") == "ok":
        print(f"Exact vec0 inserts: {exact['insert_rows_s']:,.0f} rows/s.")
    if "after_growth" in v:
        print(f"Inserts into the trained index: {v['insert_trained_rows_s']:,.0f} rows/s.")
        print("\nWithout a retrain, after 10% more rows, then after deleting 10% of the first rows:\n")
        print("| nprobe | recall@10 after growth | ms | recall@10 after deletes | ms |")
        print("| --- | --- | --- | --- | --- |")
        for g, d in zip(v["after_growth"], v["after_deletes"]):
            print(f"| {g['nprobe']} | {g['recall']:.3f} | {g['mean_ms']:.2f} | {d['recall']:.3f} | "
                  f"{d['mean_ms']:.2f} |")
    if "writes_while_reading" in v:
        w = v["writes_while_reading"]
        print(f"\nQueries at nprobe {w['nprobe']} while another process writes "
              f"{w['rows_written']:,} rows at {w['insert_rows_s']:,.0f} rows/s (1,000-row "
              f"transactions, 100 rows deleted in each), against the same queries alone:\n")
        print("| | queries | mean ms | p50 ms | p99 ms | max ms |")
        print("| --- | --- | --- | --- | --- | --- |")
        for label, ph in (("alone", w["quiet"]), ("while writing", w["writing"])):
            print(f"| {label} | {ph['queries']:,} in {ph['wall_s']:.1f} s | {ph['mean_ms']:.3f} | "
                  f"{ph['p50_ms']:.3f} | {ph['p99_ms']:.2f} | {ph['max_ms']:.1f} |")
    if "filtered" in v:
        print("\nFiltered, `and tag = 7` (1% of the rows pass):\n")
        print("| nprobe | recall@10 | queries with 10 rows | query ms (mean / p50) |")
        print("| --- | --- | --- | --- |")
        for f in v["filtered"]:
            print(f"| {f['nprobe']} | {f['recall']:.3f} | {f['full']} of {data['queries']} | "
                  f"{f['mean_ms']:.2f} / {f['p50_ms']:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
