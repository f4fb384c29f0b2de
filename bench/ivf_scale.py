"""Our ivf index at a scale the side-by-side run (bench/ivf.py) cannot hold in memory.

bench/ivf.py gives every system the whole data set in memory, twice (as stored and as unit
vectors): at 10,000,000 x 384 that is 31 GB. This script measures only our index, with the
data read from a memory-mapped file, and the steps a user of a large table goes through:

1. data: the clustered set (bench/datasets.py's stream, so its first rows are the smaller
   sets' rows), written a chunk at a time into a memory-mapped .npy;
2. exact answers for the queries, float64, a block of rows at a time (cached beside it);
3. build, in a child process: inserts in 1,000-row transactions into a new file under
   vecsync_memory_budget(1) (no in-memory copy of the vectors: at 10M x 384 it would be
   15 GB; a retrain under a budget keeps none of the lists), then vecsync_ivf_retrain; its
   times, the file's size, its peak allocated memory (RssAnon: VmRSS would count the data
   file's mapped pages too);
4. queries, in a new child process (a process that opens the file, as an app would), under
   vecsync_memory_budget(--budget): the copy (4·D + 13 bytes a row) is over it and keeps
   rowids and liveness only, and the lists it reads are held to it (past it the least
   recently scanned are given back and read again when needed). The default, 3.5 GB,
   keeps the process under 4 GB at 10M x 384, where every list's codes take 3.9 GB. The
   time to its first answer, one pass over the queries at the largest nprobe (the lists
   are read as queries first scan them), then recall@10 and latency at each nprobe, and
   its memory after them (RssAnon and VmRSS);
5. the first answer again, three new processes with the file in the page cache, then three
   after dropping the page cache (a process after a reboot: needs permission to write
   /proc/sys/vm/drop_caches, else it says so).

    bench/.venv/bin/python bench/ivf_scale.py --rows 10000000 --dim 384 \\
        --json bench/ivf-10m.json
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import datasets  # noqa: E402
from common import log  # noqa: E402

K = 10
BATCH = 1000
WARMUP = 5


def status_mib(field: str) -> float | None:
    """A field of /proc/self/status (VmRSS, VmHWM), MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return None


class AnonPeak:
    """The largest RssAnon seen, sampled every 0.2 s on a thread: the memory the process
    allocated. VmRSS and VmHWM also count the pages of the memory-mapped data file that were
    read (15 GB at 10,000,000 x 384), which are the page cache's, not the process's."""

    def __init__(self):
        import threading

        self.peak = status_mib("RssAnon") or 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, status_mib("RssAnon") or 0.0)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return max(self.peak, status_mib("RssAnon") or 0.0)


def data_dir(args) -> str:
    return os.path.join(common.DATA, f"lowrank-d{args.dim}-seed{args.seed}-n{args.rows}"
                                     f"-q{args.queries}")


