"""Turn one benchmark run (results.json) into RESULTS.md and latency.png.

    bench/.venv/bin/python bench/report.py bench/results.json   # redraw without re-running
"""

import sys

import common

BYTES_PER_ROW = 768 * 4


# --------------------------------------------------------------------------------------
# Formatting.


def ms(x) -> str:
    if x is None:
        return "—"
    if x < 1:
        return f"{x:.3f}"
    if x < 10:
        return f"{x:.2f}"
    if x < 100:
        return f"{x:.1f}"
    return f"{x:,.0f}"


def secs(x) -> str:
    if x is None:
        return "—"
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:,.0f}"


def times(x) -> str:
    if x is None:
        return "—"
    return f"{x:.2f}×" if x < 10 else f"{x:.1f}×" if x < 100 else f"{x:,.0f}×"


def recall(x) -> str:
    return "—" if x is None else f"{x:.3f}"


def count(n: int) -> str:
    return f"{n:,}"


def _ok(r) -> bool:
    return r is not None and r.get("status") == "ok"


def _median(r):
    return r["single"]["median_ms"] if _ok(r) and r.get("single") else None


def _batch_pq(r):
    b = r.get("batch") if _ok(r) else None
    return b["per_query_ms"] if b and "per_query_ms" in b else None


def _rows_per_s(r):
    """Rows per second until the data can be searched: N ÷ (build + first query)."""
    ready = _build_total(r)
    return r["n"] / ready if ready else None


def _main(results):
    return [r for r in results if r.get("dataset", "lowrank") == "lowrank"]


def _ratio(a, b):
    return a / b if a is not None and b else None


def threads_table(entries, load) -> list[str]:
    """The "one and two threads" section: entries are (label, time_threads() result); load
    the machine's load averages. Each system's queries were timed at every count in turn."""
    entries = [(label, t) for label, t in entries if t]
    if not entries:
        return []
    counts = entries[0][1]["counts"]
    head = " | ".join(f"{c} thread{'s' if c > 1 else ''} (ms)" for c in counts)
    ratios = " | ".join(f"{c} ÷ {counts[0]}" for c in counts[1:])
    L = ["## One and two threads", "",
         "The same queries timed at each thread count in turn (query by query, so that other work "
         "on the machine weighs on every count alike), in the process of the rows above: ours with "
         "`PRAGMA threads = t - 1` (the scan's chunks cut into t runs, one a thread), faiss with "
         "`omp_set_num_threads(t)`, both answering one query per call as everywhere here. Medians; **bar (issue 24): 2 threads ≤ 0.6× one thread**. "
         f"Load average {load}.", "",
         f"| System | {head} | {ratios} | Threads used | Same answers |",
         "|---|" + "---:|" * (len(counts) + len(counts) - 1) + "---|---|"]
    for label, t in entries:
        by = t["by_threads"]
        cells = " | ".join(ms(by[str(c)]["median_ms"]) for c in counts)
        rat = " | ".join(times(by[str(c)]["ratio"]) for c in counts[1:])
        used = ", ".join(str(by[str(c)].get("note") or "—") for c in counts)
        L.append(f"| {label} | {cells} | {rat} | {used} | {'yes' if t['same_answers'] else '**no**'} |")
    return L + [""]


def _scan_gbps(r):
    med = _median(r)
    return r["n"] * BYTES_PER_ROW / (med / 1e3) / 1e9 if med else None


def _is_scan(r) -> bool:
    return r["system"] != "libsql"


def _variant(label: str) -> str:
    return label[label.index("(") + 1 : label.rindex(")")] if "(" in label else ""


def _find(results, n, system, variant=None):
    for r in results:
        if r["n"] == n and r["system"] == system and (variant is None or _variant(r["label"]) == variant):
            return r
    return None


def _variants(results, n):
    return [_variant(r["label"]) for r in results if r["n"] == n and r["system"] == "vecsync-vec0"]


# --------------------------------------------------------------------------------------
# Chart.


