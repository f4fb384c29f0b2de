"""1,000,000 x 384: import into a database file, then a cold and a warm query in a new process.

Run by ``make bench``:

    bench/.venv/bin/python bench/scale.py --extension .build/libvecsync.so
    bench/.venv/bin/python bench/scale.py --quick        # 20,000 rows, a smoke test

Data: the synthetic clusters of datasets.py at 384 dimensions (seed 42 unless --seed),
1,000,000 stored vectors and 21 queries, cosine distance, k = 10, one thread.

For each system, three processes of their own:

1. **import**: create the table in a new database file, insert every vector in one
   transaction (faiss: normalise, add, ``write_index``); time, rows/s, file size.
   A system whose import would take longer than --import-budget seconds (projected from
   its first 20,000 rows) is skipped with a note.
2. **cold**: the OS page cache is dropped first when this process may do so (root,
   ``/proc/sys/vm/drop_caches``); otherwise "cold" means a new process with the file in the
   page cache, and the report says which. Then: open (connection + extension, or
   ``read_index``), first query, each timed, and the time from the process's start.
3. **warm**: a new process again (the file now in the page cache): open, first query,
   then the median of 20 more queries; resident memory after them. Then the same queries
   at each count of --threads (default 1,2), interleaved, for the systems that can scan on
   several threads: ours (``PRAGMA threads = t - 1``) and faiss (``omp_set_num_threads(t)``).

Recall@10 of the warm queries against exact float64 search. Writes SCALE.md, scale.png
and scale.json to bench/ (``--quick``: bench/data/quick/).
"""

import argparse
import json
import os
import signal
import statistics
import sys
import time

import numpy as np

import common  # noqa: E402

HERE = common.HERE
REPO = common.REPO
DATA = common.DATA
PROBE_ROWS = 20_000
PRAGMAS = {}  # system -> PRAGMA settings of its connections (--pragma-rows)

# (system, label, kind, options)
SYSTEMS = [
    ("vecsync-vec0", "vecsync vec0 float32", "vec0", ""),
    ("vecsync-int8", "vecsync vec0 int8 rescore", "vec0", " indexed by rescore(quantizer=int8)"),
    ("vecsync-bit", "vecsync vec0 bit rescore", "vec0", " indexed by rescore(quantizer=bit)"),
    ("sqlite-vec", "sqlite-vec vec0 float32", "sqlite-vec", ""),
    ("sqliteai-vector", "sqlite-vector quantize_scan", "sqliteai", ""),
    ("faiss", "faiss IndexFlatIP", "faiss", "flat"),
    ("faiss-sq8", "faiss IndexScalarQuantizer 8-bit", "faiss", "sq8"),
]


log = common.log
rss_mib = common.rss_mib
remove_db = common.remove_db


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


class Sql:
    """apsw connection with the system's extension loaded; its queries."""

    def __init__(self, system: str, kind: str, path: str, extension: str | None):
        import importlib.util

        import apsw

        self.conn = apsw.Connection(path)
        for pragma in PRAGMAS.get(system, ()):
            self.conn.execute(f"pragma {pragma}")
        self.conn.enable_load_extension(True)
        if kind == "vec0":
            self.conn.load_extension(extension)
        elif kind == "sqlite-vec":
            spec = importlib.util.find_spec("sqlite_vec")
            self.conn.load_extension(os.path.join(os.path.dirname(spec.origin), "vec0"))
        elif kind == "sqliteai":
            spec = importlib.util.find_spec("sqlite_vector")
            self.conn.load_extension(os.path.join(os.path.dirname(spec.origin), "binaries", "vector"))
        self.kind = kind
        self.sql = {
            "vec0": "select id, distance from v where embedding match ? and k = {k} order by distance",
            "sqlite-vec": "select id, distance from v where embedding match ? and k = {k} order by distance",
            "sqliteai": "select rowid, distance from vector_quantize_scan('t', 'embedding', ?, {k})",
        }[kind]

    def rows(self, sql, params=()):
        return self.conn.execute(sql, params).fetchall()

    def prepare_search(self, dim: int):
        """sqlite-vector needs vector_init on every connection, and a preload for its scan."""
        if self.kind == "sqliteai":
            self.rows("select vector_init('t', 'embedding', ?)",
                      (f"dimension={dim},type=FLOAT32,distance=COSINE",))
            self.rows("select vector_quantize_preload('t', 'embedding')")

    def search(self, q: np.ndarray, k: int):
        return [int(i) - 1 for i, _ in self.rows(self.sql.format(k=k), (q.tobytes(),))]


