"""What every benchmark script shares: where things live, logging, child processes that
report one JSON result, and writing a run's JSON, chart and Markdown report."""

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data")
# The runtime-free extension `make extension` builds: the benchmarks' default.
EXTENSION = os.path.join(REPO, ".build", "libvecsync.so")


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def rel(path: str) -> str:
    """A path as the reports show it: relative to the repository when inside it."""
    path = os.path.abspath(path)
    return os.path.relpath(path, REPO) if path.startswith(REPO + os.sep) else path


def rss_mib() -> float | None:
    """Resident memory of this process (VmRSS), MiB."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def remove_db(path: str) -> None:
    """Removes a database file and its WAL, shared-memory and journal files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def run_json_process(cmd: list[str], out: str, env: dict, timeout: float, what: str) -> dict:
    """Runs `cmd`, a child that writes its result as JSON to the file `out`, and returns
    that result; a child that times out, fails after an "ok" or dies before writing one
    gives {"status": "failed", "error": ...} naming `what`. The file is removed."""
    proc = None
    try:
        proc = subprocess.run(cmd, env=env, stdout=sys.stderr, timeout=timeout)
        with open(out) as f:
            result = json.load(f)
        if proc.returncode != 0 and result.get("status") == "ok":
            result.update(status="failed", error=f"{what} exited with status {proc.returncode}")
        return result
    except subprocess.TimeoutExpired:
        return {"status": "failed", "error": f"{what} timed out after {timeout:.0f} s"}
    except (OSError, ValueError):
        code = proc.returncode if proc else None
        how = "not started" if code is None else f"signal {-code}" if code < 0 else f"status {code}"
        return {"status": "failed", "error": f"{what} died ({how}) before writing a result"}
    finally:
        if os.path.exists(out):
            os.remove(out)


def stamp(run: dict, started: float) -> dict:
    """`run` with the run's wall time since `started` (time.perf_counter()) and its date."""
    return dict(run, wall_s=time.perf_counter() - started, date=time.strftime("%Y-%m-%d"))


def publish(run: dict, out_dir: str, stem: str, report, chart: str, markdown: str) -> int:
    """Writes `run` as <stem>.json in `out_dir`, then its chart and Markdown report through
    the module `report` (which has chart(run, path) and markdown(run, path, chart=name));
    0, a benchmark's exit status."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{stem}.json"), "w") as f:
        json.dump(run, f, indent=1)
    report.chart(run, os.path.join(out_dir, chart))
    report.markdown(run, os.path.join(out_dir, markdown), chart=chart)
    wall = run.get("wall_s")
    took = f" in {wall / 60:.1f} min" if isinstance(wall, (int, float)) else ""
    log(f"wrote {markdown}, {chart}, {stem}.json to {rel(out_dir)}{took}")
    return 0


def rerender(report, stem: str, chart: str, markdown: str) -> None:
    """A report module's command line: `python <report>.py [run.json]` renders the chart and
    the Markdown again from a run's JSON (default: bench/<stem>.json), next to it."""
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, f"{stem}.json")
    with open(src) as f:
        data = json.load(f)
    out = os.path.dirname(os.path.abspath(src))
    report.chart(data, os.path.join(out, chart))
    report.markdown(data, os.path.join(out, markdown), chart=chart)


def add_our_table_options(p, systems) -> None:
    """The options of the benchmarks that compare our quantized tables (quantized.py,
    scale.py): which systems run, and the extra rows of our int8 and bit tables."""
    p.add_argument("--systems", help="comma-separated subset of: " + ", ".join(s for s, *_ in systems))
    p.add_argument("--oversample", default="",
                   help="comma-separated oversample values: our int8 and bit tables run again at "
                        "each, besides their defaults (int8 8, bit 16)")
    p.add_argument("--pragma-rows", default="",
                   help="semicolon-separated PRAGMA settings (e.g. mmap_size=2147483648): our "
                        "int8 and bit tables run again, at the default oversample, with each on "
                        "every connection")


def write_markdown(path: str, lines: list[str], chart: str | None = None, alt: str = "") -> None:
    """A report's lines into path, then the chart (a file beside it) when there is one."""
    if chart:
        lines = lines + ["", f"![{alt}]({chart})", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def pyplot():
    """matplotlib's pyplot, drawing into files (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def parse_threads(text: str) -> list[int]:
    """--threads "1,2" as [1, 2]: thread counts, the first (one thread) the reference."""
    counts = [int(x) for x in text.split(",") if x.strip()]
    if not counts or any(c < 1 for c in counts):
        raise SystemExit(f"--threads {text!r}: give thread counts such as 1,2")
    return counts


def time_threads(search, set_threads, queries, counts: list[int], note=None) -> dict:
    """Times search(q) for every query at each thread count in `counts`, interleaved (each
    query at every count before the next query), so that other work on the machine weighs
    on every count alike. set_threads(t) switches the system to t threads; note(t), when
    given, returns what the system says it ran on. Returns per count the median, min and max
    milliseconds, each count's median as a ratio to the first count's, and whether every
    count answered every query with the same rows."""
    import statistics

    lat = {t: [] for t in counts}
    answers = {t: [] for t in counts}
    notes = {}
    for t in counts:  # one untimed query at each count: threads and caches started
        set_threads(t)
        search(queries[0])
    for q in queries:
        for t in counts:
            set_threads(t)
            t0 = time.perf_counter_ns()
            answers[t].append(search(q))
            lat[t].append((time.perf_counter_ns() - t0) / 1e6)
            if note and t not in notes:
                notes[t] = note(t)
    set_threads(counts[0])
    base = statistics.median(lat[counts[0]])
    out = {"counts": counts, "queries": len(queries), "by_threads": {}}
    for t in counts:
        med = statistics.median(lat[t])
        out["by_threads"][str(t)] = {"median_ms": med, "min_ms": min(lat[t]), "max_ms": max(lat[t]),
                                     "ratio": med / base if base else None,
                                     "note": notes.get(t)}
    out["same_answers"] = all(answers[t] == answers[counts[0]] for t in counts)
    return out
