"""Vector search while the app writes: one writer and several searchers on the same data.

Run by ``make bench`` (after bench/setup.sh):

    bench/.venv/bin/python bench/concurrent.py --extension .build/libvecsync.so

Every system in the same run, on the same seeded data (bench/datasets.py: 768-d clusters,
cosine, k = 10):

- ``vecsync``: our vec0, float32 (one WAL file, one apsw connection per thread);
- ``vecsync-int8``: our vec0 with ``indexed by rescore(quantizer=int8)``;
- ``sqlite-vec``: sqlite-vec 0.1.9's vec0, the same SQL;
- ``sqliteai-vector``: pip ``sqliteai-vector`` on a plain table, ``vector_full_scan`` (exact,
  sees every committed row);
- ``sqliteai-vector-q8``: the same table searched with ``vector_quantize_scan`` on 8-bit codes
  (``vector_quantize(..., 'qtype=INT8')``) preloaded into each connection
  (``vector_quantize_preload``). Its codes only cover the rows present at the last
  ``vector_quantize``, and a connection's preloaded copy only the codes present when it
  preloaded, so: after a write, the writer re-quantizes and the reader preloads again; in the
  mixed run a third connection re-quantizes over and over (pausing 1 s between rounds) and
  each reader preloads again before its next search when a round finished. Rows written
  since the round a reader preloaded are missing from its results; we count them;
- ``faiss-flat`` / ``faiss-sq8``: faiss ``IndexFlatIP`` and ``IndexScalarQuantizer`` (8-bit,
  trained on the initial rows) on normalised vectors, as an app keeps them in one process:
  one index shared by the reader threads, the writer adding a row under a readers-writer lock
  (faiss releases the GIL while it searches and adds), one OpenMP thread per search.

Measured for each:

- static: one searcher on data nobody writes (median of 100 queries), and its recall@10
  against the exact float64 answer;
- after a write: another connection (thread) commits one row, then the searcher queries;
  median over rounds (the bar: at most 1.5x static); and whether a search for the row just
  written finds it;
- mixed: a writer inserting 10 rows/s while 1, 2 and 4 searchers query continuously for
  --seconds each; latency percentiles over all their queries;
- memory: a new process opens 1 and 5 connections and searches once on each; resident
  memory it gained (for faiss: building the one index the threads share, then searching
  from 1 and 5 threads). The bar: 5 connections at most 1.25x one.

Writes bench/CONCURRENT.md, bench/concurrent.json and bench/concurrent.png (``--quick``:
10,000 rows, shorter, into bench/data/quick/). ``--redraw`` rebuilds the report and chart
from the JSON.
"""

import os

# One thread per search, as in run.py's workers, set before numpy, BLAS or faiss is loaded
# (faiss's OpenMP thread count is per thread, so it must come from the environment).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import common  # noqa: E402
import datasets  # noqa: E402
import machine  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
K = 10
SYSTEMS = ("vecsync", "vecsync-int8", "sqlite-vec", "sqliteai-vector", "sqliteai-vector-q8",
           "faiss-flat", "faiss-sq8")
VEC0 = "create virtual table v using vec0(id integer primary key, embedding float[{dim}] distance_metric=cosine{index})"
VEC0_INSERT = "insert into v(id, embedding) values (?, ?)"
VEC0_QUERY = f"select id from v where embedding match ? and k = {K} order by distance"
AI_TABLE = "create table v(id integer primary key, embedding blob)"
AI_INIT = "select vector_init('v', 'embedding', 'dimension={dim},type=FLOAT32,distance=COSINE')"
AI_QUANTIZE = "select vector_quantize('v', 'embedding', 'qtype=INT8')"
AI_PRELOAD = "select vector_quantize_preload('v', 'embedding')"
AI_FULL = f"select rowid from vector_full_scan('v', 'embedding', ?, {K})"
AI_QUANT = f"select rowid from vector_quantize_scan('v', 'embedding', ?, {K})"


log = common.log


def ms(t0):
    return (time.perf_counter() - t0) * 1000.0


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))]


