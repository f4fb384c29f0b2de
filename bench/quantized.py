"""Quantized scans with exact re-scoring, beside their peers: latency, recall, memory.

Run by ``make bench`` after run.py:

    bench/.venv/bin/python bench/quantized.py --extension .build/libvecsync.so
    bench/.venv/bin/python bench/quantized.py --quick      # smoke test, under 2 minutes

Two data sets, every system in the same run on the same data, cosine distance, k = 10,
one thread, each system in a fresh process (bench/worker.py):

- the synthetic clusters of run.py (datasets.py), 100,000 x 768 (``--quick``: 5,000);
- real sentence embeddings (embeddings.py): all-MiniLM-L6-v2, 384 dimensions, of the
  sentences of Python's own documentation (``--quick``: 2,000 of them), queries held out.

Systems: our vec0 in float32 and with ``indexed by rescore(quantizer=int8|bit)`` at the
default oversample (8) and at any others given with ``--oversample``; faiss
``IndexFlatIP`` and ``IndexScalarQuantizer`` (8-bit); sqlite-vec 0.1.9 in float32 and
with its binary quantization re-ranked as its documentation shows; SQLite AI's
sqlite-vector (pip ``sqliteai-vector``): ``vector_quantize_scan`` after
``vector_quantize`` + ``vector_quantize_preload``, and its exact ``vector_full_scan``.

Per system: build (inserts, quantization, index training), first query, median and p99
of single-query latency after 10 warm-up queries, recall@10 against exact float64 search,
resident memory before the build and after the queries. Writes QUANTIZED.md,
quantized.png and quantized.json to bench/ (``--quick``: bench/data/quick/).
"""

import argparse
import os
import shutil
import signal
import sys
import time

import numpy as np

import common
import datasets
import embeddings
import machine
import run as harness

HERE = harness.HERE
REPO = harness.REPO
DATA = harness.DATA
log = harness.log
rel = harness.rel

DEFAULT_OVERSAMPLE = 8  # sqlite-vec's bit re-rank, and our int8
# The extension's defaults when a declaration gives no oversample.
OUR_DEFAULT_OVERSAMPLE = {"vecsync-int8": 8, "vecsync-bit": 16}
FULL_REAL_N, FULL_QUERIES = 40_000, 210  # the real set of a full run

# (system, label, needs our extension, takes --oversample)
SYSTEMS = [
    ("vecsync-vec0", "vecsync vec0 float32", True, False),
    ("vecsync-int8", "vecsync vec0 int8 rescore", True, True),
    ("vecsync-bit", "vecsync vec0 bit rescore", True, True),
    ("faiss", "faiss IndexFlatIP", False, False),
    ("faiss-sq8", "faiss IndexScalarQuantizer 8-bit", False, False),
    ("sqlite-vec", "sqlite-vec vec0 float32", False, False),
    ("sqlite-vec-bit", "sqlite-vec bit[] + re-rank", False, True),
    ("sqliteai-vector", "sqlite-vector quantize_scan", False, False),
    ("sqliteai-vector-full", "sqlite-vector full_scan", False, False),
]


def plan(args, ours_env) -> list[tuple]:
    """(system, label, env, extra worker args, oversample, pragma) in the order they run."""
    out = []
    for system, label, ours, takes in SYSTEMS:
        if args.systems and system not in args.systems:
            continue
        env = ours_env if ours else None
        if not takes:
            out.append((system, label, env, [], None, None))
            continue
        default = OUR_DEFAULT_OVERSAMPLE.get(system, DEFAULT_OVERSAMPLE)
        for o in [default] + [x for x in args.oversample if x != default]:
            if o != default and not system.startswith("vecsync"):
                continue
            out.append((system, f"{label} (oversample {o})", env,
                        [] if o == default else ["--oversample", str(o)], o, None))
        # Our quantized tables again with a PRAGMA on the connection (e.g. mmap_size): the
        # re-scoring reads float32 vectors back from the file, which page-cache settings govern.
        if system.startswith("vecsync"):
            for pragma in args.pragma_rows:
                out.append((system, f"{label} (oversample {default}, PRAGMA {pragma})",
                            env, ["--pragma", pragma], default, pragma))
    return out


