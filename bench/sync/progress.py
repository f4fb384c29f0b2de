#!/usr/bin/env python3
"""Progressive-sync benchmark: a first sync killed and resumed, the bytes that settle two
devices after a small edit, and the memory of a first sync.

Usage (from the repository root, after `swift build -c release --product vecsync-cli` and
`swift build -c release --product vecsync`, which `make bench` runs):

    python3 bench/sync/progress.py                         # the three measures, seed 1
    python3 bench/sync/progress.py --seed 7 --drive-rows 20000

It measures, with the release `vecsync-cli`, on data made from the seed:

1. Kill and resume: a DriveIndex-like table (path, name, size, modified, kind, a 256-d
   embedding; 57,000 rows) published to a shared folder, then pulled by an empty tracked
   replica with a vec0 index through `vecsync-cli sync --events`. The process is killed
   (SIGKILL) at a random moment of the pull, chosen from the seed between 10% and 90% of
   an uninterrupted pull's time. Measured: the rows the database holds after the kill
   against the rows the sync had reported merged before it, and the vec0 index against the
   table; then a second sync finishes, and must apply exactly the rows the first one did
   not keep. Bar: kept / reported merged >= 0.9; the resumed sync finishes.
2. Settle: two replicas holding the same rows; one edits 1% of them (a new embedding and a
   new modification time), then both sync until a further sync moves nothing. Measured:
   the change set bytes written to the folder while settling, against the bytes of the
   edited values (keys, embeddings, times). Bar: <= 1.2.
3. Phone budget: a first sync of 10,000 rows of 768-d embeddings into a replica with a vec0
   index; peak resident memory of the `vecsync-cli sync` process (getrusage). Bar: <= 100 MB.

Prints one line per measure with the absolute figures, the bar and the machine.
"""
import argparse
import os
import random
import resource
import signal
import sqlite3
import struct
import subprocess
import time

from benchkit import (add_build_arguments, built_tools, count, folder_bytes, index_registry_sql, machine, run,
                      scratch, vec0_index_sql)

DRIVE_SCHEMA = """
CREATE TABLE drive_index (
  id TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  name TEXT NOT NULL,
  size INTEGER,
  modified REAL,
  kind TEXT,
  embedding F32_BLOB({dims}))
"""
DRIVE_ROWS = "SELECT count(*) FROM drive_index"


def drive_rows(count, dims, rnd):
    kinds = ["pdf", "jpeg", "docx", "txt", "png", "mov"]
    for index in range(count):
        vector = struct.pack(f"<{dims}f", *(rnd.uniform(-1, 1) for _ in range(dims)))
        folder = f"/Drive/{rnd.choice(['Work', 'Home', 'Photos', 'Archive'])}/{index % 97:02d}"
        kind = kinds[index % len(kinds)]
        yield (f"file-{index:06d}", folder, f"document {index}.{kind}", rnd.randint(1, 1 << 30),
               1_700_000_000 + index * 13.5, kind, vector)




def make_db(path, dims, data=None):
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    con.executescript(DRIVE_SCHEMA.format(dims=dims))
    if data is not None:
        con.executemany("INSERT INTO drive_index VALUES (?, ?, ?, ?, ?, ?, ?)", data)
    con.commit()
    con.close()


def add_index(sqlite3_shell, extension, path, dims):
    """A vec0 index over the embeddings, registered with the engine, as an app has one."""
    sql = f".load {extension}\n{vec0_index_sql('drive_vec', dims)}\n{index_registry_sql('drive_vec', 'drive_index', dims)}\n"
    run([sqlite3_shell, "-batch", "-bail", path], input=sql)




def indexed(sqlite3_shell, extension, path):
    out = run([sqlite3_shell, "-batch", path], input=f".load {extension}\nSELECT count(*) FROM drive_vec;\n")
    return int(out.split()[-1])


def receiver(cli, sqlite3_shell, extension, path, dims):
    make_db(path, dims)
    run([cli, "track", "--db", path, "--table", "drive_index", "--site", "receiver"])
    add_index(sqlite3_shell, extension, path, dims)




