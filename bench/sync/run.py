#!/usr/bin/env python3
"""Sync benchmark: what capture, merge and change sets cost, against the bar of issue 6.

Usage (from the repository root, after `swift build -c release`):

    python3 bench/sync/run.py                      # 10,000 rows of 768-d embeddings
    python3 bench/sync/run.py --rows 2000 --build .build/release
    python3 bench/sync/run.py --only merge         # the merge and size measures alone

It measures, on the same data in the same run:

1. Capture: writing N photo rows into a table tracked by `vecsync-cli track`, against the
   same writes to an untracked table, one statement per row in one transaction, for each
   kind of write: insert, update of a text column, update of the embedding, delete. The
   triggers are plain SQL, so Python's sqlite3 module (no extension) drives both. Each
   kind runs three times on each side; the best time counts. Bar: tracked / untracked <= 2.
2. Merge: `vecsync-cli sync` pulling those N rows from a shared folder into a tracked,
   empty replica that has a vec0 index (merge + index refresh + reading the files), against
   bulk-inserting the same rows into an untracked table and filling the same vec0 index in
   the sqlite3 shell; best of three fresh receivers on each side. Bar: merge / bulk insert <= 3.
3. Size: bytes of the change set files against the raw bytes of the values they carry.
   Bar: <= 1.2.

Prints one line per measure with the absolute figures, the ratio and the machine.
"""
import argparse
import os
import random
import sqlite3
import struct
import time

from benchkit import add_build_arguments, built_tools, index_registry_sql, machine, run, scratch, vec0_index_sql

SCHEMA = """
CREATE TABLE photos (
  id TEXT PRIMARY KEY,
  title TEXT,
  taken REAL,
  rating INTEGER,
  embedding F32_BLOB({dims}))
"""


def rows(count, dims, seed=1):
    rnd = random.Random(seed)
    for index in range(count):
        vector = struct.pack(f"<{dims}f", *(rnd.uniform(-1, 1) for _ in range(dims)))
        yield (f"photo-{index:06d}", f"title {index}", index / 3.0, index % 5, vector)


def make_db(path, dims):
    con = sqlite3.connect(path)
    # WAL, as vecsync-cli (GRDB's DatabasePool) leaves a database: both sides of every
    # comparison use the same journal mode.
    con.execute("PRAGMA journal_mode = WAL")
    con.executescript(SCHEMA.format(dims=dims))
    con.commit()
    con.close()




def timed_writes(path, sql, arguments):
    con = sqlite3.connect(path, isolation_level=None)
    start = time.perf_counter()
    con.execute("BEGIN")
    con.executemany(sql, arguments)
    con.execute("COMMIT")
    elapsed = time.perf_counter() - start
    con.close()
    return elapsed


def capture_workload(data):
    """The writes of the capture measure, in order: each leaves the table as the next expects."""
    count = len(data)
    return [
        ("insert", "INSERT INTO photos VALUES (?, ?, ?, ?, ?)", data),
        ("update title", "UPDATE photos SET title = ? WHERE id = ?", [(f"renamed {i}", r[0]) for i, r in enumerate(data)]),
        ("update embedding", "UPDATE photos SET embedding = ? WHERE id = ?",
         [(data[(i + 1) % count][4], r[0]) for i, r in enumerate(data)]),
        ("delete", "DELETE FROM photos WHERE id = ?", [(r[0],) for r in data]),
    ]


def capture_seconds(cli, work, dims, data, tracked):
    """Best of three runs of each kind of write, on a fresh database each run."""
    best = {}
    for attempt in range(3):
        path = os.path.join(work, f"capture-{'tracked' if tracked else 'plain'}-{attempt}.db")
        make_db(path, dims)
        if tracked:
            run([cli, "track", "--db", path, "--table", "photos", "--site", "writer"])
        for name, sql, arguments in capture_workload(data):
            elapsed = timed_writes(path, sql, arguments)
            best[name] = min(best.get(name, elapsed), elapsed)
    return best


