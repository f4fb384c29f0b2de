"""The ivf index of vec0 beside exact vec0 and faiss IVF, on one thread.

Measures, on the clustered set (bench/datasets.py, cosine, k = 10):

- exact vec0: inserts in 1,000-row transactions, query latency;
- vec0 "indexed by ivf()": the same inserts (the index trains itself at 4,096 rows and
  takes every later row into its nearest list), then vecsync_ivf_retrain() (the build
  from an existing table), then latency and recall@10 at each nprobe;
- the same index with a metadata column that 1% of the rows match, queried with that filter;
- faiss IndexIVFFlat and IndexIVFScalarQuantizer (8-bit) with the same number of lists,
  trained and filled from the same vectors, at the same nprobe values.

Recall is counted against the exact float64 answer (datasets.recall_at_k, near ties
included). Every system runs in this process, one thread (OPENBLAS_NUM_THREADS=1,
faiss.omp_set_num_threads(1)).

    python3 bench/ivf.py --extension .build/libvecsync.so          # 100,000 x 768
    python3 bench/ivf.py --rows 20000 --queries 100 --nprobe 1,4   # a quick look

Needs numpy, apsw and faiss-cpu (pip), kept out of the library's dependencies; prints a
Markdown table and writes its figures as JSON (--json).
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import common  # noqa: E402
import datasets  # noqa: E402

K = 10
BATCH = 1000


def connect(extension: str):
    import apsw

    conn = apsw.Connection(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(extension)
    return conn


def load(conn, table: str, X: np.ndarray) -> float:
    """Inserts X (rowid i+1 for row i) in BATCH-row transactions; returns seconds."""
    t0 = time.perf_counter()
    sql = f"insert into {table}(rowid, e) values (?, ?)"
    for start in range(0, len(X), BATCH):
        stop = min(start + BATCH, len(X))
        with conn:
            conn.executemany(sql, ((i + 1, X[i].tobytes()) for i in range(start, stop)))
    return time.perf_counter() - t0


def query(conn, table: str, Q: np.ndarray, extra: str = ""):
    """Runs every query; returns (latencies in ms, answers as 0-based row lists)."""
    sql = f"select rowid from {table} where e match ? and k = {K}{extra}"
    lat, out = [], []
    for q in Q:
        b = q.tobytes()
        t0 = time.perf_counter()
        rows = [r[0] - 1 for r in conn.execute(sql, (b,))]
        lat.append((time.perf_counter() - t0) * 1000)
        out.append(rows)
    return lat, out


def summary(lat):
    return {"mean_ms": statistics.fmean(lat), "p50_ms": statistics.median(lat)}


def run_faiss(X, Q, gt_d, nlist, nprobes, kind):
    import faiss

    faiss.omp_set_num_threads(1)
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    Qn = Q / np.linalg.norm(Q, axis=1, keepdims=True)
    quantizer = faiss.IndexFlatIP(X.shape[1])
    if kind == "flat":
        index = faiss.IndexIVFFlat(quantizer, X.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
    else:
        index = faiss.IndexIVFScalarQuantizer(quantizer, X.shape[1], nlist,
                                              faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
    t0 = time.perf_counter()
    index.train(Xn)
    index.add(Xn)
    build = time.perf_counter() - t0
    rows = []
    for nprobe in nprobes:
        index.nprobe = nprobe
        lat, out = [], []
        for q in Qn:
            t0 = time.perf_counter()
            _, ids = index.search(q[None, :], K)
            lat.append((time.perf_counter() - t0) * 1000)
            out.append([int(i) for i in ids[0]])
        recall, _ = datasets.recall_at_k(X, Q, gt_d, out, K)
        rows.append({"nprobe": nprobe, "recall": recall, **summary(lat)})
    return {"build_s": build, "rows": rows}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--nprobe", default="1,2,4,8,16,32")
    p.add_argument("--extension", default=common.EXTENSION)
    p.add_argument("--json", default=os.path.join(common.DATA, "ivf.json"))
    p.add_argument("--no-faiss", action="store_true")
    p.add_argument("--ivf-options", default="",
                   help="what goes inside ivf(...) in the declaration, e.g. oversample=4")
    args = p.parse_args()
    nprobes = [int(x) for x in args.nprobe.split(",")]

    d = os.path.join(common.DATA, f"lowrank-seed{args.seed}-n{args.rows}-q{args.queries}")
    meta = {"kind": "lowrank", "n": args.rows, "queries": args.queries, "seed": args.seed,
            "dim": datasets.DIM, "clusters": datasets.CLUSTERS, "rank": datasets.RANK,
            "noise": datasets.NOISE, "chunk": datasets.CHUNK, "format": 2}
    datasets.cached(d, meta, lambda: datasets.generate(args.rows, args.queries, args.seed))
    X = np.load(os.path.join(d, "vectors.npy"))
    Q = np.load(os.path.join(d, "queries.npy"))
    common.log(f"{len(X):,} x {X.shape[1]} vectors, {len(Q)} queries; exact answers")
    _, gt_d = datasets.exact_topk(X, Q, K)
    result = {"rows": len(X), "dim": X.shape[1], "queries": len(Q), "k": K,
              "load": os.getloadavg(), "ivf_options": args.ivf_options}

    conn = connect(args.extension)
    dim = X.shape[1]
    conn.execute(f"create virtual table exact using vec0(e float[{dim}] distance_metric=cosine)")
    t = load(conn, "exact", X)
    query(conn, "exact", Q[:5])                 # the copy loaded before timing
    lat, out = query(conn, "exact", Q)
    recall, _ = datasets.recall_at_k(X, Q, gt_d, out, K)
    result["exact"] = {"insert_rows_s": len(X) / t, "recall": recall, **summary(lat)}
    common.log(f"exact: {result['exact']}")
    conn.execute("drop table exact")

    conn.execute(f"create virtual table v using vec0(e float[{dim}] distance_metric=cosine "
                 f"indexed by ivf({args.ivf_options}))")
    t = load(conn, "v", X)
    ivf = {"insert_rows_s": len(X) / t}
    t0 = time.perf_counter()
    nlist = conn.execute("select vecsync_ivf_retrain('v')").fetchone()[0]
    ivf["build_s"] = time.perf_counter() - t0
    ivf["nlist"] = nlist
    ivf["info"] = json.loads(conn.execute("select vecsync_index_info('v')").fetchone()[0])
    query(conn, "v", Q[:5])
    ivf["rows"] = []
    for nprobe in nprobes:
        lat, out = query(conn, "v", Q, f" and nprobe = {nprobe}")
        recall, _ = datasets.recall_at_k(X, Q, gt_d, out, K)
        ivf["rows"].append({"nprobe": nprobe, "recall": recall, **summary(lat)})
        common.log(f"ivf nprobe={nprobe}: {ivf['rows'][-1]}")
    # Inserts into the trained index: 10% more rows, the next rows of the same stream (new
    # points of the same clusters: a prefix of the data does not depend on its length).
    extra = datasets.generate(len(X) + len(X) // 10, 1, args.seed)[0][len(X):]
    t0 = time.perf_counter()
    for start in range(0, len(extra), BATCH):
        with conn:
            conn.executemany("insert into v(rowid, e) values (?, ?)",
                             ((len(X) + i + 1, extra[i].tobytes())
                              for i in range(start, min(start + BATCH, len(extra)))))
    ivf["insert_trained_rows_s"] = len(extra) / (time.perf_counter() - t0)
    # Recall after that growth, without a retrain, against the exact answer over every row.
    X2 = np.concatenate([X, extra])
    _, gt2 = datasets.exact_topk(X2, Q, K)
    ivf["after_growth"] = []
    for nprobe in nprobes:
        lat, out = query(conn, "v", Q, f" and nprobe = {nprobe}")
        recall, _ = datasets.recall_at_k(X2, Q, gt2, out, K)
        ivf["after_growth"].append({"nprobe": nprobe, "recall": recall, **summary(lat)})
    # Then 10% of the original rows deleted (every tenth rowid), again without a retrain.
    with conn:
        conn.execute("delete from v where rowid % 10 = 0 and rowid <= ?", (len(X),))
    keep = np.array([i for i in range(len(X2)) if not ((i + 1) % 10 == 0 and i < len(X))])
    X3 = X2[keep]
    _, gt3 = datasets.exact_topk(X3, Q, K)
    where = {int(r): j for j, r in enumerate(keep)}
    ivf["after_deletes"] = []
    for nprobe in nprobes:
        lat, out = query(conn, "v", Q, f" and nprobe = {nprobe}")
        out = [[where.get(r, -1) for r in rows] for rows in out]
        recall, _ = datasets.recall_at_k(X3, Q, gt3, out, K)
        ivf["after_deletes"].append({"nprobe": nprobe, "recall": recall, **summary(lat)})
    ivf["info_after"] = json.loads(conn.execute("select vecsync_index_info('v')").fetchone()[0])
    result["ivf"] = ivf
    conn.execute("drop table v")

    # A filter that 1% of the rows pass (tag = i % 100): k rows whenever k match, the lists
    # probed past nprobe as needed; recall against the exact filtered answer.
    conn.execute(f"create virtual table f using vec0(e float[{dim}] distance_metric=cosine "
                 f"indexed by ivf({args.ivf_options}), tag integer)")
    for start in range(0, len(X), BATCH):
        with conn:
            conn.executemany("insert into f(rowid, e, tag) values (?, ?, ?)",
                             ((i + 1, X[i].tobytes(), i % 100)
                              for i in range(start, min(start + BATCH, len(X)))))
    conn.execute("select vecsync_ivf_retrain('f')")
    sel = np.flatnonzero(np.arange(len(X)) % 100 == 7)
    _, gtf = datasets.exact_topk(X[sel], Q, K)
    where = {int(r): j for j, r in enumerate(sel)}
    result["filtered"] = []
    for nprobe in nprobes:
        lat, out = query(conn, "f", Q, f" and tag = 7 and nprobe = {nprobe}")
        full = sum(len(rows) == K for rows in out)
        out = [[where.get(r, -1) for r in rows] for rows in out]
        recall, _ = datasets.recall_at_k(X[sel], Q, gtf, out, K)
        result["filtered"].append({"nprobe": nprobe, "recall": recall, "full": full,
                                   **summary(lat)})
    conn.close()

    if not args.no_faiss:
        for kind in ("flat", "sq8"):
            result[f"faiss_{kind}"] = run_faiss(X, Q, gt_d, nlist, nprobes, kind)
            common.log(f"faiss {kind}: {result[f'faiss_{kind}']}")

    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    print_table(result)
    return 0


def print_table(r):
    e, v = r["exact"], r["ivf"]
    print(f"{r['rows']:,} x {r['dim']}, cosine, k = {r['k']}, {r['queries']} queries, one "
          f"thread; load average at start {r['load'][0]:.2f}\n")
    print("| system | nprobe | build s | query ms (mean / p50) | recall@10 |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| vec0 exact | - | - | {e['mean_ms']:.2f} / {e['p50_ms']:.2f} | {e['recall']:.3f} |")
    for name, key in (("vec0 ivf", "ivf"), ("faiss IVF-Flat", "faiss_flat"),
                      ("faiss IVF-SQ8", "faiss_sq8")):
        if key not in r:
            continue
        for row in r[key]["rows"]:
            print(f"| {name} ({v['nlist']} lists) | {row['nprobe']} | {r[key]['build_s']:.2f} | "
                  f"{row['mean_ms']:.2f} / {row['p50_ms']:.2f} | {row['recall']:.3f} |")
    print("\nWithout a retrain, after 10% more rows, then after deleting 10% of the first rows:\n")
    print("| nprobe | recall@10 after growth | ms | recall@10 after deletes | ms |")
    print("| --- | --- | --- | --- | --- |")
    for g, d in zip(v["after_growth"], v["after_deletes"]):
        print(f"| {g['nprobe']} | {g['recall']:.3f} | {g['mean_ms']:.2f} | {d['recall']:.3f} | "
              f"{d['mean_ms']:.2f} |")
    if "filtered" in r:
        print("\nFiltered, `and tag = 7` (1% of the rows pass):\n")
        print("| nprobe | recall@10 | queries with 10 rows | query ms (mean / p50) |")
        print("| --- | --- | --- | --- |")
        for f in r["filtered"]:
            print(f"| {f['nprobe']} | {f['recall']:.3f} | {f['full']} of {r['queries']} | "
                  f"{f['mean_ms']:.2f} / {f['p50_ms']:.2f} |")
    print(f"\nInserts, 1,000-row transactions: vec0 exact {e['insert_rows_s']:,.0f} rows/s; "
          f"vec0 ivf {v['insert_rows_s']:,.0f} rows/s (training at 4,096 rows included), "
          f"{v['insert_trained_rows_s']:,.0f} rows/s into the trained index.")


if __name__ == "__main__":
    sys.exit(main())