def kill_and_resume(args, cli, extension, work, rnd):
    dims = args.drive_dims
    origin = os.path.join(work, "drive-origin.db")
    make_db(origin, dims, drive_rows(args.drive_rows, dims, rnd))
    run([cli, "track", "--db", origin, "--table", "drive_index", "--site", "origin"])
    folder = os.path.join(work, "drive-shared")
    run([cli, "sync", "--db", origin, "--folder", folder])

    # An uninterrupted pull, for its duration.
    whole = os.path.join(work, "drive-whole.db")
    receiver(cli, args.sqlite3, extension, whole, dims)
    start = time.perf_counter()
    run([cli, "sync", "--db", whole, "--folder", folder])
    whole_s = time.perf_counter() - start

    cut = os.path.join(work, "drive-cut.db")
    receiver(cli, args.sqlite3, extension, cut, dims)
    delay = whole_s * rnd.uniform(0.1, 0.9)
    process = subprocess.Popen([cli, "sync", "--db", cut, "--folder", folder, "--events"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    descriptor = process.stderr.fileno()
    os.set_blocking(descriptor, False)
    reported = 0
    buffer = b""

    def drain():
        nonlocal buffer
        while True:
            try:
                chunk = os.read(descriptor, 65536)
            except BlockingIOError:
                return
            if not chunk:
                return
            buffer += chunk

    deadline = time.perf_counter() + delay
    while time.perf_counter() < deadline and process.poll() is None:
        time.sleep(0.002)
        drain()
    process.send_signal(signal.SIGKILL)
    process.wait()
    drain()
    buffer = buffer.decode()
    for line in buffer.splitlines():
        # "merged 3 batches, 1200 rows, 480000 bytes of 960000"
        if line.startswith("merged "):
            reported = int(line.split(", ")[1].split()[0])
    kept = count(cut, DRIVE_ROWS)
    kept_index = indexed(args.sqlite3, extension, cut)
    start = time.perf_counter()
    summary = run([cli, "sync", "--db", cut, "--folder", folder]).splitlines()[0]
    resume_s = time.perf_counter() - start
    applied = int(summary.split(": ")[2].split(" applied")[0]) if " applied" in summary else -1
    final = count(cut, DRIVE_ROWS)
    final_index = indexed(args.sqlite3, extension, cut)
    return dict(rows=args.drive_rows, whole_s=whole_s, delay=delay, reported=reported, kept=kept,
                kept_index=kept_index, resume_s=resume_s, applied=applied, final=final, final_index=final_index)


def settle(args, cli, extension, work, rnd):
    dims = args.drive_dims
    rows = args.settle_rows
    data = list(drive_rows(rows, dims, rnd))
    a, b = os.path.join(work, "settle-a.db"), os.path.join(work, "settle-b.db")
    make_db(a, dims, data)
    run([cli, "track", "--db", a, "--table", "drive_index", "--site", "device-a"])
    make_db(b, dims)
    run([cli, "track", "--db", b, "--table", "drive_index", "--site", "device-b"])
    folder = os.path.join(work, "settle-shared")
    for db in (a, b, a, b):
        run([cli, "sync", "--db", db, "--folder", folder])
    before = folder_bytes(folder, ".vcs")
    edited = rnd.sample(range(rows), rows // 100)
    edits = []
    for index in edited:
        vector = struct.pack(f"<{dims}f", *(rnd.uniform(-1, 1) for _ in range(dims)))
        edits.append((vector, 1_800_000_000 + index * 0.5, data[index][0]))
    con = sqlite3.connect(a)
    con.executemany("UPDATE drive_index SET embedding = ?, modified = ? WHERE id = ?", edits)
    con.commit()
    con.close()
    edited_bytes = sum(len(vector) + 8 + len(key) for vector, _, key in edits)
    rounds = 0
    while True:
        moved_before = folder_bytes(folder, ".vcs")
        for db in (a, b):
            run([cli, "sync", "--db", db, "--folder", folder])
        rounds += 1
        if folder_bytes(folder, ".vcs") == moved_before or rounds > 5:
            break
    moved = folder_bytes(folder, ".vcs") - before
    con_a, con_b = sqlite3.connect(a), sqlite3.connect(b)
    same = (con_a.execute("SELECT id, embedding, modified FROM drive_index ORDER BY id").fetchall()
            == con_b.execute("SELECT id, embedding, modified FROM drive_index ORDER BY id").fetchall())
    con_a.close()
    con_b.close()
    return dict(rows=rows, edited=len(edits), edited_bytes=edited_bytes, moved=moved, rounds=rounds, same=same)


def phone_budget(args, cli, extension, work, rnd):
    rows, dims = args.phone_rows, args.phone_dims
    origin = os.path.join(work, "phone-origin.db")
    make_db(origin, dims, drive_rows(rows, dims, rnd))
    run([cli, "track", "--db", origin, "--table", "drive_index", "--site", "origin"])
    folder = os.path.join(work, "phone-shared")
    run([cli, "sync", "--db", origin, "--folder", folder])
    phone = os.path.join(work, "phone.db")
    receiver(cli, args.sqlite3, extension, phone, dims)
    # A child of its own, so getrusage's children maximum is this sync's alone.
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        start = time.perf_counter()
        result = subprocess.run([cli, "sync", "--db", phone, "--folder", folder], capture_output=True)
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        os.write(write_end, f"{result.returncode} {peak} {elapsed}".encode())
        os._exit(0)
    os.close(write_end)
    answer = b""
    while True:
        chunk = os.read(read_end, 4096)
        if not chunk:
            break
        answer += chunk
    os.waitpid(child, 0)
    code, peak_kb, elapsed = answer.decode().split()
    if code != "0":
        raise SystemExit("the phone-budget sync failed")
    return dict(rows=rows, dims=dims, peak_mb=int(peak_kb) / 1024, seconds=float(elapsed),
                synced=count(phone, DRIVE_ROWS), indexed=indexed(args.sqlite3, extension, phone))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--drive-rows", type=int, default=57_000)
    parser.add_argument("--drive-dims", type=int, default=256)
    parser.add_argument("--settle-rows", type=int, default=10_000)
    parser.add_argument("--phone-rows", type=int, default=10_000)
    parser.add_argument("--phone-dims", type=int, default=768)
    add_build_arguments(parser, extension=True)
    parser.add_argument("--only", choices=["kill", "settle", "phone"], help="run one measure")
    args = parser.parse_args()
    cli, extension = built_tools(args, extension=True)
    rnd = random.Random(args.seed)
    print(f"machine: {machine()}; seed {args.seed}")
    with scratch("vecsync-progress-bench-") as work:
        if args.only in (None, "kill"):
            k = kill_and_resume(args, cli, extension, work, rnd)
            share = k["kept"] / k["reported"] if k["reported"] else float("nan")
            print(f"kill:    {k['rows']} rows, uninterrupted pull {k['whole_s']:.2f} s; killed after {k['delay']:.2f} s "
                  f"with {k['reported']} rows reported merged; kept {k['kept']} rows (vec0 {k['kept_index']}), "
                  f"{share:.3f} of reported (bar 0.9)")
            print(f"         resumed in {k['resume_s']:.2f} s: applied {k['applied']} "
                  f"(expected {k['rows'] - k['kept']}); {k['final']} rows, vec0 {k['final_index']}")
        if args.only in (None, "settle"):
            s = settle(args, cli, extension, work, rnd)
            print(f"settle:  {s['rows']} rows, {s['edited']} edited ({s['edited_bytes']} bytes of keys, embeddings, times); "
                  f"{s['moved']} change set bytes in {s['rounds']} rounds, ratio {s['moved'] / s['edited_bytes']:.3f} "
                  f"(bar 1.2); converged: {s['same']}")
        if args.only in (None, "phone"):
            p = phone_budget(args, cli, extension, work, rnd)
            print(f"phone:   first sync of {p['rows']} x {p['dims']}: peak RSS {p['peak_mb']:.1f} MB (bar 100), "
                  f"{p['seconds']:.2f} s; {p['synced']} rows, vec0 {p['indexed']}")


if __name__ == "__main__":
    main()