def measure(n: int, data_dir: str, dataset: str, steps, args) -> list[dict]:
    X = np.ascontiguousarray(np.load(os.path.join(data_dir, "vectors.npy"), mmap_mode="r")[:n])
    Q = np.load(os.path.join(data_dir, "queries.npy"))
    t0 = time.perf_counter()
    _, gt = datasets.exact_topk(X, Q, args.k)
    log(f"exact top-{args.k} for {dataset}, N = {n:,} x {X.shape[1]}, "
        f"in {time.perf_counter() - t0:.1f} s")
    results = []
    for system, label, env, extra, oversample, pragma in steps:
        r = harness.run_worker(system, label, n, args, data_dir, env, extra)
        harness.score(r, X, Q, gt, args)
        r.update(dataset=dataset, dim=int(X.shape[1]), oversample=oversample, pragma=pragma)
        if r.get("status") == "ok":
            log(f"{label}: recall@{args.k} {r.get('recall', 0):.4f}")
        results.append(r)
    return results


def main() -> int:
    p = argparse.ArgumentParser(description="Quantized scans beside their peers: latency and recall.")
    p.add_argument("--extension", default=common.EXTENSION)
    p.add_argument("--quick", action="store_true",
                   help="smoke test: 5,000 synthetic and 2,000 real vectors, 20 queries; "
                        "output to bench/data/quick/")
    p.add_argument("--n", type=int, help="synthetic vectors (default 100,000)")
    p.add_argument("--real-n", type=int, help="real embeddings, at most (default 40,000: all there are)")
    p.add_argument("--queries", type=int, help="timed single queries (default 200)")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--seed", type=int, default=42)
    common.add_our_table_options(p, SYSTEMS)
    p.add_argument("--datasets", default="synthetic,real", help="synthetic, real or both")
    p.add_argument("--timeout", type=float, default=900, help="seconds allowed per system")
    p.add_argument("--out-dir")
    args = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    args.queries = args.queries or (20 if args.quick else 200)
    args.n = args.n or (5_000 if args.quick else 100_000)
    args.real_n = args.real_n or (2_000 if args.quick else FULL_REAL_N)
    args.oversample = [int(x) for x in args.oversample.split(",") if x]
    args.pragma_rows = [x.strip() for x in args.pragma_rows.split(";") if x.strip()]
    args.systems = set(args.systems.split(",")) if args.systems else None
    args.batch = 0  # single queries only
    args.memory = False
    args.extension = os.path.abspath(args.extension) if args.extension else None
    out_dir = args.out_dir or (os.path.join(DATA, "quick") if args.quick else HERE)
    wanted_sets = [d for d in args.datasets.split(",") if d]
    os.makedirs(DATA, exist_ok=True)
    shutil.rmtree(os.path.join(DATA, "db"), ignore_errors=True)
    started = time.perf_counter()

    info = machine.describe(REPO)
    log(f"machine: {info['cpu']}, {info['logical_cores']} cores, {info['memory_gib']:.0f} GiB, "
        f"{info['os']}, load average {info['load_at_start']}")
    # Our rows with OpenBLAS when Debian's package is there, as in run.py's last rows (a
    # single query scans with our own kernels; BLAS serves batches).
    variant = next((v for v in harness.blas_variants(["openblas", "system"]) if "env" in v))
    n_queries = args.warmup + args.queries
    steps = plan(args, variant["env"])

    results, sets = [], {}
    if "synthetic" in wanted_sets:
        d = harness.prepare_data(args.n, max(n_queries, 100), args.seed)
        sets["synthetic"] = {"n": args.n, "dim": datasets.DIM, "seed": args.seed}
        results += measure(args.n, d, "synthetic", steps, args)
    if "real" in wanted_sets:
        # A smoke test takes a prefix of the full set when that was embedded before.
        d = (args.quick and embeddings.cached(DATA, FULL_REAL_N, FULL_QUERIES, args.seed)
             or embeddings.prepare(DATA, args.real_n, n_queries, args.seed))
        meta = embeddings.meta(d)
        n = min(meta["n"], args.real_n)
        sets["real"] = dict(meta, n=n)
        results += measure(n, d, "real", steps, args)

    shutil.rmtree(os.path.join(DATA, "db"), ignore_errors=True)
    info["load_at_end"] = machine.load_average()
    run = common.stamp({
        "machine": info,
        "blas": variant["label"],
        "datasets": sets,
        "settings": {"k": args.k, "queries": args.queries, "warmup": args.warmup,
                     "seed": args.seed, "metric": "cosine", "default_oversample": DEFAULT_OVERSAMPLE,
                     "extension": rel(args.extension) if args.extension else None,
                     "quick": args.quick},
        "results": results,
    }, started)
    import quantized_report

    return common.publish(run, out_dir, "quantized", quantized_report, chart="quantized.png",
                          markdown="QUANTIZED.md")


if __name__ == "__main__":
    sys.exit(main())
