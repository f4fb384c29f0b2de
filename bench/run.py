"""VecSync vector benchmarks: our extension beside sqlite-vec, libSQL, numpy and faiss.

Run by ``make bench``:

    bash bench/setup.sh && bench/.venv/bin/python bench/run.py --extension .build/libvecsync.so

Every system is measured in the same run on the same seeded data (768-d float32, a
mixture of 100 clusters of rank 32), cosine distance, k = 10, one thread:

- N = 10,000 and 100,000 stored vectors (``--quick``: 10,000 only, fewer queries);
- build: inserts in one transaction (with the vector index in place for vector_top_k);
- single-query latency, median and p99 over 200 queries after 10 warm-up queries;
- batch: one call answering 100 queries, time per query;
- recall@10 against exact float64 answers;
- for the scanning systems, bytes scanned per second (N x 768 x 4 / median latency),
  beside a one-thread memory read bandwidth measured in the same run.

Our extension's rows run twice: with Debian's reference BLAS (``libblas3``) and with
OpenBLAS (``libopenblas0-pthread``, one thread), chosen per process by LD_LIBRARY_PATH.
libSQL's DiskANN index takes minutes to build 10,000 vectors, so libSQL runs at
N = 10,000 only unless ``--libsql-100k`` is given. Since an approximate index's recall
depends on the data, libSQL (and our vector_top_k beside it) runs a second time on
isotropic gaussian clusters, the hard case (skip with ``--no-isotropic``).

At the largest N, our float32, int8 and bit (``rescore``) tables and faiss (flat and SQ8)
run once more, each timing its queries at one thread and at two (``--threads``):
``PRAGMA threads`` for ours, ``omp_set_num_threads`` for faiss, interleaved query by query.

Writes RESULTS.md, latency.png and results.json to bench/ (``--quick``: to
bench/data/quick/, so a smoke test does not replace the published figures).
Each system runs in a process of its own (bench/worker.py); progress goes to stderr.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

import common
import datasets
import machine
import report

HERE = common.HERE
REPO = common.REPO
DATA = common.DATA

# (system, label) in the order they run and appear in the tables.
PEERS = [
    ("numpy", "numpy brute force"),
    ("faiss", "faiss IndexFlatIP"),
    ("sqlite-vec", "sqlite-vec vec0"),
]
OURS = [
    ("vecsync-vec0", "vecsync vec0"),
    ("vecsync-topk", "vecsync vector_top_k"),
]
LIBSQL = ("libsql", "libSQL vector_top_k (DiskANN)")
# Timed at one and two threads (--threads), at the largest N.
THREADED = [
    ("vecsync-vec0", "vecsync vec0 float32"),
    ("vecsync-int8", "vecsync vec0 int8 rescore"),
    ("vecsync-bit", "vecsync vec0 bit rescore"),
    ("faiss", "faiss IndexFlatIP"),
    ("faiss-sq8", "faiss IndexScalarQuantizer 8-bit"),
]


log = common.log
rel = common.rel


# --------------------------------------------------------------------------------------
# BLAS variants for our extension's rows.


def _dpkg_file(package: str, suffix: str) -> str | None:
    try:
        out = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True).stdout
    except OSError:
        return None
    for line in out.splitlines():
        if line.endswith(suffix) and os.path.exists(line):
            return line
    return None


def blas_variants(names: list[str]) -> list[dict]:
    """Each variant: name, label, env (extra environment) or reason it is unavailable."""
    # name: (label, Debian package holding the library, the end of its path; None: the
    # library the system's alternative points at, nothing to find)
    known = {
        "system": ("system BLAS", None, None),
        "reference": ("reference BLAS", "libblas3", "/blas/libblas.so.3"),
        "openblas": ("OpenBLAS", "libopenblas0-pthread", "/openblas-pthread/libblas.so.3"),
    }
    variants = []
    for name in names:
        if name not in known:
            raise SystemExit(f"unknown --blas variant {name!r} (reference, openblas, system)")
        label, package, suffix = known[name]
        v = {"name": name, "label": label}
        lib = _dpkg_file(package, suffix) if package else None
        if package is None:
            v["env"] = {}
        elif lib:
            v["env"] = {"LD_LIBRARY_PATH": os.path.dirname(lib)}
        else:
            v["reason"] = f"Debian package {package} not installed (apt-get install {package})"
        variants.append(v)
    return variants


# --------------------------------------------------------------------------------------
# Data.


def prepare_data(n: int, n_queries: int, seed: int, kind: str = "lowrank") -> str:
    """Write (or reuse) vectors.npy and queries.npy for the largest N; return the directory."""
    d = os.path.join(DATA, f"{kind}-seed{seed}-n{n}-q{n_queries}")
    meta = {"kind": kind, "n": n, "queries": n_queries, "seed": seed, "dim": datasets.DIM,
            "clusters": datasets.CLUSTERS, "rank": datasets.RANK, "noise": datasets.NOISE,
            "chunk": datasets.CHUNK, "format": 2}
    return datasets.cached(d, meta, lambda: datasets.generate(n, n_queries, seed, kind=kind))


# --------------------------------------------------------------------------------------
# Running workers.


def run_worker(system: str, label: str, n: int, args, data_dir: str, env_extra=None,
               extra_args=()) -> dict:
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        env[var] = "1"
    env.update(env_extra or {})
    fd, out = tempfile.mkstemp(prefix=f"{system}-", suffix=".json", dir=DATA)
    os.close(fd)
    cmd = [sys.executable, os.path.join(HERE, "worker.py"), "--system", system, "--label", label,
           "--data", data_dir, "--n", str(n), "--queries", str(args.queries),
           "--warmup", str(args.warmup), "--batch", str(args.batch), "--k", str(args.k),
           "--out", out]
    if args.extension:
        cmd += ["--extension", args.extension]
    cmd += list(extra_args)
    if not args.memory:
        cmd += ["--db-dir", os.path.join(DATA, "db")]
    log(f"--- {label}, N = {n:,}")
    t0 = time.perf_counter()
    result = {"system": system, "label": label, "n": n}
    result.update(common.run_json_process(cmd, out, env, args.timeout, "worker"))
    result["wall_s"] = time.perf_counter() - t0
    if result["status"] != "ok":
        log(f"{label} N={n}: {result['status']}: {result.get('error')}")
    return result


def score(result: dict, X: np.ndarray, Q: np.ndarray, gt_dists: np.ndarray, args) -> None:
    """Recall@k of single and batch answers, and the largest error of reported distances."""
    k = args.k
    if result.get("single_ids"):
        off = args.warmup
        qs = Q[off : off + len(result["single_ids"])]
        result["recall"], result["recall_misses"] = datasets.recall_at_k(
            X, qs, gt_dists[off:], result["single_ids"], k)
    if result.get("batch_ids"):
        qs = Q[: len(result["batch_ids"])]
        result["batch_recall"], result["batch_recall_misses"] = datasets.recall_at_k(
            X, qs, gt_dists, result["batch_ids"], k)
    if result.get("single_dists"):
        off = args.warmup
        worst = 0.0
        for qi, (ids, ds) in enumerate(zip(result["single_ids"], result["single_dists"])):
            if ids and None not in ds:
                exact = datasets.exact_distances(X, Q[off + qi], ids)
                worst = max(worst, float(np.max(np.abs(exact - np.asarray(ds)))))
        result["max_distance_error"] = worst
    for key in ("single_ids", "batch_ids", "single_dists"):
        result.pop(key, None)


def measure(n: int, plan, wanted, data_dir: str, dataset: str, args) -> list[dict]:
    """Run each (system, label, env, reason) of plan at N = n on one data set; score recall."""
    X = np.ascontiguousarray(np.load(os.path.join(data_dir, "vectors.npy"), mmap_mode="r")[:n])
    Q = np.load(os.path.join(data_dir, "queries.npy"))
    t0 = time.perf_counter()
    _, gt_dists = datasets.exact_topk(X, Q, args.k)
    log(f"exact top-{args.k} for N = {n:,} ({dataset} data) in {time.perf_counter() - t0:.1f} s")
    results = []
    for system, label, env, reason in plan:
        if wanted is not None and system not in wanted:
            continue
        if reason:
            r = {"system": system, "label": label, "n": n, "status": "unavailable", "error": reason}
            log(f"{label} N={n}: unavailable: {reason}")
        else:
            r = run_worker(system, label, n, args, data_dir, env)
            score(r, X, Q, gt_dists, args)
        r["dataset"] = dataset
        results.append(r)
    return results


def main() -> int:
    p = argparse.ArgumentParser(
        description="Benchmark VecSync's vector search beside sqlite-vec, libSQL, numpy and faiss.",
        epilog="Output: RESULTS.md, latency.png, results.json (see --out-dir).")
    p.add_argument("--extension", default=common.EXTENSION,
                   help="our loadable extension (default: .build/libvecsync.so)")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: N = 10,000 only, 50 queries; output to bench/data/quick/")
    p.add_argument("--sizes", help="comma-separated N values (default 10000,100000)")
    p.add_argument("--queries", type=int, help="timed single queries per system (default 200)")
    p.add_argument("--warmup", type=int, default=10, help="untimed queries first (default 10)")
    p.add_argument("--batch", type=int, default=100, help="queries per batch (default 100)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--blas", default="reference,openblas",
                   help="BLAS variants for our rows: reference, openblas, system (default reference,openblas)")
    p.add_argument("--systems",
                   help="comma-separated subset of: numpy, faiss, sqlite-vec, vecsync-vec0, "
                        "vecsync-topk, libsql (default all)")
    p.add_argument("--no-libsql", action="store_true", help="skip libSQL (minutes of index build)")
    p.add_argument("--no-isotropic", action="store_true",
                   help="skip the second libSQL run on isotropic clusters (recall on hard data)")
    p.add_argument("--libsql-100k", action="store_true",
                   help="also run libSQL at N > 10,000 (its DiskANN build takes very long)")
    p.add_argument("--memory", action="store_true",
                   help="in-memory databases instead of files (default: files under bench/data/db)")
    p.add_argument("--timeout", type=float, help="seconds allowed per system and N")
    p.add_argument("--out-dir", help="where to write RESULTS.md, latency.png, results.json")
    p.add_argument("--threads", default="1,2",
                   help="thread counts compared at the largest N (default 1,2; 1: skip)")
    args = p.parse_args()
    # On SIGTERM, unwind like Ctrl-C, so that subprocess.run kills the running worker.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    sizes = [int(s) for s in (args.sizes or ("10000" if args.quick else "10000,100000")).split(",")]
    args.queries = args.queries or (50 if args.quick else 200)
    out_dir = args.out_dir or (os.path.join(DATA, "quick") if args.quick else HERE)
    args.extension = os.path.abspath(args.extension) if args.extension else None
    wanted = set(args.systems.split(",")) if args.systems else None
    if args.no_libsql:
        wanted = (wanted or {s for s, _ in PEERS + OURS + [LIBSQL]}) - {"libsql"}
    os.makedirs(DATA, exist_ok=True)
    db_dir = os.path.join(DATA, "db")
    shutil.rmtree(db_dir, ignore_errors=True)  # leftovers of an interrupted run
    started = time.perf_counter()

    info = machine.describe(REPO)
    log(f"machine: {info['cpu']}, {info['logical_cores']} cores, {info['memory_gib']:.0f} GiB, {info['os']}")
    variants = blas_variants([v for v in args.blas.split(",") if v])
    n_queries = max(args.warmup + args.queries, args.batch)
    data_dir = prepare_data(max(sizes), n_queries, args.seed)
    # Memory bandwidth, measured at the start and again at the end; the better figure is
    # the reference (other work on the machine can only lower it).
    membw = [run_worker("membw", "memory bandwidth", 1, args, data_dir)]

    results = []
    for n in sizes:
        plan = [(s, label, None, None) for s, label in PEERS]
        for s, label in OURS:
            for v in variants:
                plan.append((s, f"{label} ({v['label']})", v.get("env"), v.get("reason")))
        if n <= 10_000 or args.libsql_100k:
            plan.append((*LIBSQL, None, None))
        results += measure(n, plan, wanted, data_dir, "lowrank", args)
        if n > 10_000 and not args.libsql_100k and (wanted is None or "libsql" in wanted):
            results.append({"system": "libsql", "label": LIBSQL[1], "n": n, "status": "skipped",
                            "error": "not run at this N by default (build takes hours); pass --libsql-100k"})

    # An approximate index's recall depends on the data: repeat libSQL (and our exact
    # vector_top_k beside it) on isotropic clusters, where neighbours are hard to tell apart.
    iso = not args.no_isotropic and not args.quick and (wanted is None or "libsql" in wanted)
    if iso:
        n = min(sizes)
        ready = [v for v in variants if "env" in v][:1]
        plan = [(*LIBSQL, None, None)]
        plan += [("vecsync-topk", f"{OURS[1][1]} ({v['label']})", v["env"], None) for v in ready]
        iso_dir = prepare_data(n, n_queries, args.seed, kind="isotropic")
        results += measure(n, plan, None, iso_dir, "isotropic", args)

    # One and two threads: our scans and faiss, the same queries at each count.
    threads = []
    counts = common.parse_threads(args.threads)
    if len(counts) > 1:
        n = max(sizes)
        plan = [(s, label, None, None) for s, label in THREADED
                if wanted is None or s in wanted or s.split("-")[0] in wanted]
        for system, label, _env, _reason in plan:
            r = run_worker(system, label, n, args, data_dir, None,
                           ["--threads", args.threads, "--batch", "0"])
            threads.append({k: r.get(k) for k in ("system", "label", "n", "status", "error", "extra")})

    membw.append(run_worker("membw", "memory bandwidth", 1, args, data_dir))
    shutil.rmtree(db_dir, ignore_errors=True)
    info["load_at_end"] = machine.load_average()
    bandwidth = max((m.get("extra") or {} for m in membw), key=lambda e: e.get("read_gbps", 0))
    bandwidth = dict(bandwidth, runs=[m.get("extra") for m in membw])
    run = common.stamp({
        "machine": info,
        "memory_bandwidth": bandwidth,
        "settings": {"sizes": sizes, "dim": datasets.DIM, "clusters": datasets.CLUSTERS,
                     "rank": datasets.RANK, "noise": datasets.NOISE, "k": args.k,
                     "queries": args.queries, "warmup": args.warmup,
                     "batch": args.batch, "seed": args.seed, "metric": "cosine",
                     "threads": counts,
                     "storage": "in-memory databases" if args.memory else "database files",
                     "extension": rel(args.extension) if args.extension else None,
                     "quick": args.quick},
        "results": results,
        "threads": threads,
    }, started)
    return common.publish(run, out_dir, "results", report, chart="latency.png", markdown="RESULTS.md")


if __name__ == "__main__":
    sys.exit(main())