def chart(run: dict, path: str) -> None:
    plt = common.pyplot()
    from matplotlib.ticker import FuncFormatter, NullFormatter

    results = [r for r in _main(run["results"]) if _ok(r)]
    labels = list(dict.fromkeys(r["label"] for r in results))
    colors = plt.get_cmap("tab10")
    markers = "osD^vP*Xh<>"
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5.6))
    handles = {}
    for i, label in enumerate(labels):
        rows = sorted((r for r in results if r["label"] == label), key=lambda r: r["n"])
        ours = label.startswith("vecsync")
        style = dict(marker=markers[i % len(markers)], color=colors(i % 10), label=label,
                     linestyle="-" if ours else "--", linewidth=2.2 if ours else 1.4, markersize=7)
        for ax, value in ((ax1, _median), (ax2, _batch_pq)):
            pts = [(r["n"], value(r)) for r in rows if value(r)]
            if pts:
                (line,) = ax.plot(*zip(*pts), **style)
                handles.setdefault(label, line)
    sizes = run["settings"]["sizes"]
    for ax, title in ((ax1, "Single query: median latency"),
                      (ax2, f"Batch of {run['settings']['batch']} queries: time per query")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([count(n) for n in sizes])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("N stored vectors (768-d float32, cosine, k = 10)")
        ax.set_ylabel("milliseconds (log scale)")
        ax.set_title(title)
        ax.grid(True, which="major", alpha=0.4)
        ax.grid(True, which="minor", alpha=0.15)
        lo, hi = min(sizes), max(sizes)
        ax.set_xlim(lo / 1.6, hi * 1.6)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=3, fontsize=9, frameon=False)
    m = run["machine"]
    fig.suptitle(f"Exact vector search, lower is better — one thread, {m['cpu']}", fontsize=12)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------------------
# Markdown.


