#!/usr/bin/env python3
"""Choir on two devices, as the app ships its schema: every history row of both, k0 adding up.

Usage (from the repository root, after `make extension` and
`swift build -c release --product vecsync-cli`):

    python3 bench/sync/choir.py
    python3 bench/sync/choir.py --approvals 6,10 --build .build/debug

Both databases get the schema of `sql/choir.sql` as it is (the part before
`-- End of the schema.`, through the sqlite3 shell with the extension loaded:
`parameter_history` keeps its `INTEGER PRIMARY KEY AUTOINCREMENT`). Both track users,
messages and parameter_history plainly and threads with `--counter k0 --counter alpha
--counter m`. The Mac creates a thread (k0 1.0, alpha 0.5, m 1.0) and one message per
approval; both sync through a folder. Then, offline, the Mac approves the first A messages
and the phone the next B, each approval written as MessageStore writes it (the thread's
parameters moved by +0.05, +0.02 and -0.01, a parameter_history row); both sync, the
phone twice, then `sync --until-quiet` on both.

Prints, per device: the thread's k0, alpha and m (expected 1.0 + 0.05 (A + B), ...), the
parameter_history rows (expected 1 + A + B, from both devices), and the wall time of the
syncs. Exits 1 when a device misses a row or a parameter is off.
"""
import argparse
import os
import sqlite3
import subprocess
import time

from benchkit import add_build_arguments, built_tools, run, scratch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def schema_sql():
    text = open(os.path.join(ROOT, "sql", "choir.sql")).read()
    body = text.split("-- End of the schema.")[0]
    return "\n".join(line for line in body.splitlines() if not line.startswith("."))


def shell(path, extension, sql):
    result = subprocess.run(["sqlite3", path, "-cmd", f".load {extension}"], input=sql, capture_output=True,
                            text=True)
    if result.returncode != 0 or "Error" in result.stderr:
        raise SystemExit(f"sqlite3 {path} failed:\n{result.stderr}")


def connect(path, extension):
    """A connection with the extension loaded (messages has a libsql_vector_idx index)."""
    con = sqlite3.connect(path)
    con.enable_load_extension(True)
    con.load_extension(extension)
    return con


def approve(path, extension, messages, start):
    """Approvals as MessageStore.setApprovalStatus writes them, one transaction each."""
    con = connect(path, extension)
    for index, message in enumerate(messages):
        now = start + index
        with con:
            con.execute("UPDATE messages SET approval_status = 'approved' WHERE id = ?", (message,))
            con.execute("UPDATE threads SET k0 = k0 + 0.05, alpha = alpha + 0.02, m = m - 0.01, updated_at = ?"
                        " WHERE id = 't1'", (now,))
            con.execute("INSERT INTO parameter_history (thread_id, timestamp, k0, alpha, m, event_type)"
                        " SELECT id, ?, k0, alpha, m, 'message_approved' FROM threads WHERE id = 't1'", (now,))
    con.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--approvals", default="6,10", help="approvals on the Mac and on the phone (default 6,10)")
    add_build_arguments(parser)
    parser.add_argument("--extension", default=".build/libvecsync.so")
    args = parser.parse_args()
    on_mac, on_phone = (int(n) for n in args.approvals.split(","))
    cli = built_tools(args)
    extension = os.path.splitext(args.extension)[0]
    with scratch("choir-bench-") as work:
        folder = os.path.join(work, "shared")
        paths = {site: os.path.join(work, f"{site}.db") for site in ("mac", "phone")}
        for site, path in paths.items():
            shell(path, extension, schema_sql())
            run([cli, "track", "--db", path, "--site", site, "--table", "users", "--table", "messages",
                 "--table", "parameter_history"])
            run([cli, "track", "--db", path, "--table", "threads", "--counter", "k0", "--counter", "alpha",
                 "--counter", "m"])
        total = on_mac + on_phone
        con = connect(paths["mac"], extension)
        with con:
            con.execute("INSERT INTO users (id, name) VALUES ('u1', 'Ada')")
            con.execute("INSERT INTO threads (id, title, created_at, updated_at, k0, alpha, m)"
                        " VALUES ('t1', 'choir', 0, 0, 1.0, 0.5, 1.0)")
            con.execute("INSERT INTO parameter_history (thread_id, timestamp, k0, alpha, m, event_type)"
                        " VALUES ('t1', 0, 1.0, 0.5, 1.0, 'thread_creation')")
            con.executemany("INSERT INTO messages (id, thread_id, user_id, content, phase, created_at)"
                            " VALUES (?, 't1', 'u1', ?, 'action', 0)",
                            ((f"m{i}", f"message {i}") for i in range(total)))
        con.close()
        started = time.perf_counter()
        run([cli, "sync", "--db", paths["mac"], "--folder", folder])
        run([cli, "sync", "--db", paths["phone"], "--folder", folder])
        # Offline: the Mac approves the first messages, the phone the others.
        approve(paths["mac"], extension, [f"m{i}" for i in range(on_mac)], 1000)
        approve(paths["phone"], extension, [f"m{i}" for i in range(on_mac, total)], 2000)
        for site in ("mac", "phone", "mac"):
            run([cli, "sync", "--db", paths[site], "--folder", folder])
        quiet = {site: run([cli, "sync", "--db", paths[site], "--folder", folder, "--until-quiet"]).strip().splitlines()[-1]
                 for site in ("phone", "mac")}
        seconds = time.perf_counter() - started
        expected = {"k0": 1.0 + 0.05 * total, "alpha": 0.5 + 0.02 * total, "m": 1.0 - 0.01 * total}
        failed = False
        print(f"Choir on two devices: {on_mac} approvals on the Mac and {on_phone} on the phone, offline; "
              f"syncs {seconds:.2f} s in all ({args.build})")
        for site, path in paths.items():
            con = connect(path, extension)
            k0, alpha, m = con.execute("SELECT k0, alpha, m FROM threads WHERE id = 't1'").fetchone()
            rows = con.execute("SELECT count(*) FROM parameter_history WHERE thread_id = 't1'").fetchone()[0]
            approved = con.execute("SELECT count(*) FROM parameter_history WHERE event_type = 'message_approved'").fetchone()[0]
            con.close()
            good = (rows == 1 + total and approved == total
                    and all(abs(v - expected[name]) < 1e-9 for name, v in (("k0", k0), ("alpha", alpha), ("m", m))))
            failed |= not good
            print(f"  {site}: k0 {k0:.4f} (expected {expected['k0']:.4f}), alpha {alpha:.4f}, m {m:.4f}; "
                  f"parameter_history {rows} rows ({approved} approvals; expected {1 + total}); {quiet[site]}"
                  + ("" if good else "  <- WRONG"))
        raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
