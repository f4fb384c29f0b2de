"""vec0 while the app writes: one writer and several searching connections on one WAL file.

Run by ``make bench`` (after bench/setup.sh):

    bench/.venv/bin/python bench/concurrent.py --extension .build/release/libvecsync.so

Our vec0 and sqlite-vec's, the same SQL, the same seeded data (bench/datasets.py: 768-d
clusters, cosine, k = 10), each system in the same run:

- static: one connection searching a table nobody writes (median of 100 queries);
- after a write: another connection commits one row, then the searcher queries; median
  of 50 such rounds (the bar: at most 1.5x static);
- mixed: a writer inserting 10 rows/s while 1, 2 and 4 connections search continuously
  for --seconds each, latency percentiles over all their queries;
- memory: a new process opens 1 and 5 connections and searches once on each; resident
  memory it gained, per number of connections (the bar: 5 connections at most 1.25x one).

Writes bench/CONCURRENT.md and bench/concurrent.json (``--quick``: 10,000 rows, shorter,
into bench/data/quick/).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import datasets
import machine

HERE = os.path.dirname(os.path.abspath(__file__))
K = 10
CREATE = "create virtual table v using vec0(id integer primary key, embedding float[{dim}] distance_metric=cosine)"
INSERT = "insert into v(id, embedding) values (?, ?)"
QUERY = f"select id from v where embedding match ? and k = {K} order by distance"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def extension_for(system, ext):
    if system == "vecsync":
        return ext
    import sqlite_vec
    return sqlite_vec.loadable_path()


def connect(path, extension):
    import apsw
    conn = apsw.Connection(path)
    conn.enable_load_extension(True)
    conn.load_extension(extension)
    conn.execute("pragma busy_timeout = 10000")
    return conn


def build(path, extension, X):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    conn = connect(path, extension)
    conn.execute("pragma journal_mode = wal")
    conn.execute(CREATE.format(dim=X.shape[1]))
    conn.execute("begin")
    conn.executemany(INSERT, ((i + 1, X[i].tobytes()) for i in range(len(X))))
    conn.execute("commit")
    conn.close()


def ms(t0):
    return (time.perf_counter() - t0) * 1000.0


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))]


def measure_static(path, extension, Q, n):
    conn = connect(path, extension)
    for q in Q[:5]:
        conn.execute(QUERY, (q.tobytes(),)).fetchall()
    lat = []
    for q in Q[:n]:
        t0 = time.perf_counter()
        conn.execute(QUERY, (q.tobytes(),)).fetchall()
        lat.append(ms(t0))
    conn.close()
    return statistics.median(lat)


def measure_after_write(path, extension, Q, W, rounds):
    reader, writer = connect(path, extension), connect(path, extension)
    reader.execute(QUERY, (Q[0].tobytes(),)).fetchall()
    lat = []
    for i in range(rounds):
        writer.execute(INSERT, (10_000_000 + i, W[i % len(W)].tobytes()))
        t0 = time.perf_counter()
        reader.execute(QUERY, (Q[i % len(Q)].tobytes(),)).fetchall()
        lat.append(ms(t0))
    reader.close()
    writer.close()
    return statistics.median(lat)


def measure_mixed(path, extension, Q, W, readers, seconds, id_base):
    stop = threading.Event()
    lat, errors = [], []
    lock = threading.Lock()

    def writer_loop():
        conn = connect(path, extension)
        i = 0
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                conn.execute(INSERT, (id_base + i, W[i % len(W)].tobytes()))
            except Exception as e:  # busy: counted, the run goes on
                errors.append(str(e))
            i += 1
            time.sleep(max(0.0, 0.1 - (time.perf_counter() - t0)))
        conn.close()

    def reader_loop(seed):
        conn = connect(path, extension)
        conn.execute(QUERY, (Q[seed].tobytes(),)).fetchall()
        mine, j = [], seed
        while not stop.is_set():
            t0 = time.perf_counter()
            conn.execute(QUERY, (Q[j % len(Q)].tobytes(),)).fetchall()
            mine.append(ms(t0))
            j += 7
        conn.close()
        with lock:
            lat.extend(mine)

    threads = [threading.Thread(target=writer_loop)]
    threads += [threading.Thread(target=reader_loop, args=(r,)) for r in range(readers)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    return {"queries": len(lat), "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95),
            "p99_ms": pct(lat, 99), "write_errors": len(errors)}


MEMORY_CHILD = r"""
import apsw, sys, numpy as np
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) * 1024
path, ext, n, dim = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
q = np.ones(dim, dtype=np.float32).tobytes()
conns = []
for i in range(n):
    c = apsw.Connection(path); c.enable_load_extension(True); c.load_extension(ext)
    c.execute('select 1').fetchall()
    conns.append(c)
