"""QUANTIZED.md and quantized.png from one run of quantized.py (quantized.json).

    bench/.venv/bin/python bench/quantized_report.py bench/quantized.json   # redraw only
"""

import sys

import common

from report import machine_lines, ms, recall, secs, times

SET_TITLES = {"synthetic": "Synthetic clusters", "real": "Real sentence embeddings"}


def _ok(r) -> bool:
    return r is not None and r.get("status") == "ok" and r.get("single")


def _med(r):
    return r["single"]["median_ms"] if _ok(r) else None


def _min(r):
    return r["single"]["min_ms"] if _ok(r) else None


def _ratio(a, b):
    return a / b if a is not None and b else None


def _find(results, dataset, system, oversample=None):
    for r in results:
        if r["dataset"] == dataset and r["system"] == system and (
                oversample is None or r.get("oversample") == oversample):
            return r
    return None


def _mib(x) -> str:
    return "—" if x is None else f"{x:,.0f}"


def _rss_delta(r):
    e = r.get("extra") or {}
    a, b = e.get("rss_after_queries_mib"), e.get("rss_before_mib")
    return a - b if a is not None and b is not None else None


def _bytes_per_row(r):
    info = (r.get("extra") or {}).get("cache_info") or {}
    return info.get("bytes_per_row")


def _set_line(name: str, s: dict) -> str:
    if name == "synthetic":
        return (f"**Synthetic clusters**: {s['n']:,} × {s['dim']} float32, the mixture of 100 "
                f"rank-32 clusters of `run.py` (seed {s['seed']}); queries are new points of "
                f"the same clusters.")
    return (f"**Real sentence embeddings**: {s['n']:,} sentences of the documentation that ships "
            f"with Python {s['python']} (the `pydoc` topics and the standard library's "
            f"docstrings, split into sentences, deduplicated, in a seeded order), "
            f"{s['queries']} more held out as queries; embedded by {s['model']} "
            f"(pip `{s['package']}` {s['package_version']}, {s['dim']} dimensions, offline, "
            f"torch {s.get('torch', '?')} on the CPU, {s.get('torch_threads', '?')} threads) in "
            f"**{s['embed_seconds']:.0f} s** ({s['sentences_per_second']:,.0f} sentences a second; "
            f"cached in `bench/data/`, so later runs skip it).")


