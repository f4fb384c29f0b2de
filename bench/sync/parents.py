#!/usr/bin/env python3
"""Parent-order benchmark: a first sync of DriveIndex's shape, its child table tracked first.

Usage (from the repository root, after `swift build -c release --product vecsync-cli`):

    python3 bench/sync/parents.py                          # 1,200 and 8,000 files
    python3 bench/sync/parents.py --files 57000 --build .build/debug
    python3 bench/sync/parents.py --files 1200 --cli old-vecsync-cli --cpu-limit 300

DriveIndex keeps `files` (an INTEGER PRIMARY KEY, a foreign key to `drives`) and `drives`
(3 rows) and tracks `files` before `drives`, so the rows already there are numbered files
first. The Mac publishes its tables to a shared folder (`vecsync-cli sync`), then an empty
phone, tracking the tables in the same order, pulls them; both track with `--authority mac`
(integer keys). The same is measured with the tables tracked parents first.

Measured for each order: the CPU seconds (user + system) of the phone's `vecsync-cli sync`,
the rows in `files` afterwards, the rows left in quarantine, and the ratio of the two
orders. Bar: children first <= 1.3 x parents first. `--cpu-limit` stops a sync that runs
past that many seconds (reported as such): the engine before parent ordering took minutes.
"""
import argparse
import os
import random
import sqlite3

from benchkit import add_build_arguments, built_tools, count, machine, run, scratch, timed_sync

SCHEMA = """
CREATE TABLE drives (
  uuid TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  last_seen REAL,
  total_capacity INTEGER,
  last_scan_date REAL,
  file_count INTEGER);
CREATE TABLE files (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  drive_uuid TEXT NOT NULL REFERENCES drives(uuid) ON DELETE CASCADE,
  name TEXT NOT NULL,
  relative_path TEXT NOT NULL,
  size INTEGER,
  created_at REAL,
  modified_at REAL,
  is_directory INTEGER NOT NULL DEFAULT 0);
CREATE INDEX idx_files_drive ON files(drive_uuid);
"""

DRIVES = ["7d3c1f62-0b6e-4c55-9a57-0f6f8c1d2e01", "a1f0e9d8-3c2b-4a19-8e7f-6d5c4b3a2910",
          "c0ffee00-1234-4abc-8def-0123456789ab"]


def make_db(path, files, rnd):
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    con.executescript(SCHEMA)
    if files:
        con.executemany("INSERT INTO drives VALUES (?, ?, ?, ?, ?, ?)",
                        [(uuid, f"Drive {i}", 1.7e9, 1 << 40, 1.7e9, files // 3) for i, uuid in enumerate(DRIVES)])
        kinds = ["pdf", "jpeg", "docx", "txt", "png", "mov"]
        con.executemany(
            "INSERT INTO files (drive_uuid, name, relative_path, size, created_at, modified_at, is_directory) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            ((DRIVES[i % 3], f"document {i}.{kinds[i % 6]}", f"Work/{i % 97:02d}/document {i}.{kinds[i % 6]}",
              rnd.randint(1, 1 << 30), 1.6e9 + i, 1.7e9 + i * 13.5, int(i % 50 == 0)) for i in range(files)))
    con.commit()
    con.close()


def track(cli, path, site, order):
    run([cli, "track", "--db", path, "--site", site, "--authority", "mac"]
        + [arg for table in order for arg in ("--table", table)])


def first_sync(cli, work, files, order, cpu_limit, seed):
    name = "-".join(order)
    mac, phone = os.path.join(work, f"mac-{name}.db"), os.path.join(work, f"phone-{name}.db")
    folder = os.path.join(work, f"folder-{name}")
    make_db(mac, files, random.Random(seed))
    make_db(phone, 0, None)
    track(cli, mac, "mac", order)
    track(cli, phone, "phone", order)
    run([cli, "sync", "--db", mac, "--folder", folder, "--no-progress"])
    cpu, wall, output = timed_sync(cli, phone, folder, cpu_limit)
    kept = count(phone, "SELECT count(*) FROM files")
    waiting = count(phone, "SELECT count(*) FROM vecsync_quarantine")
    quarantined_lines = output.count("quarantined:")
    return cpu, wall, kept, waiting, quarantined_lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, action="append", help="files on the Mac (repeat; default 1200 and 8000)")
    add_build_arguments(parser)
    parser.add_argument("--cpu-limit", type=int, default=0, help="stop a sync after this many CPU seconds")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    cli = built_tools(args)
    print(f"machine: {machine()}; cli: {cli}")
    for files in args.files or [1200, 8000]:
        with scratch("vecsync-parents-") as work:
            results = {}
            for order in (["files", "drives"], ["drives", "files"]):
                cpu, wall, kept, waiting, lines = first_sync(cli, work, files, order, args.cpu_limit, args.seed)
                results[order[0]] = cpu
                figure = f"{cpu:.2f} s CPU" if cpu is not None else f"> {args.cpu_limit} s CPU (stopped)"
                print(f"{files} files, tracked {' then '.join(order)}: {figure}, {wall:.2f} s wall; "
                      f"files kept {kept}/{files}, quarantine {waiting}, 'quarantined:' lines {lines}")
            if results["files"] is not None and results["drives"]:
                print(f"{files} files: children first / parents first = {results['files'] / results['drives']:.2f} "
                      f"(bar <= 1.3)")


if __name__ == "__main__":
    main()