def _machine(run: dict) -> list[str]:
    m, bw, results = run["machine"], run["memory_bandwidth"], run["results"]

    def version(system, key):
        for r in results:
            if r["system"] == system and r.get("versions", {}).get(key):
                return r["versions"][key]
        return None

    def libs(system, variant):
        for r in results:
            if r["system"] == system and _variant(r["label"]) == variant and r.get("libraries"):
                return ", ".join(f"`{x}`" for x in r["libraries"]
                                 if "blas" in x.lower() and not x.startswith("numpy.libs")) or "—"
        return None

    cores = f"{m['logical_cores']} logical cores"
    if m.get("physical_cores"):
        cores = f"{m['physical_cores']} cores, {m['logical_cores']} threads"
    rows = [
        ("CPU", f"{m['cpu']} ({cores}{'; ' + m['caches'] if m.get('caches') else ''})"),
        ("Memory", f"{m['memory_gib']:.1f} GiB" + (
            f"; one-thread read bandwidth **{bw['read_gbps']:.1f} GB/s** (BLAS `sdot` over a 1 GB "
            f"array: {bw['dot_gbps']:.1f} GB/s; numpy `sum`: {bw['sum_gbps']:.1f} GB/s; the better of "
            f"{len(bw.get('runs', [])) or 1} measurements, at the start and end of the run"
            + (": " + ", ".join(f"{x['read_gbps']:.1f}" for x in bw['runs'] if x and 'read_gbps' in x)
               if len(bw.get('runs', [])) > 1 else "") + ")"
            if bw.get("read_gbps") else "")),
        ("OS", f"{m['os']}, Linux {m['kernel']}; Python {m['python']}"),
        ("Load average", f"{m.get('load_at_start', '?')} at the start, {m.get('load_at_end', '?')} at the end "
                         f"(1, 5, 15 min; near {m['logical_cores']} or above, other work was sharing the cores)"),
        ("vecsync", f"commit {m['revision']}, `{run['settings']['extension']}`"),
    ]
    debug = {}
    for r in results:
        text = r.get("versions", {}).get("vecsync_debug")
        if r["system"].startswith("vecsync") and text:
            debug.setdefault(_variant(r["label"]), "; ".join(text.splitlines()))
    if len(set(debug.values())) == 1:
        rows.append(("vecsync_debug()", next(iter(debug.values()))))
    else:
        rows += [(f"vecsync_debug(), “{v}” rows", text) for v, text in debug.items()]
    sqlite_ours = version("vecsync-vec0", "sqlite") or version("sqlite-vec", "sqlite")
    if sqlite_ours:
        rows.append(("SQLite (vecsync, sqlite-vec)", f"{sqlite_ours}, the SQLite inside apsw"))
    if version("libsql", "sqlite"):
        rows.append(("libSQL", f"SQLite {version('libsql', 'sqlite')} (libSQL fork), pip `libsql` "
                               f"{version('libsql', 'pip libsql')}"))
    if version("sqlite-vec", "sqlite-vec"):
        rows.append(("sqlite-vec", version("sqlite-vec", "sqlite-vec")))
    if version("numpy", "numpy"):
        rows.append(("numpy", f"{version('numpy', 'numpy')}, BLAS {version('numpy', 'numpy BLAS')}"))
    if version("faiss", "faiss"):
        rows.append(("faiss", f"faiss-cpu {version('faiss', 'faiss')}, one OpenMP thread"))
    for variant in dict.fromkeys(_variant(r["label"]) for r in results if r["system"].startswith("vecsync")):
        lib = libs("vecsync-vec0", variant) or libs("vecsync-topk", variant)
        if lib:
            rows.append((f"BLAS of the “{variant}” rows", lib))
    out = ["| | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in rows]
    return out


def _results_table(results, n) -> list[str]:
    out = [
        "| System | Build (s) | First query (ms) | Ready (s) | Rows/s | Query median (ms) | p99 (ms) "
        "| Batch, per query (ms) | Recall@10 | Scan (GB/s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if r["n"] != n or r["system"] == "membw":
            continue
        if not _ok(r):
            out.append(f"| {r['label']} | {r['status']} | | | | | | | | |")
            continue
        rec = recall(r.get("recall"))
        if r.get("batch_recall") is not None:
            rec += f" / {recall(r['batch_recall'])}"
        rps = _rows_per_s(r)
        out.append(
            f"| {r['label']} | {secs(r.get('build_s'))} | {ms(r.get('first_query_ms'))} "
            f"| {secs(_build_total(r))} | {f'{rps:,.0f}' if rps else '—'} "
            f"| **{ms(_median(r))}** | {ms(r['single']['p99_ms'])} "
            f"| {ms(_batch_pq(r))} | {rec} "
            f"| {f'{_scan_gbps(r):.1f}' if _is_scan(r) and _scan_gbps(r) else '—'} |")
    return out


def machine_lines(m: dict, load_note: str) -> list[str]:
    """A report's Machine section (the quantized and 1M-row reports): the CPU, memory and
    system, then the load average at the run's start and end, and load_note on it."""
    return [
        "## Machine",
        "",
        f"- {m['cpu']}, {m['logical_cores']} logical cores ({m.get('caches') or 'caches unknown'}), "
        f"{m['memory_gib']:.1f} GiB, {m['os']}, Linux {m['kernel']}, Python {m['python']}.",
        f"- **Load average {m['load_at_start']} at the start, {m['load_at_end']} at the end** "
        f"(1, 5, 15 min). {load_note}",
    ]


def _ratio_table(results, n, system: str, header: str, cells) -> list[str]:
    """One table of ratios: a row for each of `system`'s results at size n, its cells from
    cells(result) (their text), under `header` (the column names after the first)."""
    rows = [r for r in results if r["n"] == n and r["system"] == system and _ok(r)]
    if not rows:
        return []
    names = header.split(" | ")
    out = [f"| {' | '.join(names)} |", "|---|" + "---:|" * (len(names) - 1)]
    out += [f"| {r['label']} | {' | '.join(cells(r))} |" for r in rows]
    return out + [""]


def _ratio_tables(results, n) -> list[str]:
    sv, npy, fa, lib = (_find(results, n, s) for s in ("sqlite-vec", "numpy", "faiss", "libsql"))

    def vec0_cells(r):
        return [times(_ratio(_median(sv), _median(r))), times(_ratio(_median(r), _median(npy))),
                times(_ratio(_median(r), _median(fa))), times(_ratio(_median(r), _batch_pq(r))),
                times(_ratio(_rows_per_s(r), _rows_per_s(sv)))]

    def topk_cells(r):
        vec0 = _find(results, n, "vecsync-vec0", _variant(r["label"]))
        return [times(_ratio(_build_total(lib), _build_total(r))), times(_ratio(_median(lib), _median(r))),
                f"{recall(r.get('recall'))} ({recall(lib.get('recall')) if _ok(lib) else '—'})",
                times(_ratio(_median(r), _median(vec0))), times(_ratio(_median(sv), _median(r)))]

    return (_ratio_table(results, n, "vecsync-vec0",
                         "vec0 | Query speedup vs sqlite-vec | Latency ÷ numpy's | Latency ÷ faiss's "
                         "| Batch gain (single ÷ batch per query) | Rows/s ÷ sqlite-vec's", vec0_cells)
            + _ratio_table(results, n, "vecsync-topk",
                           "vector_top_k | Build speedup vs libSQL | Query speedup vs libSQL "
                           "| Recall (libSQL) | Latency ÷ vec0's (same BLAS) | Query speedup vs sqlite-vec",
                           topk_cells))


def _build_total(r):
    """Build time up to the first answer: inserts plus the first query (lazy index work)."""
    if not _ok(r) or r.get("build_s") is None:
        return None
    return r["build_s"] + (r.get("first_query_ms") or 0) / 1e3


def _bars(run) -> list[str]:
    results, sizes = run["results"], run["settings"]["sizes"]
    big, small = max(sizes), min(sizes)
    variants = list(dict.fromkeys(v for n in sizes for v in _variants(results, n)))
    if not variants:
        return ["Our extension's rows did not run, so no bar could be checked."]

    def at(system, n, variant=None):
        return _find(results, n, system, variant)

    bars = []  # (description, target text, predicate, value function(variant))
    nb, ns = count(big), count(small)
    bars.append((f"vec0 query vs sqlite-vec 0.1.9, N = {nb}", "≥ 4× faster", lambda x: x >= 4,
                 lambda v: _ratio(_median(at("sqlite-vec", big)), _median(at("vecsync-vec0", big, v))), times))
    bars.append((f"vec0 query vs numpy brute force, N = {nb}", "≤ 1.3× numpy's time", lambda x: x <= 1.3,
                 lambda v: _ratio(_median(at("vecsync-vec0", big, v)), _median(at("numpy", big))), times))
    bars.append((f"vec0 batch of {run['settings']['batch']}: single ÷ per-query time, N = {nb}", "≥ 5×",
                 lambda x: x >= 5,
                 lambda v: _ratio(_median(at("vecsync-vec0", big, v)), _batch_pq(at("vecsync-vec0", big, v))),
                 times))
    bars.append((f"vec0 rows/s (to first answer) ÷ sqlite-vec's, N = {nb}", "≥ 1×", lambda x: x >= 1,
                 lambda v: _ratio(_rows_per_s(at("vecsync-vec0", big, v)), _rows_per_s(at("sqlite-vec", big))),
                 times))
    bars.append((f"vec0 recall@10, N = {nb}", "1.0", lambda x: x >= 1.0,
                 lambda v: (at("vecsync-vec0", big, v) or {}).get("recall"), recall))
    bars.append((f"vector_top_k build vs libSQL (inserts with index + first query), N = {ns}", "≥ 50× faster",
                 lambda x: x >= 50,
                 lambda v: _ratio(_build_total(at("libsql", small)), _build_total(at("vecsync-topk", small, v))),
                 times))
    bars.append((f"vector_top_k query vs libSQL, N = {ns}", "faster (> 1×)", lambda x: x > 1,
                 lambda v: _ratio(_median(at("libsql", small)), _median(at("vecsync-topk", small, v))), times))
    bars.append((f"vector_top_k recall@10, N = {ns}", "1.0", lambda x: x >= 1.0,
                 lambda v: (at("vecsync-topk", small, v) or {}).get("recall"), recall))
    bars.append((f"vector_top_k query ÷ vec0's, N = {nb}", "≤ 1.5×", lambda x: x <= 1.5,
                 lambda v: _ratio(_median(at("vecsync-topk", big, v)), _median(at("vecsync-vec0", big, v))),
                 times))

    out = ["| Bar | Target | " + " | ".join(variants) + " |",
           "|---|---|" + "---:|" * len(variants)]
    for desc, target, ok, value, fmt in bars:
        cells = []
        for v in variants:
            x = value(v)
            cells.append("not measured" if x is None else f"{fmt(x)} {'✅' if ok(x) else '❌'}")
        out.append(f"| {desc} | {target} | " + " | ".join(cells) + " |")
    if big == small:
        out.append("")
        out.append(f"Only N = {nb} was run, so the N = 100,000 bars are checked at N = {nb}.")
    return out


def _limits(run) -> list[str]:
    results, bw = run["results"], run["memory_bandwidth"].get("read_gbps")
    big = max(run["settings"]["sizes"])
    out = []
    mb = big * BYTES_PER_ROW / 1e6
    for r in results:
        if r["n"] != big or not _ok(r) or not _is_scan(r) or r["system"] == "vecsync-topk":
            continue
        g = _scan_gbps(r)
        line = f"- {r['label']}: {count(big)} vectors ({mb:,.0f} MB) per query in {ms(_median(r))} ms = **{g:.1f} GB/s**"
        if bw:
            line += f", {100 * g / bw:.0f}% of the one-thread read bandwidth"
        out.append(line + ".")
    if out and mb < 100:
        out += ["", f"At this N the vectors ({mb:,.0f} MB) largely fit in the CPU caches, so a scan "
                    "can run faster than main memory delivers; the bandwidth comparison needs a larger N."]
        return out
    vec0 = [r for r in results if r["n"] == big and r["system"] == "vecsync-vec0" and _ok(r)]
    if bw and vec0:
        best = max(vec0, key=_scan_gbps)
        frac = _scan_gbps(best) / bw
        out.append("")
        if frac >= 0.7:
            out.append(f"The fastest vec0 row ({best['label']}) scans at {100 * frac:.0f}% of the measured read "
                       "bandwidth: memory, not arithmetic, bounds a single query. A batch reads each "
                       "block once for all its queries, which is why the batch rows go further.")
        else:
            out.append(f"The fastest vec0 row ({best['label']}) scans at {100 * frac:.0f}% of the measured read "
                       "bandwidth: the scoring kernel (the `scan:` line of vecsync_debug() above names it), "
                       "not memory, bounds a single query.")
        others = [r for r in results if r["n"] == big and _ok(r) and _is_scan(r)
                  and not r["system"].startswith("vecsync")]
        faster = max(others, key=_scan_gbps, default=None)
        if faster and _scan_gbps(faster) > 1.1 * _scan_gbps(best):
            out.append(f"{faster['label']} scans the same data at {_scan_gbps(faster):.1f} GB/s, "
                       f"{_scan_gbps(faster) / _scan_gbps(best):.2f}× the fastest vec0 row: a faster "
                       "single-query kernel than ours exists on this CPU.")
        slow = [r for r in vec0 if _scan_gbps(r) < 0.7 * _scan_gbps(best)]
        for r in slow:
            out.append(f"{r['label']} reaches {_scan_gbps(r):.1f} GB/s, "
                       f"{_scan_gbps(best) / _scan_gbps(r):.1f}× slower than {best['label']}: "
                       "its scoring kernel is the bottleneck.")
    return out


def _isotropic(results) -> list[str]:
    iso = [r for r in results if r.get("dataset") == "isotropic"]
    if not iso:
        return []
    n = iso[0]["n"]
    out = [
        "## Recall on harder data", "",
        f"An approximate index's recall depends on the data. The same N = {count(n)} run on "
        "isotropic gaussian clusters (every point spread in all 768 dimensions, so a query's 1st and "
        "10th neighbours are almost equally far: the hard case for a graph index):", "",
        "| System | Build (s) | Query median (ms) | Recall@10 |",
        "|---|---:|---:|---:|",
    ]
    for r in iso:
        if _ok(r):
            out.append(f"| {r['label']} | {secs(r.get('build_s'))} | {ms(_median(r))} | {recall(r.get('recall'))} |")
        else:
            out.append(f"| {r['label']} | {r['status']}: {r.get('error')} | | |")
    return out + [""]


def markdown(run: dict, path: str, chart: str | None = None) -> None:
    s, every = run["settings"], run["results"]
    results = _main(every)
    run = dict(run, results=results)
    L = ["# VecSync benchmarks", ""]
    L += [
        "Exact k-nearest-neighbour search inside SQLite with our extension — the `vec0` virtual "
        "table and libSQL's `vector_top_k` on stock SQLite — beside sqlite-vec, libSQL (DiskANN), "
        "numpy and faiss, **measured in the same run on the same data**. "
        f"Generated by `make bench` (`bench/run.py`) on {run['date']}; "
        f"the whole run took {run['wall_s'] / 60:.1f} min.",
        "",
    ]
    if s.get("quick"):
        L += ["**Quick run (`--quick`): smoke-test figures, fewer queries, N = 10,000 only.**", ""]
    L += ["## Machine", ""] + _machine(run) + [""]
    L += [
        "## Data and method",
        "",
        f"- {' and '.join(count(n) for n in s['sizes'])} stored vectors of {s['dim']} float32 dimensions, "
        f"a mixture of {s['clusters']} clusters, each spread along a random {s.get('rank', '?')}-dimensional "
        f"subspace plus gaussian noise (σ = {s.get('noise', '?')}) in every dimension, as real embeddings "
        f"occupy few effective dimensions (seed {s['seed']}; the smaller set is a prefix of the larger). "
        "Queries are new points of the same clusters, never stored rows.",
        f"- Cosine distance, k = {s['k']}, one thread for every system (`OPENBLAS_NUM_THREADS=1`, "
        "`omp_set_num_threads(1)`); each system runs in a fresh process.",
        f"- SQLite systems use {s['storage']} with default settings; inserts run in one transaction "
        "(`executemany` of float32 blobs, ids 1..N). numpy and faiss hold the matrix in memory.",
        "- **Build**: inserts (for `vector_top_k`: with the vector index in place); numpy: normalising the "
        "matrix; faiss: normalising and `IndexFlatIP.add`. **First query**: the first query after the "
        "build, which pays for any work an index defers. **Ready** = build + first query, and **rows/s** = "
        "N ÷ ready: the rate at which rows become searchable.",
        f"- **Query**: {s['warmup']} untimed warm-up queries, then {s['queries']} timed queries one at a time "
        "(`select id, distance from v where embedding match ? and k = 10 order by distance` for vec0, "
        "`select id from vector_top_k('m_idx', ?, 10)` for libSQL's SQL); median and 99th percentile.",
        f"- **Batch**: one call answering {s['batch']} queries (vecsync: `vecsync_knn_batch('v', queries_blob, 10)`; "
        f"numpy: `Q @ X.T`; faiss: `search` with {s['batch']} queries), median of up to 5 repeats (fewer when one batch takes seconds), divided by {s['batch']}.",
        "- **Recall@10** against exact answers computed in float64; a returned id whose exact distance ties the "
        "10th within 1e-5 counts as correct. Where a system has a batch, its batch recall follows the slash.",
        "- **Scan**: bytes of vectors scanned per query (N × 768 × 4) ÷ median latency: how close a brute-force "
        "scan comes to memory bandwidth.",
        "",
    ]
    for n in s["sizes"]:
        L += [f"## N = {count(n)}", ""] + _results_table(results, n) + [""]
        L += _ratio_tables(results, n)
    L += ["## Performance bars (issues 3 and 4)", ""] + _bars(run) + [""]
    big = max(s["sizes"])
    L += threads_table([(f"{r['label']}, N = {count(r['n'])}", (r.get("extra") or {}).get("threads"))
                        for r in run.get("threads", []) if _ok(r)],
                       f"{run['machine'].get('load_at_start', '?')} at the start of the run, "
                       f"{run['machine'].get('load_at_end', '?')} at its end")
    L += [f"- {r['label']}, N = {count(r['n'])}, threads: {r['status']}: {r.get('error')}"
          for r in run.get("threads", []) if not _ok(r) and r.get("n") == big]
    L += _isotropic(every)
    if chart:
        L += ["## Latency against N", "", f"![Query latency against N for each system]({chart})", ""]
    limits = _limits(run)
    if limits:
        L += ["## What limits the scan", ""] + limits + [""]
    exact = [r for r in results if _ok(r) and r.get("max_distance_error") is not None]
    if exact:
        L += ["## Distances", "", "Largest difference between a reported distance and the float64 exact "
              "cosine distance, over the timed queries:", ""]
        L += [f"- {r['label']}, N = {count(r['n'])}: {r['max_distance_error']:.1e}" for r in exact] + [""]
    missing = [r for r in results if r.get("status") != "ok" and r["system"] != "membw"]
    batchless = [r for r in results if _ok(r) and (r.get("batch") or {}).get("error")]
    if missing or batchless:
        L += ["## Not measured", ""]
        L += [f"- {r['label']}, N = {count(r['n'])}: {r['status']}: {r.get('error')}" for r in missing]
        L += [f"- {r['label']}, N = {count(r['n'])}, batch: {r['batch']['error']}" for r in batchless]
        L += [""]
    L += ["Raw figures: `results.json`. Rerun: `make bench` (`bench/run.py --help` for options).", ""]
    with open(path, "w") as f:
        f.write("\n".join(L))


if __name__ == "__main__":
    common.rerender(sys.modules[__name__], "results", chart="latency.png", markdown="RESULTS.md")