def make_data(args) -> str:
    """The data set, made once: vectors.npy written through a memory map."""
    d = data_dir(args)
    meta = {"kind": "lowrank", "n": args.rows, "queries": args.queries, "seed": args.seed,
            "dim": args.dim, "clusters": datasets.CLUSTERS, "rank": datasets.RANK,
            "noise": datasets.NOISE, "chunk": datasets.CHUNK, "format": 2}
    meta_path = os.path.join(d, "meta.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            if json.load(f) == meta:
                log(f"reusing data in {common.rel(d)}")
                return d
    os.makedirs(d, exist_ok=True)
    t0 = time.perf_counter()
    X, Q = datasets.generate(args.rows, args.queries, args.seed, dim=args.dim,
                             out=os.path.join(d, "vectors.npy"))
    X.flush()
    del X
    np.save(os.path.join(d, "queries.npy"), Q)
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    log(f"generated {args.rows:,} x {args.dim} in {time.perf_counter() - t0:.1f} s")
    return d


def exact_answers(d: str, args) -> str:
    path = os.path.join(d, f"exact-k{K}.npy")
    if not os.path.exists(path):
        X = np.load(os.path.join(d, "vectors.npy"), mmap_mode="r")
        Q = np.load(os.path.join(d, "queries.npy"))
        t0 = time.perf_counter()
        _, gt = datasets.exact_topk(X, Q, K)
        np.save(path, gt)
        log(f"exact answers in {time.perf_counter() - t0:.1f} s")
    return path


def open_db(path: str, extension: str, budget: int):
    import apsw

    conn = apsw.Connection(path)
    conn.enable_load_extension(True)
    conn.load_extension(extension)
    conn.execute("pragma journal_mode = wal")
    conn.execute("pragma synchronous = normal")
    conn.execute(f"select vecsync_memory_budget({budget})")
    return conn


def child_build(plan: dict) -> dict:
    X = np.load(os.path.join(plan["data"], "vectors.npy"), mmap_mode="r")
    conn = open_db(plan["db"], plan["extension"], 1)
    conn.execute(f"create virtual table v using vec0(e float[{X.shape[1]}] "
                 f"distance_metric=cosine indexed by ivf({plan['ivf_options']}))")
    out = {"rss_before_mib": status_mib("VmRSS"), "anon_before_mib": status_mib("RssAnon")}
    anon = AnonPeak()
    t0 = time.perf_counter()
    for start in range(0, len(X), BATCH):
        stop = min(start + BATCH, len(X))
        conn.execute("begin")
        conn.executemany("insert into v(rowid, e) values (?, ?)",
                         [(i + 1, X[i].tobytes()) for i in range(start, stop)])
        conn.execute("commit")
        if stop % 1_000_000 == 0:
            log(f"build: {stop:,} rows inserted, {time.perf_counter() - t0:.0f} s")
    out["insert_s"] = time.perf_counter() - t0
    out["anon_after_inserts_mib"] = status_mib("RssAnon")
    t0 = time.perf_counter()
    out["nlist"] = conn.execute("select vecsync_ivf_retrain('v')").fetchone()[0]
    out["retrain_s"] = time.perf_counter() - t0
    out["anon_peak_mib"] = anon.stop()
    out["info"] = json.loads(conn.execute("select vecsync_index_info('v')").fetchone()[0])
    conn.close()
    out["disk_bytes"] = sum(os.path.getsize(plan["db"] + s) for s in ("", "-wal")
                            if os.path.exists(plan["db"] + s))
    return out


def child_query(plan: dict) -> dict:
    Q = np.load(os.path.join(plan["data"], "queries.npy"))
    X = np.load(os.path.join(plan["data"], "vectors.npy"), mmap_mode="r")
    gt = np.load(plan["gt"])
    out = {"rss_before_mib": status_mib("VmRSS"), "anon_before_mib": status_mib("RssAnon")}
    anon = AnonPeak()
    sql = f"select rowid from v where e match ? and k = {K} and nprobe = ?"
    conn, out["first_answer_s"], out["first_answer_rows"] = first_answer(plan, Q)
    # One pass over the queries at the largest nprobe: the lists are read from the file as
    # the queries first scan them, so this is the cost of a process's first queries.
    lat = []
    for q in Q:
        t = time.perf_counter()
        conn.execute(sql, (q.tobytes(), plan["nprobe"][-1])).fetchall()
        lat.append((time.perf_counter() - t) * 1000)
    out["first_pass"] = {"nprobe": plan["nprobe"][-1], "mean_ms": statistics.fmean(lat),
                         "p50_ms": statistics.median(lat), "max_ms": max(lat)}
    out["anon_after_first_pass_mib"] = status_mib("RssAnon")
    rows = []
    for nprobe in plan["nprobe"]:
        for i in range(min(WARMUP, len(Q))):
            conn.execute(sql, (Q[i].tobytes(), nprobe)).fetchall()
        lat, got = [], []
        for q in Q:
            t = time.perf_counter()
            r = conn.execute(sql, (q.tobytes(), nprobe)).fetchall()
            lat.append((time.perf_counter() - t) * 1000)
            got.append([x[0] - 1 for x in r])
        recall, _ = datasets.recall_at_k(X, Q, gt, got, K)
        rows.append({"nprobe": nprobe, "recall": recall, "mean_ms": statistics.fmean(lat),
                     "p50_ms": statistics.median(lat)})
        log(f"nprobe {nprobe}: recall {recall:.3f}, p50 {rows[-1]['p50_ms']:.2f} ms")
    out["rows"] = rows
    out["info"] = json.loads(conn.execute("select vecsync_index_info('v')").fetchone()[0])
    out["rss_after_mib"] = status_mib("VmRSS")
    out["anon_after_mib"] = status_mib("RssAnon")
    out["anon_peak_mib"] = anon.stop()
    conn.close()
    return out


def first_answer(plan: dict, Q):
    """Open the file and answer the first query: the connection, seconds, rows."""
    t0 = time.perf_counter()
    conn = open_db(plan["db"], plan["extension"], plan["budget"])
    rows = conn.execute(f"select rowid from v where e match ? and k = {K} and nprobe = ?",
                        (Q[0].tobytes(), plan["nprobe"][0])).fetchall()
    return conn, time.perf_counter() - t0, len(rows)


def child_first(plan: dict) -> dict:
    """A new process's first answer, nothing else."""
    conn, seconds, _ = first_answer(plan, np.load(os.path.join(plan["data"], "queries.npy")))
    conn.close()
    return {"first_answer_s": seconds}


def drop_page_cache() -> bool:
    """Write the file's pages out and drop them from the page cache, if permitted."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def first_answers(plan: dict) -> dict:
    warm = [run_child("first", plan)["first_answer_s"] for _ in range(3)]
    cold = []
    for _ in range(3):
        if not drop_page_cache():
            return {"warm_s": warm, "cold_s": "not measured: the page cache cannot be dropped"}
        cold.append(run_child("first", plan)["first_answer_s"])
    return {"warm_s": warm, "cold_s": cold}


def run_child(step: str, plan: dict) -> dict:
    path = plan["db"] + f".{step}.json"
    with open(path + ".plan", "w") as f:
        json.dump(plan, f)
    subprocess.run([sys.executable, os.path.abspath(__file__), "--child", step, path],
                   check=True)
    with open(path) as f:
        return json.load(f)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--nprobe", default="4,8,12,16,24,32,48")
    p.add_argument("--ivf-options", default="")
    p.add_argument("--budget", type=int, default=3_500_000_000,
                   help="vecsync_memory_budget of the querying processes, bytes")
    p.add_argument("--extension", default=common.EXTENSION)
    p.add_argument("--json", default=os.path.join(common.DATA, "ivf-scale.json"))
    p.add_argument("--keep", action="store_true", help="keep the database file")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        step, path = args.child
        with open(path + ".plan") as f:
            plan = json.load(f)
        out = {"build": child_build, "query": child_query, "first": child_first}[step](plan)
        with open(path, "w") as f:
            json.dump(out, f)
        return 0

    started = {"date": time.strftime("%Y-%m-%d %H:%M"), "uptime": common_uptime()}
    d = make_data(args)
    gt = exact_answers(d, args)
    db_dir = os.path.join(common.DATA, "ivf-db", f"scale-{os.getpid()}")
    os.makedirs(db_dir, exist_ok=True)
    plan = {"data": d, "gt": gt, "db": os.path.join(db_dir, "v.db"),
            "extension": os.path.abspath(args.extension), "ivf_options": args.ivf_options,
            "nprobe": [int(x) for x in args.nprobe.split(",")], "budget": args.budget}
    build = run_child("build", plan)
    log(f"build: inserts {build['insert_s']:.1f} s, retrain {build['retrain_s']:.1f} s, "
        f"peak {build['anon_peak_mib']:,.0f} MiB allocated, "
        f"{build['disk_bytes'] / 2**20:,.0f} MiB on disk")
    query = run_child("query", plan)
    log(f"first answer of a new process {query['first_answer_s']:.2f} s; allocated after the "
        f"sweep {query['anon_after_mib']:,.0f} MiB (peak {query['anon_peak_mib']:,.0f})")
    first = first_answers(plan)
    def seconds(v):
        return v if isinstance(v, str) else ", ".join(f"{x:.2f}" for x in v) + " s"

    log(f"first answer of a new process: file in the page cache {seconds(first['warm_s'])}; "
        f"after dropping it {seconds(first['cold_s'])}")
    if not args.keep:
        import shutil

        shutil.rmtree(db_dir, ignore_errors=True)
    result = {"data": {"kind": "lowrank", "n": args.rows, "dim": args.dim,
                       "queries": args.queries, "seed": args.seed, "k": K},
              "argv": sys.argv[1:], "budget": args.budget, "started": started,
              "ended": {"date": time.strftime("%Y-%m-%d %H:%M"), "uptime": common_uptime()},
              "build": build, "query": query, "first_answer": first}
    import machine

    result["machine"] = machine.describe(common.REPO)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    log(f"wrote {common.rel(args.json)}")
    return 0


def common_uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"load average {os.getloadavg()}"


if __name__ == "__main__":
    sys.exit(main())