def _faiss_index(faiss, option: str, dim: int):
    if option == "sq8":
        return faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    return faiss.IndexFlatIP(dim)


def do_import(a, out: dict) -> None:
    X = np.load(os.path.join(a.data, "vectors.npy"), mmap_mode="r")[: a.n]
    n, dim = X.shape
    kind, option = a.kind, a.option
    if kind == "faiss":
        import faiss

        faiss.omp_set_num_threads(1)
        out["versions"] = {"faiss": faiss.__version__}
        t0 = time.perf_counter()
        Xn = np.array(X, dtype=np.float32)
        faiss.normalize_L2(Xn)
        index = _faiss_index(faiss, option, dim)
        if not index.is_trained:
            index.train(Xn)
        index.add(Xn)
        del Xn
        faiss.write_index(index, a.db)
        out["import_s"] = time.perf_counter() - t0
        out["import_note"] = "normalise, add" + (" (after train)" if option == "sq8" else "") + ", write_index"
    else:
        db = Sql(a.system, kind, a.db, a.extension)
        if kind == "sqliteai":
            db.rows("create table t(id integer primary key, embedding blob)")
            insert = "insert into t(id, embedding) values (?, ?)"
        else:
            db.rows(f"create virtual table v using vec0(id integer primary key, "
                    f"embedding float[{dim}] distance_metric=cosine{a.option})")
            insert = "insert into v(id, embedding) values (?, ?)"
        t0 = time.perf_counter()
        db.rows("begin")
        chunk = 10_000
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            block = np.ascontiguousarray(X[start:stop], dtype=np.float32)
            db.conn.executemany(insert, ((start + i + 1, block[i].tobytes()) for i in range(len(block))))
            if stop == PROBE_ROWS and n > 2 * PROBE_ROWS:
                projected = n * (time.perf_counter() - t0) / stop
                out["projected_import_s"] = projected
                if projected > a.import_budget:
                    db.rows("rollback")
                    out["status"] = "skipped"
                    out["error"] = (f"import projected at {projected / 60:.0f} min from its first "
                                    f"{PROBE_ROWS:,} rows ({PROBE_ROWS / (time.perf_counter() - t0):,.0f} "
                                    f"rows/s), over the {a.import_budget / 60:.0f} min budget")
                    return
        db.rows("commit")
        out["insert_s"] = time.perf_counter() - t0
        out["import_note"] = "inserts in one transaction"
        if kind == "sqliteai":
            t1 = time.perf_counter()
            db.rows("select vector_init('t', 'embedding', ?)",
                    (f"dimension={dim},type=FLOAT32,distance=COSINE",))
            db.rows("select vector_quantize('t', 'embedding')")
            out["quantize_s"] = time.perf_counter() - t1
            out["import_note"] += ", then vector_init + vector_quantize"
        out["import_s"] = time.perf_counter() - t0
        if kind == "vec0":
            out["cache_info"] = json.loads(db.rows("select vecsync_cache_info('v')")[0][0])
        db.conn.close()
    out["file_bytes"] = sum(os.path.getsize(a.db + s) for s in ("", "-wal") if os.path.exists(a.db + s))
    out["rows_per_s"] = n / out["import_s"]
    log(f"{a.label}: imported {n:,} rows in {out['import_s']:.1f} s "
        f"({out['rows_per_s']:,.0f} rows/s), file {out['file_bytes'] / 2**20:,.0f} MiB")


