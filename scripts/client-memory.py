#!/usr/bin/env python3
"""The sync client's peak memory against servers that would make it buffer: a check.

Runs `vecsync-cli sync` of a small tracked database against a server on 127.0.0.1 that
answers every request with a body that never ends, one case at a time:

1. `200` with no length, then 1 MiB blocks until the client goes;
2. `Content-Length: 9223372036854775807`, then the same blocks;
3. `Transfer-Encoding: chunked` with one chunk of 0x7fffffffffffffff bytes, then the blocks.

The client samples nothing itself: this script reads its VmRSS every 50 ms. Each case fails
when the sync exits 0 (it must report the server), takes longer than --seconds (retries
included), or its resident memory passes --limit-mib: answers are capped before they are
buffered (16 MiB for JSON), so the client holds one capped answer at a time, never the stream.

  scripts/client-memory.py --cli .build/debug/vecsync-cli
"""
import argparse
import importlib.util
import os
import socket
import socketserver
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCK = b"x" * (1 << 20)
HEADS = {
    "endless body": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n",
    "Content-Length 2^63-1": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 9223372036854775807\r\n\r\n",
    "chunk of 0x7fffffffffffffff": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                   b"Transfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n",
}


class LyingHandler(socketserver.BaseRequestHandler):
    """Reads a request's head, answers with the server's head, then streams until the client goes."""

    def handle(self):
        self.request.settimeout(30)
        head = b""
        try:
            while b"\r\n\r\n" not in head:
                data = self.request.recv(65536)
                if not data:
                    return
                head += data
            self.request.sendall(self.server.head)
            while not self.server.stopping:
                self.request.sendall(BLOCK)
        except OSError:
            return


class LyingServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, head):
        super().__init__(("127.0.0.1", 0), LyingHandler)
        self.head, self.stopping = head, False


def load_server_memory():
    """scripts/server-memory.py as a module: its way of reading a process's VmRSS."""
    spec = importlib.util.spec_from_file_location("server_memory", os.path.join(HERE, "server-memory.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SERVER_MEMORY = load_server_memory()


def rss_bytes(pid):
    """VmRSS of `pid`; 0 once it has ended."""
    try:
        return SERVER_MEMORY.rss_bytes(pid)
    except OSError:
        return 0


def tracked_database(cli, folder):
    """A database with a few notes, tracked for sync."""
    database = os.path.join(folder, "client.db")
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)")
        connection.executemany("INSERT INTO notes VALUES (?, ?)", [(f"n{i}", "x" * 100) for i in range(10)])
    connection.close()
    subprocess.run([cli, "track", "--db", database, "--table", "notes", "--site", "memory-check"],
                   check=True, stdout=subprocess.DEVNULL)
    return database


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True, help="the vecsync-cli executable")
    parser.add_argument("--seconds", type=float, default=120, help="the longest a sync may take, retries included")
    parser.add_argument("--limit-mib", type=int, default=160, help="the most the client may hold resident")
    args = parser.parse_args()

    failures = []
    with tempfile.TemporaryDirectory(prefix="vecsync-client-memory-") as folder:
        database = tracked_database(args.cli, folder)
        for name, head in HEADS.items():
            server = LyingServer(head)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            port = server.server_address[1]
            environment = dict(os.environ, VECSYNC_TOKEN="vst_" + "0" * 64)
            started = time.monotonic()
            process = subprocess.Popen(
                [args.cli, "sync", "--db", database, "--server", f"http://127.0.0.1:{port}", "--space", "memory",
                 "--no-progress"],
                env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            peak = 0
            while process.poll() is None and time.monotonic() - started < args.seconds:
                peak = max(peak, rss_bytes(process.pid))
                time.sleep(0.05)
            if process.poll() is None:
                process.kill()
                failures.append(f"{name}: still running after {args.seconds:.0f} s")
            stderr = process.communicate()[1]
            elapsed = time.monotonic() - started
            server.stopping = True
            server.shutdown()
            server.server_close()
            last = (stderr.strip().splitlines() or ["(nothing on standard error)"])[-1]
            print(f"{name}: exit {process.returncode} after {elapsed:.1f} s, peak {peak / 2**20:.0f} MiB resident; "
                  f"{last[:160]}")
            if process.returncode == 0:
                failures.append(f"{name}: the sync exited 0")
            if peak > args.limit_mib << 20:
                failures.append(f"{name}: peak {peak / 2**20:.0f} MiB > {args.limit_mib} MiB")
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
