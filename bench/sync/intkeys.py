#!/usr/bin/env python3
"""Integer-key benchmark: what ids local to each replica cost a first sync.

Usage (from the repository root, after `swift build -c release --product vecsync-cli`):

    python3 bench/sync/intkeys.py                     # 10,000 users and 10,000 posts
    python3 bench/sync/intkeys.py --rows 2000 --build .build/debug

The Mac holds `users(id INTEGER PRIMARY KEY, …)` and `posts(id INTEGER PRIMARY KEY
AUTOINCREMENT, user_id REFERENCES users(id), …)`, N rows each, and publishes them to a
shared folder (`vecsync-cli sync`); then the phone pulls them. Measured the same way for:

- `authority`: both track with `--authority mac`, ids the same everywhere (no translation);
- `local`: both track without an authority, ids local to each replica: keys and the posts'
  `user_id` travel as identities and the phone translates them (`vecsync_ids`);
- `local, phone has rows`: the same, the phone holding N/10 users and posts of its own first,
  so every id it gives the Mac's rows differs from the Mac's.

For each: the CPU seconds (user + system) and wall time of the phone's sync (best of three),
whether every post points at its own user there, the rows of `vecsync_ids` and its bytes
(dbstat: table and index), and the change set files' bytes.
"""
import argparse
import os
import sqlite3

from benchkit import add_build_arguments, built_tools, count, folder_bytes, machine, run, scratch, timed_sync

SCHEMA = """
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);
CREATE TABLE posts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER REFERENCES users(id),
  title TEXT NOT NULL);
"""


def make_db(path, rows, prefix):
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    con.executescript(SCHEMA)
    con.executemany("INSERT INTO users (id, name, email) VALUES (?, ?, ?)",
                    ((i, f"{prefix} user {i}", f"{prefix}{i}@example.com") for i in range(1, rows + 1)))
    con.executemany("INSERT INTO posts (user_id, title) VALUES (?, ?)",
                    ((i, f"{prefix} user {i}") for i in range(1, rows + 1)))
    con.commit()
    con.close()


def map_bytes(path):
    con = sqlite3.connect(path)
    try:
        return con.execute(
            "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN ('vecsync_ids', 'vecsync_ids_identity')"
        ).fetchone()[0]
    except sqlite3.OperationalError:
        return None  # SQLite built without dbstat
    finally:
        con.close()


def first_sync(cli, work, rows, mode):
    name = mode.replace(" ", "-").replace(",", "")
    mac, phone = os.path.join(work, f"mac-{name}.db"), os.path.join(work, f"phone-{name}.db")
    folder = os.path.join(work, f"folder-{name}")
    make_db(mac, rows, "mac")
    make_db(phone, rows // 10 if mode == "local, phone has rows" else 0, "phone")
    authority = ["--authority", "mac"] if mode == "authority" else []
    for path, site in ((mac, "mac"), (phone, "phone")):
        run([cli, "track", "--db", path, "--site", site, "--table", "users", "--table", "posts"] + authority)
    run([cli, "sync", "--db", mac, "--folder", folder, "--no-progress"])
    cpu, wall, _ = timed_sync(cli, phone, folder)
    users = count(phone, "SELECT count(*) FROM users WHERE name LIKE 'mac %'")
    linked = count(phone, "SELECT count(*) FROM posts AS p JOIN users AS u ON u.id = p.user_id "
                          "WHERE u.name = p.title AND p.title LIKE 'mac %'")
    moved = count(phone, "SELECT count(*) FROM users WHERE name LIKE 'mac %' "
                         "AND id <> CAST(substr(name, 10) AS INTEGER)")
    mapped = count(phone, "SELECT count(*) FROM vecsync_ids") if mode != "authority" else 0
    return cpu, wall, users, linked, moved, mapped, map_bytes(phone), folder_bytes(folder)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000, help="users (and posts) on the Mac")
    add_build_arguments(parser)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cli = built_tools(args)
    print(f"machine: {machine()}; cli: {cli}; {args.rows} users + {args.rows} posts")
    best = {}
    for mode in ("authority", "local", "local, phone has rows"):
        for _ in range(args.repeat):
            with scratch("vecsync-intkeys-") as work:
                result = first_sync(cli, work, args.rows, mode)
            if mode not in best or result[0] < best[mode][0]:
                best[mode] = result
        cpu, wall, users, linked, moved, mapped, size, files = best[mode]
        print(f"{mode}: {cpu:.2f} s CPU, {wall:.2f} s wall; users {users}/{args.rows}, posts with their user "
              f"{linked}/{args.rows}, ids differing from the Mac's {moved}; vecsync_ids {mapped} rows, "
              f"{size if size is not None else '?'} bytes; change set files {files} bytes")
    base = best["authority"][0]
    for mode in ("local", "local, phone has rows"):
        print(f"{mode} / authority: {best[mode][0] / base:.2f} CPU")


if __name__ == "__main__":
    main()