def do_query(a, out: dict) -> None:
    Q = np.load(os.path.join(a.data, "queries.npy"))
    dim = Q.shape[1]
    # Python modules load before the clock starts ("from process start" counts them).
    if a.kind == "faiss":
        import faiss

        faiss.omp_set_num_threads(1)
    else:
        import apsw  # noqa: F401
    t0 = time.perf_counter()
    if a.kind == "faiss":
        index = faiss.read_index(a.db)

        def search(q):
            qn = np.array(q[None, :], dtype=np.float32)
            faiss.normalize_L2(qn)
            return [int(i) for i in index.search(qn, a.k)[1][0]]
    else:
        db = Sql(a.system, a.kind, a.db, a.extension)
        db.prepare_search(dim)

        def search(q):
            return db.search(q, a.k)
    out["open_ms"] = _ms(t0)
    t1 = time.perf_counter()
    first = search(Q[0])
    out["first_query_ms"] = _ms(t1)
    out["open_and_first_ms"] = _ms(t0)
    out["process_to_first_answer_ms"] = (time.time() - a.spawned) * 1e3
    out["first_ids"] = first
    if a.warm:
        lat, ids = [], []
        if a.kind == "vec0":
            db.rows("pragma threads = 0")
        for q in Q[1 : 1 + a.warm]:
            t1 = time.perf_counter()
            ids.append(search(q))
            lat.append(_ms(t1))
        out["warm_median_ms"] = statistics.median(lat)
        out["warm_min_ms"] = min(lat)
        out["warm_max_ms"] = max(lat)
        out["warm_ids"] = ids
        counts = common.parse_threads(a.threads)
        if len(counts) > 1 and a.kind in ("vec0", "faiss"):
            if a.kind == "vec0":
                def set_threads(t):
                    db.rows(f"pragma threads = {t - 1}")

                def note(t):
                    return db.rows("select json_extract(vecsync_cache_info('v'), '$.scan_threads')")[0][0]
            else:
                def set_threads(t):
                    faiss.omp_set_num_threads(t)

                note = None
            out["threads"] = common.time_threads(search, set_threads, Q[1 : 1 + a.warm], counts, note)
            log(f"{a.label}: " + ", ".join(
                f"{t} thread{'s' if int(t) > 1 else ''} {v['median_ms']:.1f} ms ({v['ratio']:.2f}x)"
                for t, v in out["threads"]["by_threads"].items())
                + ("" if out["threads"]["same_answers"] else " -- ANSWERS DIFFER"))
    out["rss_mib"] = rss_mib()
    if a.kind == "vec0":
        out["cache_info"] = json.loads(db.rows("select vecsync_cache_info('v')")[0][0])
    log(f"{a.label} ({a.phase}): open {out['open_ms']:.1f} ms, first query {out['first_query_ms']:.1f} ms"
        + (f", warm median {out['warm_median_ms']:.1f} ms" if a.warm else "")
        + f", RSS {out['rss_mib']:,.0f} MiB")


def worker(a) -> int:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[var] = "1"
    out = {"status": "ok"}
    try:
        (do_import if a.phase == "import" else do_query)(a, out)
    except Exception as e:
        import traceback

        traceback.print_exc(file=sys.stderr)
        out.update(status="failed", error=f"{type(e).__name__}: {e}")
    with open(a.out, "w") as f:
        json.dump(out, f)
    return 0


# --------------------------------------------------------------------------------------
# Driver side.


def median_runs(runs: list) -> dict:
    """One phase run several times (--repeat): each number the median of the runs, everything
    else the first run's; "runs" keeps each run's first-query time. A failed run wins."""
    for run in runs:
        if run.get("status") != "ok":
            return run
    out = dict(runs[0])
    for key, value in runs[0].items():
        values = [run.get(key) for run in runs]
        if isinstance(value, (int, float)) and not isinstance(value, bool) \
                and all(isinstance(v, (int, float)) for v in values):
            out[key] = statistics.median(values)
    out["runs"] = len(runs)
    out["first_query_runs_ms"] = [run.get("first_query_ms") for run in runs]
    return out