base = rss()
for c in conns:
    c.execute("select id from v where embedding match ? and k = 10", (q,)).fetchall()
print(rss() - base)
"""


def measure_memory(path, extension, connections, dim):
    out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, path, extension, str(connections), str(dim)],
                         check=True, capture_output=True, text=True)
    return int(out.stdout.strip())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extension", required=True)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--systems", default="vecsync,sqlite-vec")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.seconds = 10_000, 4.0
    out_dir = os.path.join(HERE, "data", "quick") if args.quick else HERE
    os.makedirs(out_dir, exist_ok=True)
    extension = os.path.abspath(args.extension)

    X, Q = datasets.generate(args.rows, 300, seed=1)
    W, _ = datasets.generate(2_000, 1, seed=2)
    results = {"rows": args.rows, "dim": int(X.shape[1]), "k": K, "seconds": args.seconds,
               "machine": {"cpu": machine.cpu_model(), "cores": machine.physical_cores()},
               "systems": {}}
    work = tempfile.mkdtemp(prefix="vecsync-concurrent-")
    for system in args.systems.split(","):
        ext = extension_for(system, extension)
        path = os.path.join(work, f"{system}.db")
        log(f"{system}: building {args.rows:,} rows")
        t0 = time.perf_counter()
        build(path, ext, X)
        r = {"build_s": time.perf_counter() - t0}
        r["static_ms"] = measure_static(path, ext, Q, 100)
        r["after_write_ms"] = measure_after_write(path, ext, Q, W, 50)
        log(f"{system}: static {r['static_ms']:.1f} ms, after a write {r['after_write_ms']:.1f} ms")
        r["mixed"] = {}
        for readers in (1, 2, 4):
            r["mixed"][readers] = measure_mixed(path, ext, Q, W, readers, args.seconds, 20_000_000 + readers * 1_000_000)
            log(f"{system}: {readers} reader(s) + writer at 10 rows/s: {r['mixed'][readers]}")
        r["memory_bytes"] = {c: measure_memory(path, ext, c, int(X.shape[1])) for c in (1, 5)}
        log(f"{system}: memory gained by searching connections: {r['memory_bytes']}")
        results["systems"][system] = r
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
    os.rmdir(work)

    with open(os.path.join(out_dir, "concurrent.json"), "w") as f:
        json.dump(results, f, indent=2)
    with open(os.path.join(out_dir, "CONCURRENT.md"), "w") as f:
        f.write(render(results))
    print(render(results))


def render(res):
    lines = [f"# vec0 while the app writes: {res['rows']:,} x {res['dim']}, cosine, k = {res['k']}", "",
             f"Machine: {res['machine']['cpu']}, {res['machine']['cores']} cores. One WAL file; each "
             "connection its own apsw connection and thread. Produced by bench/concurrent.py.", "",
             "| system | static query | query right after another connection's 1-row write | ratio (bar 1.5x) |",
             "|---|---|---|---|"]
    for name, r in res["systems"].items():
        lines.append(f"| {name} | {r['static_ms']:.1f} ms | {r['after_write_ms']:.1f} ms | "
                     f"{r['after_write_ms'] / r['static_ms']:.2f}x |")
    lines += ["", f"Mixed: one writer inserting 10 rows/s, N connections searching for {res['seconds']:.0f} s.", "",
              "| system | searching connections | queries | p50 | p95 | p99 |", "|---|---|---|---|---|---|"]
    for name, r in res["systems"].items():
        for readers, m in r["mixed"].items():
            lines.append(f"| {name} | {readers} | {m['queries']} | {m['p50_ms']:.1f} ms | {m['p95_ms']:.1f} ms | "
                         f"{m['p99_ms']:.1f} ms |")
    lines += ["", "Memory a process gains when its connections search once each (resident, after opening them).", "",
              "| system | 1 connection | 5 connections | ratio (bar 1.25x) |", "|---|---|---|---|"]
    for name, r in res["systems"].items():
        one, five = r["memory_bytes"][1], r["memory_bytes"][5]
        ratio = f"{five / one:.2f}x" if one > 0 else "n/a"
        lines.append(f"| {name} | {one / 2**20:.1f} MiB | {five / 2**20:.1f} MiB | {ratio} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
