#!/usr/bin/env python3
"""Peak resident memory of vecsync-server under parallel large pushes.

Starts the given vecsync-server on a fresh SQLite store (extra `serve` flags after --),
registers a device, then sends N pushes of M MiB at once, each on its own connection, and
reports the server's resident memory before, at its peak (VmHWM, from /proc/PID/status) and
the statuses the pushes got. The bodies are random bytes with a wrong SHA-256: the server
reads each one whole before it can refuse it (400), which is what a body costs. Only
127.0.0.1 is used; the server is stopped at the end.

  bench/server/body_budget.py --server Server/.build/debug/vecsync-server --pushes 8 --mib 60
  bench/server/body_budget.py --server … -- --body-budget-mib 1024   # the cap out of the way
"""
import argparse
import http.client
import os
import sys
import threading
import time

import server_process


def memory(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--pushes", type=int, default=8)
    parser.add_argument("--mib", type=int, default=60)
    parser.add_argument("serve", nargs="*", help="further serve flags (after --)")
    args = parser.parse_args()
    data, store, token = server_process.new_store(args.server, "budget")
    body = os.urandom(args.mib << 20)
    statuses = []
    lock = threading.Lock()

    def push(port):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            connection.request("POST", "/v1/spaces/budget/changesets", body=body, headers={
                "Authorization": f"Bearer {token}", "X-VecSync-SHA256": "0" * 64,
                "Content-Type": "application/vnd.vecsync.changeset"})
            status = connection.getresponse().status
        except OSError as error:
            status = f"error {error}"
        with lock:
            statuses.append(status)
        connection.close()

    with server_process.serving(args.server, ["--rate", "0", "--max-body-mib", "64", *store, *args.serve],
                                data) as (process, port):
        time.sleep(0.5)
        before = memory(process.pid, "VmRSS")
        started = time.monotonic()
        threads = [threading.Thread(target=push, args=(port,)) for _ in range(args.pushes)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.monotonic() - started
        peak = memory(process.pid, "VmHWM")
        counts = {}
        for status in statuses:
            counts[str(status)] = counts.get(str(status), 0) + 1
        print(f"{args.pushes} pushes of {args.mib} MiB at once, serve {' '.join(args.serve) or '(defaults)'}: "
              f"RSS {before} MB before, peak {peak} MB; {seconds:.1f} s; statuses {counts}")


if __name__ == "__main__":
    sys.exit(main())