def rss_bytes():
    """Resident memory of this process, after handing freed heap back to the system."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


remove_db = common.remove_db


# --- SQL systems: one database file, one connection per thread ----------------------------

class SqlSystem:
    """A system searched through SQL; each searcher or writer has its own connection."""

    quantized_refresh = False  # sqliteai-vector-q8: codes rebuilt and preloaded to see new rows

    def __init__(self, name, extension, dim, path):
        self.name, self.extension, self.dim, self.path = name, extension, dim, path
        if name.startswith("vecsync"):
            index = " indexed by rescore(quantizer=int8)" if name == "vecsync-int8" else ""
            self.create, self.insert_sql, self.query_sql = VEC0.format(dim=dim, index=index), VEC0_INSERT, VEC0_QUERY
            self.init = []
        elif name == "sqlite-vec":
            self.create, self.insert_sql, self.query_sql = VEC0.format(dim=dim, index=""), VEC0_INSERT, VEC0_QUERY
            self.init = []
        else:  # sqliteai-vector, sqliteai-vector-q8
            self.create, self.insert_sql = AI_TABLE, "insert into v(id, embedding) values (?, ?)"
            self.init = [AI_INIT.format(dim=dim)]
            self.quantized_refresh = name == "sqliteai-vector-q8"
            self.query_sql = AI_QUANT if self.quantized_refresh else AI_FULL

    def version(self):
        conn = self.connect(search=False)
        sql = {"sqlite-vec": "select vec_version()", "sqliteai-vector": "select vector_version()",
               "sqliteai-vector-q8": "select vector_version()"}.get(self.name)
        v = conn.execute(sql).fetchall()[0][0] if sql else machine.git_revision(os.path.dirname(HERE))
        conn.close()
        return v

    def connect(self, search=True):
        import apsw
        conn = apsw.Connection(self.path)
        conn.enable_load_extension(True)
        conn.load_extension(self.extension)
        conn.execute("pragma busy_timeout = 10000")
        for sql in self.init:
            conn.execute(sql).fetchall()
        if search and self.quantized_refresh:
            conn.execute(AI_PRELOAD).fetchall()
        return conn

    def build(self, X):
        remove_db(self.path)
        import apsw
        conn = apsw.Connection(self.path)
        conn.enable_load_extension(True)
        conn.load_extension(self.extension)
        conn.execute("pragma journal_mode = wal")
        conn.execute(self.create)
        conn.execute("begin")
        conn.executemany(self.insert_sql, ((i + 1, X[i].tobytes()) for i in range(len(X))))
        conn.execute("commit")
        for sql in self.init:
            conn.execute(sql).fetchall()
        if self.quantized_refresh:
            conn.execute(AI_QUANTIZE).fetchall()
        conn.close()

    def search(self, conn, q):
        return [row[0] for row in conn.execute(self.query_sql, (q.tobytes(),))]

    def insert(self, conn, rowid, v):
        conn.execute(self.insert_sql, (rowid, v.tobytes()))

    def requantize(self, conn):
        conn.execute(AI_QUANTIZE).fetchall()

    def preload(self, conn):
        conn.execute(AI_PRELOAD).fetchall()

    def close(self, conn):
        conn.close()

    def cleanup(self):
        remove_db(self.path)


# --- faiss: one index per process, shared by threads -------------------------------------

class RWLock:
    """Many readers or one writer; a waiting writer goes before readers that arrive after it."""

    def __init__(self):
        self.cond = threading.Condition()
        self.readers = 0
        self.writing = False
        self.writers_waiting = 0

    def acquire_read(self):
        with self.cond:
            while self.writing or self.writers_waiting:
                self.cond.wait()
            self.readers += 1

    def release_read(self):
        with self.cond:
            self.readers -= 1
            if not self.readers:
                self.cond.notify_all()

    def acquire_write(self):
        with self.cond:
            self.writers_waiting += 1
            while self.writing or self.readers:
                self.cond.wait()
            self.writers_waiting -= 1
            self.writing = True

    def release_write(self):
        with self.cond:
            self.writing = False
            self.cond.notify_all()


def faiss_index(name, dim):
    import faiss
    faiss.omp_set_num_threads(1)
    if name == "faiss-flat":
        return faiss.IndexFlatIP(dim)
    return faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)


def faiss_fill(index, X, chunk=10_000):
    """Train (sq8) on all rows and add them, normalising a chunk at a time."""
    import faiss
    if not index.is_trained:
        Xn = np.array(X, dtype=np.float32)
        faiss.normalize_L2(Xn)
        index.train(Xn)
        del Xn
    for start in range(0, len(X), chunk):
        part = np.array(X[start:start + chunk], dtype=np.float32)
        faiss.normalize_L2(part)
        index.add(part)


class FaissSystem:
    """An in-process index; "connections" are threads sharing it under a readers-writer lock."""

    quantized_refresh = False

    def __init__(self, name, dim):
        self.name, self.dim = name, dim
        self.index, self.ids, self.lock = None, [], RWLock()

    def version(self):
        import faiss
        return faiss.__version__

    def build(self, X):
        self.index = faiss_index(self.name, self.dim)
        faiss_fill(self.index, X)
        self.ids = list(range(1, len(X) + 1))

    def connect(self, search=True):
        return None

    def close(self, conn):
        pass

    def search(self, conn, q):
        import faiss
        qn = np.array(q, dtype=np.float32).reshape(1, -1)
        faiss.normalize_L2(qn)
        self.lock.acquire_read()
        try:
            _, pos = self.index.search(qn, K)
            return [self.ids[p] for p in pos[0] if p >= 0]
        finally:
            self.lock.release_read()

    def insert(self, conn, rowid, v):
        import faiss
        vn = np.array(v, dtype=np.float32).reshape(1, -1)
        faiss.normalize_L2(vn)
        self.lock.acquire_write()
        try:
            self.index.add(vn)
            self.ids.append(rowid)
        finally:
            self.lock.release_write()

    def cleanup(self):
        self.index, self.ids = None, []


def make_system(name, extension, dim, work):
    if name.startswith("faiss"):
        return FaissSystem(name, dim)
    if name.startswith("sqliteai"):
        import sqlite_vector
        ext = os.path.join(os.path.dirname(sqlite_vector.__file__), "binaries", "vector")
    elif name == "sqlite-vec":
        import sqlite_vec
        ext = sqlite_vec.loadable_path()
    else:
        ext = extension
    return SqlSystem(name, ext, dim, os.path.join(work, f"{name}.db"))


# --- measurements ------------------------------------------------------------------------

def measure_static(sysm, Q, n):
    conn = sysm.connect()
    for q in Q[:5]:
        sysm.search(conn, q)
    lat, returned = [], []
    for q in Q[:n]:
        t0 = time.perf_counter()
        ids = sysm.search(conn, q)
        lat.append(ms(t0))
        returned.append([i - 1 for i in ids])
    sysm.close(conn)
    return statistics.median(lat), returned


def measure_after_write(sysm, Q, W, rounds, id_base):
    """Median latency of the reader's first query after another connection's 1-row write.

    For sqliteai-vector-q8 the writer also re-quantizes (timed apart) and the reader preloads
    again before searching (inside the timed query): what it takes for the row to be found.
    """
    reader, writer = sysm.connect(), sysm.connect(search=False)
    sysm.search(reader, Q[0])
    lat, found, requant = [], 0, []
    for i in range(rounds):
        w = W[i % len(W)]
        sysm.insert(writer, id_base + i, w)
        if sysm.quantized_refresh:
            t0 = time.perf_counter()
            sysm.requantize(writer)
            requant.append(ms(t0))
        t0 = time.perf_counter()
        if sysm.quantized_refresh:
            sysm.preload(reader)
        sysm.search(reader, Q[i % len(Q)])
        lat.append(ms(t0))
        found += (id_base + i) in sysm.search(reader, w)  # untimed: is the new row searchable?
    sysm.close(reader)
    sysm.close(writer)
    out = {"after_write_ms": statistics.median(lat), "after_write_rounds": rounds,
           "new_row_found": found / rounds}
    if requant:
        out["requantize_ms"] = statistics.median(requant)
    return out


def measure_mixed(sysm, Q, W, readers, seconds, id_base):
    stop = threading.Event()
    lat, errors, missing, preload_ms = [], [], [], []
    lock = threading.Lock()
    written = [0]  # rows committed so far
    generation = [0, 0]  # [rounds of re-quantization finished, rows committed when the last began]
    requant_ms = []

    def writer_loop():
        conn = sysm.connect(search=False)
        i = 0
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                sysm.insert(conn, id_base + i, W[i % len(W)])
                written[0] += 1
            except Exception as e:  # busy: counted, the run goes on
                errors.append(str(e))
            i += 1
            time.sleep(max(0.0, 0.1 - (time.perf_counter() - t0)))
        sysm.close(conn)

    def requantize_loop():
        conn = sysm.connect(search=False)
        while not stop.is_set():
            start_rows = written[0]
            t0 = time.perf_counter()
            try:
                sysm.requantize(conn)
            except Exception as e:
                errors.append(str(e))
                continue
            requant_ms.append(ms(t0))
            with lock:
                generation[:] = [generation[0] + 1, start_rows]
            stop.wait(1.0)
        sysm.close(conn)

    def reader_loop(seed):
        conn = sysm.connect()
        sysm.search(conn, Q[seed])
        mine, miss, pre, j, seen = [], [], [], seed, 0
        covered = 0
        while not stop.is_set():
            t0 = time.perf_counter()
            if sysm.quantized_refresh:
                with lock:
                    gen, rows = generation
                if gen != seen:
                    t1 = time.perf_counter()
                    sysm.preload(conn)
                    pre.append(ms(t1))
                    seen, covered = gen, rows
                miss.append(written[0] - covered)
            sysm.search(conn, Q[j % len(Q)])
            mine.append(ms(t0))
            j += 7
        sysm.close(conn)
        with lock:
            lat.extend(mine)
            missing.extend(miss)
            preload_ms.extend(pre)

    threads = [threading.Thread(target=writer_loop)]
    if sysm.quantized_refresh:
        threads.append(threading.Thread(target=requantize_loop))
    threads += [threading.Thread(target=reader_loop, args=(r,)) for r in range(readers)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    out = {"queries": len(lat), "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95),
           "p99_ms": pct(lat, 99), "rows_written": written[0], "write_errors": len(errors)}
    if sysm.quantized_refresh:
        out["requantize_rounds"] = len(requant_ms)
        out["requantize_ms"] = statistics.median(requant_ms) if requant_ms else None
        out["rows_missing_mean"] = statistics.mean(missing) if missing else None
        out["rows_missing_max"] = max(missing) if missing else None
        out["preloads"] = len(preload_ms)
        out["preload_ms"] = statistics.median(preload_ms) if preload_ms else None
        out["preload_max_ms"] = max(preload_ms) if preload_ms else None
    return out


def memory_child(name, path, extension, connections, dim, data):
    """In a fresh process: resident memory gained by searching once on each connection."""
    q = np.ones(dim, dtype=np.float32)
    if name.startswith("faiss"):
        import faiss  # noqa: F401  (loaded before the baseline)
        sysm = FaissSystem(name, dim)
        base = rss_bytes()
        X = np.load(data, mmap_mode="r")
        sysm.index = faiss_index(name, dim)
        faiss_fill(sysm.index, X)
        sysm.ids = list(range(1, len(X) + 1))
        del X
        threads = [threading.Thread(target=sysm.search, args=(None, q)) for _ in range(connections)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return rss_bytes() - base
    sysm = SqlSystem(name, extension, dim, path)
    conns = [sysm.connect(search=False) for _ in range(connections)]
    for c in conns:
        c.execute("select 1").fetchall()
    base = rss_bytes()
    for c in conns:
        if sysm.quantized_refresh:
            sysm.preload(c)
        sysm.search(c, q)
    return rss_bytes() - base


def measure_memory(sysm, connections, data):
    path = getattr(sysm, "path", "")
    ext = getattr(sysm, "extension", "")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", sysm.name, path, ext,
                          str(connections), str(sysm.dim), data],
                         check=True, capture_output=True, text=True, cwd=HERE)
    return int(out.stdout.strip().splitlines()[-1])


def run_system(name, args, extension, X, Q, W, gt_dists, data, work):
    dim = int(X.shape[1])
    sysm = make_system(name, extension, dim, work)
    log(f"{name}: building {len(X):,} rows")
    t0 = time.perf_counter()
    sysm.build(X)
    r = {"build_s": time.perf_counter() - t0, "version": str(sysm.version())}
    r["static_ms"], returned = measure_static(sysm, Q, 100)
    r["recall_at_10"], _ = datasets.recall_at_k(X, Q, gt_dists, returned, K)
    rounds = args.requantize_rounds if sysm.quantized_refresh else args.rounds
    r.update(measure_after_write(sysm, Q, W, rounds, 10_000_000))
    log(f"{name}: static {r['static_ms']:.1f} ms (recall@10 {r['recall_at_10']:.3f}), "
        f"after a write {r['after_write_ms']:.1f} ms, new row found {r['new_row_found']:.0%}")
    r["mixed"] = {}
    for readers in (1, 2, 4):
        r["mixed"][str(readers)] = measure_mixed(sysm, Q, W, readers, args.seconds, 20_000_000 + readers * 1_000_000)
        log(f"{name}: {readers} reader(s) + writer at 10 rows/s: {r['mixed'][str(readers)]}")
    if name.startswith("faiss"):
        sysm.cleanup()  # the memory child builds its own index
        r["memory_bytes"] = {str(c): measure_memory(sysm, c, data) for c in (1, 5)}
    else:
        r["memory_bytes"] = {str(c): measure_memory(sysm, c, data) for c in (1, 5)}
        sysm.cleanup()
    log(f"{name}: memory gained by searching connections: {r['memory_bytes']}")
    return r


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--memory-child":
        name, path, ext, n, dim, data = sys.argv[2:8]
        print(memory_child(name, path, ext, int(n), int(dim), data))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extension", default=common.EXTENSION)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=15.0, help="length of each mixed run")
    ap.add_argument("--rounds", type=int, default=50, help="after-write rounds")
    ap.add_argument("--requantize-rounds", type=int, default=10,
                    help="after-write rounds for sqliteai-vector-q8 (each re-quantizes the whole table)")
    ap.add_argument("--quick", action="store_true", help="10,000 rows, 4 s mixed runs, into bench/data/quick/")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="a subset of " + " ".join(SYSTEMS))
    ap.add_argument("--out-dir", help="where CONCURRENT.md, concurrent.json and concurrent.png go")
    ap.add_argument("--redraw", action="store_true", help="only rebuild the report and chart from the JSON")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.seconds, args.rounds, args.requantize_rounds = 10_000, 4.0, 20, 5
    out_dir = args.out_dir or (os.path.join(HERE, "data", "quick") if args.quick else HERE)
    os.makedirs(out_dir, exist_ok=True)
    if args.redraw:
        with open(os.path.join(out_dir, "concurrent.json")) as f:
            write_report(json.load(f), out_dir)
        return
    for name in args.systems.split(","):
        if name not in SYSTEMS:
            raise SystemExit(f"unknown system {name!r}; one of {' '.join(SYSTEMS)}")
    extension = os.path.abspath(args.extension)

    X, Q = datasets.generate(args.rows, 300, seed=1)
    W, _ = datasets.generate(2_000, 1, seed=2)
    _, gt_dists = datasets.exact_topk(X, Q[:100], K)
    results = {"rows": args.rows, "dim": int(X.shape[1]), "k": K, "seconds": args.seconds,
               "machine": {"cpu": machine.cpu_model(), "cores": machine.physical_cores(),
                           "logical_cores": os.cpu_count(), "memory_gib": machine.memory_gib(),
                           "os": machine.os_name(), "revision": machine.git_revision(os.path.dirname(HERE)),
                           "load_at_start": machine.load_average()},
               "systems": {}}
    work = tempfile.mkdtemp(prefix="vecsync-concurrent-")
    data = os.path.join(work, "vectors.npy")
    np.save(data, X)
    try:
        for name in args.systems.split(","):
            results["systems"][name] = run_system(name, args, extension, X, Q, W, gt_dists, data, work)
    finally:
        os.remove(data)
        for f in os.listdir(work):
            os.remove(os.path.join(work, f))
        os.rmdir(work)
    results["machine"]["load_at_end"] = machine.load_average()

    with open(os.path.join(out_dir, "concurrent.json"), "w") as f:
        json.dump(results, f, indent=2)
    write_report(results, out_dir)


def write_report(results, out_dir):
    with open(os.path.join(out_dir, "CONCURRENT.md"), "w") as f:
        f.write(render(results))
    chart(results, os.path.join(out_dir, "concurrent.png"))
    print(render(results))


NOTES = {
    "vecsync": "vec0, float32, one copy per process",
    "vecsync-int8": "vec0, `indexed by rescore(quantizer=int8)`",
    "sqlite-vec": "vec0 0.1.9",
    "sqliteai-vector": "`vector_full_scan` (exact)",
    "sqliteai-vector-q8": "`vector_quantize_scan`, 8-bit, preloaded",
    "faiss-flat": "`IndexFlatIP`, in process",
    "faiss-sq8": "`IndexScalarQuantizer` 8-bit, in process",
}


def render(res):
    m = res["machine"]
    load = m.get("load_at_start", "unknown")
    if m.get("load_at_end"):
        load += f" at the start, {m['load_at_end']} at the end"
    lines = [f"# Search while the app writes: {res['rows']:,} x {res['dim']}, cosine, k = {res['k']}", "",
             f"Machine: {m['cpu']}, {m['cores']} cores"
             + (f" ({m['logical_cores']} logical)" if m.get("logical_cores") else "")
             + (f", {m['memory_gib']:.1f} GiB" if m.get("memory_gib") else "")
             + (f", {m['os']}" if m.get("os") else "")
             + f"; load average {load} (1, 5, 15 min). The machine was shared with other builds while "
             "this ran, so absolute times are noisy; every system ran in the same run on the same data."
             + (f" Extension built from {m['revision']}." if m.get("revision") else ""), "",
             "Produced by `bench/concurrent.py` (its docstring says exactly what each system does). "
             "SQL systems: one WAL file, each connection its own apsw connection and thread. faiss: one "
             "index in the process shared by threads under a readers-writer lock.", "",
             "## Static and right after a write", "",
             "| system | what | static query | recall@10 | query right after another connection's 1-row write "
             "| ratio (bar 1.5x) | the new row found |",
             "|---|---|---|---|---|---|---|"]
    for name, r in res["systems"].items():
        extra = ""
        if "requantize_ms" in r:
            extra = f" (+ writer's `vector_quantize` {r['requantize_ms']:.0f} ms)"
        lines.append(f"| {name} | {NOTES.get(name, '')} | {r['static_ms']:.1f} ms | {r['recall_at_10']:.3f} | "
                     f"{r['after_write_ms']:.1f} ms{extra} | {r['after_write_ms'] / r['static_ms']:.2f}x | "
                     f"{r['new_row_found']:.0%} |")
    if "sqliteai-vector-q8" in res["systems"]:
        lines += ["", "sqliteai-vector-q8: its quantized codes see a new row only after `vector_quantize` "
                  "re-codes the whole table, and a connection's preloaded codes only after it runs "
                  "`vector_quantize_preload` again; its after-write figure is the reader's preload plus "
                  "query, the writer's re-quantization is shown beside it. Its distances are those of the "
                  "8-bit codes (not re-scored)."]
    lines += ["", f"## Mixed: one writer inserting 10 rows/s, N searchers for {res['seconds']:.0f} s", "",
              "Latency of every search of every searcher (for sqliteai-vector-q8 including the preload a "
              "reader runs before its next search when a re-quantization finished). "
              "Chart: [concurrent.png](concurrent.png).", "",
              "| system | searchers | queries | p50 | p95 | p99 | rows written |", "|---|---|---|---|---|---|---|"]
    for name, r in res["systems"].items():
        for readers, mx in r["mixed"].items():
            lines.append(f"| {name} | {readers} | {mx['queries']} | {mx['p50_ms']:.1f} ms | {mx['p95_ms']:.1f} ms | "
                         f"{mx['p99_ms']:.1f} ms | {mx['rows_written']} |")
    q8 = res["systems"].get("sqliteai-vector-q8")
    if q8:
        parts = []
        for readers, mx in q8["mixed"].items():
            if mx.get("requantize_rounds"):
                part = (f"{readers} searcher(s): {mx['requantize_rounds']} re-quantizations of "
                        f"{mx['requantize_ms']:.0f} ms each (median), ")
                if mx.get("preloads"):
                    part += (f"{mx['preloads']} preloads of {mx['preload_ms']:.0f} ms (median, at most "
                             f"{mx['preload_max_ms']:.0f} ms), ")
                part += (f"searches missed {mx['rows_missing_mean']:.1f} of the rows written so far on average "
                         f"(at most {mx['rows_missing_max']}), {mx['rows_written']} rows written")
                parts.append(part)
        lines += ["", "sqliteai-vector-q8 in the mixed run: a third connection re-quantizes the table, "
                  "waits 1 s, and again; each reader preloads before its next search once a round finished. "
                  "A re-quantization is one write transaction over the whole table, so the writer waits for "
                  "it while it runs (compare its rows written with the others', about 10 a second). "
                  "Searches in the process that coincide with a re-quantization wait for it too (a separate "
                  "check at 10,000 rows: the GIL stays free meanwhile, and a search in another connection "
                  "takes as long as the re-quantization), which is where its p95 and p99 come from, not "
                  "from the preloads. " + "; ".join(parts) + "."]
    lines += ["", "## Memory against the number of searching connections", "",
              "Resident memory a new process gains when its connections search once each (after opening "
              "them). faiss: the index is per process, built in it and shared by 1 or 5 searching "
              "threads; its figure is the process's growth from building it.", "",
              "| system | 1 connection | 5 connections | ratio (bar 1.25x) |", "|---|---|---|---|"]
    for name, r in res["systems"].items():
        one, five = r["memory_bytes"]["1"], r["memory_bytes"]["5"]
        ratio = f"{five / one:.2f}x" if one > 0 else "n/a"
        label = name + (" (per process, threads)" if name.startswith("faiss") else "")
        lines.append(f"| {label} | {one / 2**20:.1f} MiB | {five / 2**20:.1f} MiB | {ratio} |")
    lines += ["", "## What the peers' figures leave out", "",
              "- sqlite-vec and sqliteai-vector's `vector_full_scan` keep no copy of the vectors: every "
              "search reads all of them from SQLite's pages, so their memory is each connection's page "
              "cache and their latency that of a full read and scan.",
              "- sqliteai-vector-q8 searches 8-bit codes of the rows present at the last `vector_quantize`, "
              "as preloaded by that connection: rows written since are not found until the whole table is "
              "re-coded and each connection preloads again, each connection holds its own preloaded codes, "
              "and distances are the codes' (no exact re-scoring).",
              "- faiss lives in one process: the index is not shared with other processes, is not "
              "persistent, and has no transactions or snapshots (a search sees a row the moment `add` "
              "returns; nothing rolls back). The 8-bit index's ranges come from the rows it was trained "
              "on; later rows outside them are clipped.",
              "- Ours: one copy per process shared by every connection, refreshed incrementally after "
              "writes, each reader seeing its own snapshot; the int8 variant re-scores its candidates "
              "exactly from the float32 vectors.",
              ]
    lines += ["", "## Bars", "",
              "| system | after a write / static (bar 1.5x) | 5 connections / 1 (bar 1.25x) |", "|---|---|---|"]
    for name, r in res["systems"].items():
        one, five = r["memory_bytes"]["1"], r["memory_bytes"]["5"]
        a = r["after_write_ms"] / r["static_ms"]
        mem = five / one if one > 0 else None
        lines.append(f"| {name}{' (per process)' if name.startswith('faiss') else ''} | "
                     f"{a:.2f}x {'met' if a <= 1.5 else 'missed'} | "
                     + (f"{mem:.2f}x {'met' if mem <= 1.25 else 'missed'}" if mem else "n/a") + " |")
    lines += ["", "A ratio is all the memory bar looks at: sqlite-vec's and `vector_full_scan`'s misses are a few "
              "MiB of page cache per connection (they keep no copy, and pay for it in every search's latency), "
              "sqliteai-vector-q8's a preloaded copy of the codes per connection."]
    return "\n".join(lines) + "\n"


def chart(res, path):
    plt = common.pyplot()

    names = list(res["systems"])
    readers = ["1", "2", "4"]
    fig, ax = plt.subplots(figsize=(12, 5.5))
    width = 0.8 / max(len(names), 1)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, name in enumerate(names):
        mixed = res["systems"][name]["mixed"]
        xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(readers))]
        p50 = [mixed[r]["p50_ms"] for r in readers]
        p99 = [mixed[r]["p99_ms"] for r in readers]
        c = colors[i % len(colors)]
        ax.bar(xs, p99, width * 0.9, color=c, alpha=0.35, edgecolor=c)
        ax.bar(xs, p50, width * 0.9, color=c, label=name)
    ax.set_yscale("log")
    ax.set_xticks(range(len(readers)))
    ax.set_xticklabels([f"{r} searcher{'s' if r != '1' else ''}" for r in readers])
    ax.set_ylabel("search latency, ms (log scale)")
    ax.set_title(f"Searching while one writer inserts 10 rows/s: {res['rows']:,} x {res['dim']}, k = {res['k']}\n"
                 "solid: p50, pale: p99")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
