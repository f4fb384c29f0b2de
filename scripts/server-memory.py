#!/usr/bin/env python3
"""The server's peak memory under clients that would make it buffer: a check, not a benchmark.

Starts the given vecsync-server on a fresh SQLite store holding one change set of
--download-mib MiB (written into the store file directly, with its true SHA-256), takes its
resident memory (VmRSS) once it has served that change set whole once, then:

1. downloads: --downloads connections ask for the change set at once and never read a byte;
2. uploads: --uploads connections each push --upload-mib MiB (a body whose SHA-256 is wrong,
   sent as fast as the server reads it) beside --budget-mib of body budget;

and samples VmRSS every 50 ms while each runs. Fails (exit 1) when the peak passes the
memory at the start by more than --limit-mib: buffering every download whole would take
downloads x download-mib, every body whole uploads x upload-mib. Only 127.0.0.1 is used.
(The change set is hashed whole once, on its first download; the later ones are hashed as
they stream, only the bytes their clients take.)

  scripts/server-memory.py --server .build/debug/vecsync-server
"""
import argparse
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "server"))
import server_process  # noqa: E402


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid):
    """User and system CPU time of `pid` so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class PeakSampler:
    """VmRSS of `pid` every 50 ms until stopped: its largest value."""

    def __init__(self, pid):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_bytes(self.pid))
            time.sleep(0.05)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak


def request_head(method, path, token, extra=""):
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n{extra}\r\n").encode()


def read_whole_answer(port, head, timeout=60):
    """Sends `head`, reads the whole answer (until the server closes or Content-Length is
    met); returns its status."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(head)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        head_end = data.index(b"\r\n\r\n") + 4
        length = 0
        for line in data[:head_end].decode("latin-1").split("\r\n"):
            if line.lower().startswith("content-length:"):
                length = int(line.split(":", 1)[1])
        received = len(data) - head_end
        while received < length:
            chunk = conn.recv(1 << 20)
            if not chunk:
                break
            received += len(chunk)
        return int(data.split(b" ", 2)[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--download-mib", type=int, default=16)
    parser.add_argument("--upload-mib", type=int, default=64)
    parser.add_argument("--downloads", type=int, default=40)
    parser.add_argument("--uploads", type=int, default=8)
    parser.add_argument("--budget-mib", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=4.0, help="how long each case holds its connections")
    parser.add_argument("--limit-mib", type=int, default=320)
    args = parser.parse_args()

    data, store, token = server_process.new_store(args.server, "memory")
    server_process.store_change_set(data, "memory", os.urandom(args.download_mib << 20))
    # Every download streams (one token may have 16 in flight by default; the others would get 429).
    serve = ["--rate", "0", "--body-budget-mib", str(args.budget_mib), "--max-body-mib", str(args.upload_mib + 1),
             "--downloads-per-token", str(args.downloads), *store]
    failures = []
    with server_process.serving(args.server, serve, data, stderr=subprocess.DEVNULL) as (process, port):
        download = request_head("GET", "/v1/spaces/memory/changesets/1", token)
        assert read_whole_answer(port, download) == 200
        start = rss_bytes(process.pid)
        print(f"server at the start (one {args.download_mib} MiB download served): {start / 2**20:.0f} MiB resident")

        # 1. Downloads nobody reads.
        cpu = cpu_seconds(process.pid)
        sampler = PeakSampler(process.pid)
        held = []
        for _ in range(args.downloads):
            conn = socket.create_connection(("127.0.0.1", port), timeout=30)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            conn.sendall(download)
            held.append(conn)
        time.sleep(args.seconds)
        peak = sampler.stop()
        for conn in held:
            conn.close()
        time.sleep(1)
        growth = (peak - start) / 2**20
        print(f"{args.downloads} unread downloads of {args.download_mib} MiB: peak {peak / 2**20:.0f} MiB resident, "
              f"{growth:+.0f} MiB (whole: {args.downloads * args.download_mib} MiB); "
              f"{cpu_seconds(process.pid) - cpu:.1f} s of server CPU")
        if growth > args.limit_mib:
            failures.append(f"unread downloads: {growth:.0f} MiB > {args.limit_mib} MiB")

        # 2. Uploads as fast as the server reads them.
        time.sleep(1)
        start = rss_bytes(process.pid)
        sampler = PeakSampler(process.pid)
        statuses = []

        def upload():
            head = request_head("POST", "/v1/spaces/memory/changesets", token,
                                f"Content-Type: application/vnd.vecsync.changeset\r\nX-VecSync-SHA256: {'0' * 64}\r\n"
                                f"Content-Length: {args.upload_mib << 20}\r\n")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
                    conn.sendall(head)
                    chunk = b"\x56" * (1 << 20)
                    for _ in range(args.upload_mib):
                        conn.sendall(chunk)
                    statuses.append(int(conn.recv(64).split(b" ", 2)[1]))
            except OSError as error:   # the server may answer and close before the body ends
                statuses.append(type(error).__name__)

        threads = [threading.Thread(target=upload) for _ in range(args.uploads)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        peak = sampler.stop()
        growth = (peak - start) / 2**20
        print(f"{args.uploads} uploads of {args.upload_mib} MiB beside a {args.budget_mib} MiB body budget: peak "
              f"{peak / 2**20:.0f} MiB resident, {growth:+.0f} MiB (whole: {args.uploads * args.upload_mib} MiB); "
              f"answers {sorted(statuses, key=str)}")
        if growth > args.limit_mib:
            failures.append(f"uploads: {growth:.0f} MiB > {args.limit_mib} MiB")
    for failure in failures:
        print(f"server-memory: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
