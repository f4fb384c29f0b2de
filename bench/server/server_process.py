"""What the server benchmarks share: a vecsync-server on a fresh SQLite store with one space
and a token, serving on a free loopback port, stopped and removed afterwards."""
import contextlib
import hashlib
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading


def new_store(server, space):
    """A fresh SQLite store in a temporary folder with space `space`: (folder, the `--data`
    arguments, a token of the space)."""
    data = tempfile.mkdtemp(prefix=f"vecsync-{space}-")
    store = ["--data", data]
    subprocess.run([server, "space", "create", space, *store], check=True, stdout=subprocess.DEVNULL)
    token = subprocess.run([server, "token", "issue", "--space", space, *store], check=True,
                           capture_output=True, text=True).stdout.split()[-1]
    return data, store, token


def store_change_set(data, space, body):
    """Writes `body` into the SQLite store in folder `data` as change set 1 of space `space`,
    with its true SHA-256, directly (the server never parses a body it serves)."""
    with sqlite3.connect(os.path.join(data, "vecsync-server.sqlite")) as db:
        space_id = db.execute("SELECT id FROM spaces WHERE name = ?", (space,)).fetchone()[0]
        db.execute("INSERT INTO change_sets (space_id, seq, origin, since, through, rows, size, sha256, received_at,"
                   " body) VALUES (?, 1, ?, 0, 1, 1, ?, ?, 0, ?)",
                   (space_id, space, len(body), hashlib.sha256(body).hexdigest(), body))
        db.execute("UPDATE spaces SET last_seq = 1 WHERE id = ?", (space_id,))


@contextlib.contextmanager
def serving(server, arguments, data, **popen):
    """`vecsync-server serve --port 0 ARGUMENTS…` for the length of a `with` block, which gets
    (the process, its port); afterwards SIGTERM, up to 30 s to exit, and the store's folder
    `data` removed, whatever happened (also when the server did not start)."""
    try:
        process = subprocess.Popen([server, "serve", "--port", "0", *arguments], stdout=subprocess.PIPE, text=True,
                                   **popen)
        try:
            port = int(re.search(r":(\d+) ", process.stdout.readline()).group(1))
            # The rest of its output (the access log) is read and dropped: a full pipe would
            # stop the server at its next line.
            threading.Thread(target=process.stdout.read, daemon=True).start()
            yield process, port
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    finally:
        shutil.rmtree(data, ignore_errors=True)