def drop_page_cache() -> bool:
    """Flush and drop the OS page cache, if this process is allowed to (root)."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def prepare_data(n: int, queries: int, seed: int, dim: int) -> str:
    import datasets

    d = os.path.join(DATA, f"lowrank{dim}-seed{seed}-n{n}-q{queries}")
    meta = {"n": n, "queries": queries, "seed": seed, "dim": dim, "clusters": datasets.CLUSTERS,
            "rank": datasets.RANK, "noise": datasets.NOISE, "chunk": datasets.CHUNK, "format": 1}
    return datasets.cached(d, meta, lambda: datasets.generate(n, queries, seed, dim=dim))


def run_phase(args, system, label, kind, option, phase, db, data_dir, timeout, env) -> dict:
    out = os.path.join(DATA, f"scale-{system}-{phase}.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--phase", phase,
           "--system", system, "--label", label, "--kind", kind, "--option", option,
           "--db", db, "--data", data_dir, "--n", str(args.n), "--k", str(args.k),
           "--warm", str(args.warm if phase == "warm" else 0),
           "--import-budget", str(args.import_budget), "--threads", args.threads, "--out", out,
           "--spawned", repr(time.time())]
    if args.extension:
        cmd += ["--extension", args.extension]
    if "(PRAGMA " in label:
        cmd += ["--pragma", label.split("(PRAGMA ", 1)[1].rstrip(")")]
    return common.run_json_process(cmd, out, env, timeout, f"{phase} worker")


def main() -> int:
    p = argparse.ArgumentParser(description="1M x 384: import, cold first query, warm query.")
    p.add_argument("--extension", default=common.EXTENSION)
    p.add_argument("--quick", action="store_true", help="20,000 rows, 5 warm queries; output to bench/data/quick/")
    p.add_argument("--n", type=int)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--warm", type=int, help="warm queries (default 20)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--import-budget", type=float, default=300,
                   help="skip a system whose import is projected to take longer (seconds, default 300)")
    common.add_our_table_options(p, SYSTEMS)
    p.add_argument("--merge", action="store_true",
                   help="add this run's systems to the scale.json already in the output "
                        "directory (replacing those of the same name) instead of starting anew")
    p.add_argument("--no-drop-cache", action="store_true",
                   help="never drop the page cache: cold means a new process only")
    p.add_argument("--out-dir")
    p.add_argument("--repeat", type=int, default=1,
                   help="cold and warm processes per system; the report gives their medians")
    p.add_argument("--threads", default="1,2",
                   help="thread counts the warm queries are timed at, beside one thread "
                        "(ours: PRAGMA threads; faiss: omp_set_num_threads; default 1,2)")
    # Worker mode (one phase of one system).
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for opt in ("--phase", "--system", "--label", "--kind", "--option", "--db", "--data", "--out"):
        p.add_argument(opt, help=argparse.SUPPRESS)
    p.add_argument("--spawned", type=float, help=argparse.SUPPRESS)
    p.add_argument("--pragma", action="append", default=[], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        args.warm = args.warm or 0
        PRAGMAS[args.system] = args.pragma
        return worker(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    sys.path.insert(0, HERE)
    import datasets
    import machine

    args.n = args.n or (20_000 if args.quick else 1_000_000)
    args.warm = args.warm or (5 if args.quick else 20)
    args.extension = os.path.abspath(args.extension) if args.extension else None
    systems = list(SYSTEMS)
    for o in (int(x) for x in args.oversample.split(",") if x):
        for q in ("int8", "bit"):
            systems.insert(3, (f"vecsync-{q}-os{o}", f"vecsync vec0 {q} rescore (oversample {o})",
                               "vec0", f" indexed by rescore(quantizer={q}, oversample={o})"))
    for i, pragma in enumerate(x.strip() for x in args.pragma_rows.split(";") if x.strip()):
        for q in ("int8", "bit"):
            systems.insert(3, (f"vecsync-{q}-pragma{i + 1}",
                               f"vecsync vec0 {q} rescore (PRAGMA {pragma})", "vec0",
                               f" indexed by rescore(quantizer={q})"))
    wanted = set(args.systems.split(",")) if args.systems else None
    out_dir = args.out_dir or (os.path.join(DATA, "quick") if args.quick else HERE)
    started = time.perf_counter()
    info = machine.describe(REPO)
    log(f"machine: {info['cpu']}, {info['logical_cores']} cores, {info['memory_gib']:.0f} GiB, "
        f"{info['os']}, load average {info['load_at_start']}")

    n_q = 1 + args.warm
    data_dir = prepare_data(args.n, n_q, args.seed, args.dim)
    X = np.load(os.path.join(data_dir, "vectors.npy"), mmap_mode="r")
    Q = np.load(os.path.join(data_dir, "queries.npy"))
    t0 = time.perf_counter()
    _, gt = datasets.exact_topk(X, Q, args.k, block=50_000)
    log(f"exact top-{args.k} of {n_q} queries in {time.perf_counter() - t0:.1f} s")

    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        env[var] = "1"
    db_dir = os.path.join(DATA, "scale-db")
    os.makedirs(db_dir, exist_ok=True)
    can_drop = not args.no_drop_cache and drop_page_cache()
    log("cold queries after dropping the page cache" if can_drop else
        "cannot drop the page cache: cold means a new process with the file cached")
    results = []
    for system, label, kind, option in systems:
        if wanted and system not in wanted:
            continue
        log(f"--- {label}, {args.n:,} x {args.dim}")
        db = os.path.join(db_dir, f"{system}.{'faiss' if kind == 'faiss' else 'db'}")
        remove_db(db)
        r = {"system": system, "label": label}
        try:
            imp = run_phase(args, system, label, kind, option, "import", db, data_dir,
                            args.import_budget * 1.5 + 60, env)
            r["import"] = imp
            if imp.get("status") != "ok":
                r.update(status=imp.get("status"), error=imp.get("error"))
                log(f"{label}: {r['status']}: {r['error']}")
                results.append(r)
                continue
            colds, warms = [], []
            for _ in range(max(1, args.repeat)):
                r["cache_dropped"] = can_drop and drop_page_cache()
                colds.append(run_phase(args, system, label, kind, option, "cold", db, data_dir, 600, env))
                warms.append(run_phase(args, system, label, kind, option, "warm", db, data_dir, 900, env))
            r["cold"], r["warm"] = median_runs(colds), median_runs(warms)
            bad = [ph for ph in ("cold", "warm") if r[ph].get("status") != "ok"]
            r["status"] = "failed" if bad else "ok"
            if bad:
                r["error"] = "; ".join(r[ph].get("error", "") for ph in bad)
            ids = r["warm"].pop("warm_ids", None)
            if ids:
                r["recall"], _ = datasets.recall_at_k(X, Q[1:], gt[1:], ids, args.k)
            for ph in ("cold", "warm"):
                first = r[ph].pop("first_ids", None)
                if first and ph == "cold":
                    r["cold_recall"], _ = datasets.recall_at_k(X, Q[:1], gt[:1], [first], args.k)
        finally:
            remove_db(db)
        results.append(r)
    try:
        os.rmdir(db_dir)
    except OSError:
        pass
    info["load_at_end"] = machine.load_average()
    run = {"machine": info,
           "settings": {"n": args.n, "dim": args.dim, "k": args.k, "warm": args.warm, "seed": args.seed,
                        "threads": common.parse_threads(args.threads),
                        "clusters": datasets.CLUSTERS, "rank": datasets.RANK, "noise": datasets.NOISE,
                        "import_budget_s": args.import_budget, "page_cache_dropped": can_drop,
                        "repeat": max(1, args.repeat),
                        "extension": os.path.relpath(args.extension, REPO) if args.extension else None,
                        "quick": args.quick},
           "results": results}
    run = common.stamp(run, started)
    for r in results:
        r["load"] = {"start": info["load_at_start"], "end": info["load_at_end"]}
    os.makedirs(out_dir, exist_ok=True)
    if args.merge:
        with open(os.path.join(out_dir, "scale.json")) as f:
            old = json.load(f)
        names = {r["system"] for r in results}
        kept = [r for r in old["results"] if r["system"] not in names]
        order = [s for s, *_ in systems]
        run = dict(old, results=sorted(kept + results, key=lambda r: order.index(r["system"])
                                       if r["system"] in order else len(order)),
                   added=old.get("added", []) + [{"systems": sorted(names), "date": run["date"],
                                                  "machine": info, "wall_s": run["wall_s"]}])
    import scale_report

    return common.publish(run, out_dir, "scale", scale_report, chart="scale.png", markdown="SCALE.md")


if __name__ == "__main__":
    sys.exit(main())
