"""Measure one system on one data set, in a process of its own.

run.py starts this script once per (system, N, BLAS variant), so that each system gets
a fresh process: its own BLAS library (LD_LIBRARY_PATH), one thread, no memory or SQLite
state left over from the previous system, and no two SQLite builds in one process.

    python bench/worker.py --system sqlite-vec --data bench/data/run --n 10000 \
        --queries 200 --batch 100 --k 10 --db-dir bench/data/db --out result.json

The result is a JSON object (see ``systems.Result``) written to --out. A feature that
the system lacks (or that fails) is recorded in the result, not raised.
"""

import os

# One thread everywhere, set before numpy (or any BLAS) is loaded.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402

import systems  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--system", required=True, choices=sorted(systems.SYSTEMS))
    p.add_argument("--data", required=True, help="directory holding vectors.npy and queries.npy")
    p.add_argument("--n", type=int, required=True, help="use the first N stored vectors")
    p.add_argument("--queries", type=int, default=200, help="timed single queries")
    p.add_argument("--warmup", type=int, default=10, help="untimed queries first")
    p.add_argument("--batch", type=int, default=100, help="queries in one batch (0: no batch)")
    p.add_argument("--pragma", action="append", default=[],
                   help="name=value: a PRAGMA run on each SQLite connection it opens (repeatable)")
    p.add_argument("--oversample", type=int,
                   help="quantized systems: re-score k x this many candidates (default: theirs)")
    p.add_argument("--threads", default="1",
                   help="thread counts to time the single queries at again, e.g. 1,2 (systems "
                        "that can scan on several threads: ours, faiss)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--extension", help="path of libvecsync.so (vecsync systems)")
    p.add_argument("--db-dir", help="directory for database files; in memory if omitted")
    p.add_argument("--label", help="name shown in the report")
    p.add_argument("--out", required=True)
    args = p.parse_args()

    X = np.ascontiguousarray(np.load(os.path.join(args.data, "vectors.npy"), mmap_mode="r")[: args.n])
    Q = np.ascontiguousarray(np.load(os.path.join(args.data, "queries.npy"), mmap_mode="r"))
    need = args.warmup + args.queries
    if len(Q) < max(need, args.batch):
        p.error(f"queries.npy holds {len(Q)} queries; {max(need, args.batch)} needed")

    cfg = systems.Config(
        k=args.k,
        warmup=Q[: args.warmup],
        queries=Q[args.warmup : need],
        batch=Q[: args.batch],
        extension=args.extension,
        db_dir=args.db_dir,
        tag=f"{args.system}-{args.n}-{os.getpid()}",
        oversample=args.oversample,
        pragmas=tuple(args.pragma),
        threads=tuple(int(t) for t in args.threads.split(",") if t),
    )
    result = systems.Result(system=args.system, label=args.label or args.system, n=args.n)
    result.extra["rss_before_mib"] = systems.rss_mib()
    try:
        systems.SYSTEMS[args.system](X, cfg, result)
    except systems.Unavailable as e:
        result.status = "unavailable"
        result.error = str(e)
    except Exception as e:  # a crash of the system under test is a result too
        result.status = "failed"
        result.error = f"{type(e).__name__}: {e}"
        traceback.print_exc(file=sys.stderr)
    # Databases record their libraries before closing; add whatever is mapped now.
    result.libraries += [x for x in systems.loaded_libraries() if x not in result.libraries]
    with open(args.out, "w") as f:
        json.dump(result.__dict__, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