def _table(run, dataset) -> list[str]:
    res = [r for r in run["results"] if r["dataset"] == dataset]
    ours = _med(_find(res, dataset, "vecsync-vec0"))
    ours_min = _min(_find(res, dataset, "vecsync-vec0"))
    flat = _med(_find(res, dataset, "faiss"))
    lines = [
        "| System | Build (s) | First query (ms) | Query median (ms) | p99 (ms) | Fastest (ms) "
        "| Recall@10 | × our float32 | × faiss IndexFlatIP | Fastest, × our float32 "
        "| Memory held (MiB) | Bytes a row in memory |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in res:
        if not _ok(r):
            lines.append(f"| {r['label']} | {r.get('status')}: {r.get('error')} |||||||||||")
            continue
        med = _med(r)
        bold = r["system"].startswith("vecsync")
        name = f"**{r['label']}**" if bold else r["label"]
        lines.append(
            f"| {name} | {secs(r.get('build_s'))} | {ms(r.get('first_query_ms'))} | "
            f"{'**' + ms(med) + '**' if bold else ms(med)} | {ms(r['single']['p99_ms'])} | "
            f"{ms(_min(r))} | {recall(r.get('recall'))} | {times(_ratio(med, ours))} | "
            f"{times(_ratio(med, flat))} | {times(_ratio(_min(r), ours_min))} | "
            f"{_mib(_rss_delta(r))} | {_bytes_per_row(r) or '—'} |")
    return lines


def _bars(run) -> list[str]:
    out = ["| Data | Quantizer | Oversample, settings | Recall@10 (bar) | Query ÷ our float32 (bar) "
           "| Query (ms) | faiss IndexFlatIP (ms) | Faster than IndexFlatIP? | All bars met? "
           "| Fastest query ÷ our fastest float32 |",
           "|---|---|---:|---:|---:|---:|---:|---|---|---:|"]
    for dataset in run["datasets"]:
        res = [r for r in run["results"] if r["dataset"] == dataset]
        ours = _med(_find(res, dataset, "vecsync-vec0"))
        ours_min = _min(_find(res, dataset, "vecsync-vec0"))
        flat = _med(_find(res, dataset, "faiss"))
        for system, q, rbar, tbar in (("vecsync-int8", "int8", 0.99, 0.5),
                                      ("vecsync-bit", "bit", 0.95, 0.2)):
            for r in res:
                if r["system"] != system or not _ok(r):
                    continue
                med, rec = _med(r), r.get("recall")
                ratio = _ratio(med, ours)
                faster = med < flat if flat else None
                met = (rec is not None and rec >= rbar and ratio is not None and ratio <= tbar
                       and bool(faster))
                out.append(
                    f"| {SET_TITLES[dataset].lower()} | {q} | {r.get('oversample')}"
                    f"{', PRAGMA ' + r['pragma'] if r.get('pragma') else ''} | "
                    f"{recall(rec)} (≥ {rbar}) | {times(ratio)} (≤ {tbar}×) | {ms(med)} | "
                    f"{ms(flat)} | {'yes' if faster else 'no' if faster is not None else '—'} | "
                    f"{'**yes**' if met else '**no**'} | {times(_ratio(_min(r), ours_min))} |")
    return out


def _notes(run) -> list[str]:
    notes = []
    for r in run["results"]:
        e = r.get("extra") or {}
        if r["system"] == "sqliteai-vector" and _ok(r):
            notes.append(
                f"- sqlite-vector ({SET_TITLES[r['dataset']].lower()}): inserts {secs(e.get('insert_s'))} s, "
                f"`vector_quantize` {secs(e.get('quantize_s'))} s, `vector_quantize_preload` "
                f"{secs(e.get('preload_s'))} s; `vector_quantize_memory` "
                f"{(e.get('quantize_memory_bytes') or 0) / r['n']:.0f} bytes a row.")
    return notes


def markdown(run: dict, path: str, chart: str | None = None) -> None:
    m = run["machine"]
    s = run["settings"]
    versions = {}
    for r in run["results"]:
        for k, v in (r.get("versions") or {}).items():
            versions.setdefault(k, v)
    lines = [
        "# Quantized scans with exact re-scoring",
        "",
        "Our `vec0` with `indexed by rescore(quantizer=int8|bit, oversample=N)` — int8 codes (a "
        "scale per row) or sign bits in memory, the best k × oversample candidates re-scored "
        "from the float32 vectors — beside our float32 scan, faiss (`IndexFlatIP`, "
        "`IndexScalarQuantizer` 8-bit), sqlite-vec (float32, and its binary quantization "
        "re-ranked as its documentation shows) and SQLite AI's sqlite-vector "
        "(`vector_quantize_scan`, and its exact `vector_full_scan`), **in the same run on the "
        f"same data**. Generated by `bench/quantized.py` (`make bench`) on {run['date']}; the "
        f"run took {run['wall_s'] / 60:.1f} min.",
        "",
    ] + machine_lines(m, "The machine was shared with other builds: at a load near 2 or above "
                         "the two cores were contended, so absolute figures are noisy; medians "
                         "are quoted, and ratios within this run are the meaningful figures.") + [
        f"- vecsync commit {m['revision']}, `{s['extension']}`; our rows with {run['blas']}.",
        "- " + "; ".join(f"{k} {v}" for k, v in sorted(versions.items()) if k != "vecsync_debug") + ".",
        "",
        "## Data and method",
        "",
    ]
    for name, st in run["datasets"].items():
        lines.append("- " + _set_line(name, st))
    lines += [
        f"- Cosine distance, k = {s['k']}, one thread everywhere; each system in a fresh process; "
        "SQLite systems in database files with default settings, inserts in one transaction.",
        f"- {s['warmup']} untimed warm-up queries, then {s['queries']} timed queries one at a "
        "time: median and 99th percentile. **First query**: the first after the build "
        "(for vec0 it loads the in-memory copy).",
        "- **Recall@10** against exact search in float64 (a returned id whose exact distance "
        "ties the 10th within 1e-5 counts).",
        f"- Oversample: our defaults (8 for int8, 16 for bit) unless the label says otherwise; "
        f"sqlite-vec's re-ranked query takes k × {s['default_oversample']} bit candidates. Every "
        "SQLite connection runs with default settings (a 2 MB page cache, no mmap) except the "
        "rows whose label names a PRAGMA: the re-scoring reads float32 vectors back from the "
        "file, which the page cache settings govern.",
        "- **Fastest**: the quickest of the timed queries, the figure least disturbed by other "
        "work on the machine; its ratio to our float32 row's fastest is given beside the "
        "medians' (the bars are judged on medians).",
        "- **Memory held**: resident memory (VmRSS) after the timed queries minus before the "
        "build, in the system's own process: what it keeps to search, plus whatever the "
        "allocator kept from the build. **Bytes a row**: `vecsync_cache_info` of our tables.",
        "",
        "## Bars (issue 11)",
        "",
        "int8 rescore ≤ 0.5× our float32 query at recall@10 ≥ 0.99; bit rescore ≤ 0.2× at "
        "≥ 0.95; both faster than faiss `IndexFlatIP` in the same run.",
        "",
    ]
    lines += _bars(run)
    for dataset in run["datasets"]:
        st = run["datasets"][dataset]
        lines += ["", f"## {SET_TITLES[dataset]}, {st['n']:,} × {st['dim']}", ""]
        lines += _table(run, dataset)
    notes = _notes(run)
    if notes:
        lines += ["", "## Notes", ""] + notes
    common.write_markdown(path, lines, chart, "Latency against recall")


def chart(run: dict, path: str) -> None:
    plt = common.pyplot()
    from matplotlib.ticker import FuncFormatter, NullFormatter

    sets = list(run["datasets"])
    fig, axes = plt.subplots(1, len(sets), figsize=(6.5 * len(sets), 6.4), squeeze=False)
    colors = plt.get_cmap("tab20")
    labels = list(dict.fromkeys(r["label"] for r in run["results"]))
    for ax, dataset in zip(axes[0], sets):
        for r in run["results"]:
            if r["dataset"] != dataset or not _ok(r) or r.get("recall") is None:
                continue
            i = labels.index(r["label"])
            ours = r["system"].startswith("vecsync")
            ax.scatter(_med(r), r["recall"], color=colors(i % 20), s=70 if ours else 45,
                       marker="o" if ours else "s", edgecolor="black" if ours else "none",
                       label=r["label"], zorder=3)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("single-query latency, median (ms, log scale)")
        ax.set_ylabel("recall@10")
        st = run["datasets"][dataset]
        ax.set_title(f"{SET_TITLES[dataset]}, {st['n']:,} × {st['dim']}")
        ax.axhline(0.99, color="grey", lw=0.8, ls="--")
        ax.axhline(0.95, color="grey", lw=0.8, ls=":")
        ax.grid(True, which="both", alpha=0.3)
    handles, names = [], []
    for ax in axes[0]:
        for h, n in zip(*ax.get_legend_handles_labels()):
            if n not in names:
                handles.append(h)
                names.append(n)
    fig.legend(handles, names, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle("Quantized scans: latency against recall (one thread; dashed: 0.99, dotted: 0.95)")
    fig.tight_layout(rect=(0, 0.2, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    common.rerender(sys.modules[__name__], "quantized", chart="quantized.png", markdown="QUANTIZED.md")