def shell_seconds(sqlite3_shell, extension, path, sql):
    """Runs `sql` in the sqlite3 shell with the extension and returns the wall time."""
    script = f".load {extension}\n{sql}\n"
    start = time.perf_counter()
    run([sqlite3_shell, "-batch", "-bail", path], input=script)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--dims", type=int, default=768)
    add_build_arguments(parser, extension=True)
    parser.add_argument("--only", choices=["capture", "merge"],
                        help="run one measure (merge includes the size of the files it merges)")
    args = parser.parse_args()

    cli, extension = built_tools(args, extension=True)

    data = list(rows(args.rows, args.dims))
    raw_bytes = sum(len(r[0]) + len(r[1]) + 8 + 8 + len(r[4]) for r in data)
    with scratch("vecsync-sync-bench-") as work:
        # 1. Capture cost, for each kind of write.
        capture_plain, capture_tracked = {}, {}
        if args.only in (None, "capture"):
            capture_plain = capture_seconds(cli, work, args.dims, data, tracked=False)
            capture_tracked = capture_seconds(cli, work, args.dims, data, tracked=True)
        print(f"machine: {machine()}; {args.rows} rows of {args.dims}-d embeddings; "
              f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for name in capture_plain:
            t, u = capture_tracked[name], capture_plain[name]
            print(f"capture {name + ':':17s} tracked {t:.3f} s, untracked {u:.3f} s, ratio {t / u:.2f} (bar 2)")
        if args.only == "capture":
            return

        # The rows the merge measures: inserted into a tracked and an untracked table.
        plain, tracked = os.path.join(work, "plain.db"), os.path.join(work, "tracked.db")
        make_db(plain, args.dims)
        make_db(tracked, args.dims)
        run([cli, "track", "--db", tracked, "--table", "photos", "--site", "writer"])
        timed_writes(plain, "INSERT INTO photos VALUES (?, ?, ?, ?, ?)", data)
        timed_writes(tracked, "INSERT INTO photos VALUES (?, ?, ?, ?, ?)", data)

        # 2. Merge cost, index refresh included.
        folder = os.path.join(work, "shared")
        run([cli, "sync", "--db", tracked, "--folder", folder])
        index_sql = vec0_index_sql("photos_vec", args.dims)
        registry = index_registry_sql("photos_vec", "photos", args.dims)
        merge_s = bulk_s = float("inf")
        for attempt in range(3):
            receiver = os.path.join(work, f"receiver-{attempt}.db")
            make_db(receiver, args.dims)
            run([cli, "track", "--db", receiver, "--table", "photos", "--site", "receiver"])
            shell_seconds(args.sqlite3, extension, receiver, index_sql + registry)
            start = time.perf_counter()
            summary = run([cli, "sync", "--db", receiver, "--folder", folder]).strip().splitlines()[0]
            merge_s = min(merge_s, time.perf_counter() - start)
            indexed = int(run([args.sqlite3, "-batch", receiver], input=f".load {extension}\nSELECT count(*) FROM photos_vec;\n").split()[-1])
            if indexed != args.rows:
                raise SystemExit(f"the merge left {indexed} rows in photos_vec, expected {args.rows}")

            baseline = os.path.join(work, f"baseline-{attempt}.db")
            make_db(baseline, args.dims)
            shell_seconds(args.sqlite3, extension, baseline, index_sql)
            bulk_s = min(bulk_s, shell_seconds(args.sqlite3, extension, baseline, f"""
                ATTACH '{plain}' AS src;
                BEGIN;
                INSERT INTO photos SELECT * FROM src.photos;
                INSERT INTO photos_vec (id, embedding) SELECT id, embedding FROM photos;
                COMMIT;"""))

        # 3. Size.
        files = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(folder, "writer")) for f in fs]
        file_bytes = sum(os.path.getsize(f) for f in files)

        print(f"merge:   vecsync-cli sync {merge_s:.3f} s (process, files, merge, vec0 refresh), "
              f"bulk insert + vec0 fill {bulk_s:.3f} s (sqlite3 shell), ratio {merge_s / bulk_s:.2f} (bar 3)")
        print(f"         {summary}")
        print(f"size:    {file_bytes} bytes in {len(files)} files for {raw_bytes} raw bytes, ratio {file_bytes / raw_bytes:.3f} (bar 1.2)")


if __name__ == "__main__":
    main()
