#!/usr/bin/env python3
"""Server CPU spent on byte ranges of one large change set.

Creates a SQLite store with a space and one change set of --mib MiB of random bytes (written
into the store file directly, with its true SHA-256: the server never parses a body it
serves), starts the given vecsync-server on it, and sends --requests GETs of a 1-byte range
(`bytes=0-0`, then `bytes=1000-1000`), reporting the server's CPU time (utime + stime from
/proc/PID/stat) per request for each. Only 127.0.0.1 is used.

  bench/server/range_cost.py --server Server/.build/debug/vecsync-server --mib 59
"""
import argparse
import http.client
import os
import subprocess
import sys
import time

import server_process


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--mib", type=int, default=59)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    data, store, token = server_process.new_store(args.server, "ranges")
    server_process.store_change_set(data, "ranges", os.urandom(args.mib << 20))
    with server_process.serving(args.server, ["--rate", "0", *store], data,
                                stderr=subprocess.DEVNULL) as (process, port):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for spec in ("0-0", "1000-1000"):
            before = cpu_seconds(process.pid)
            started = time.monotonic()
            for _ in range(args.requests):
                connection.request("GET", "/v1/spaces/ranges/changesets/1",
                                   headers={"Authorization": f"Bearer {token}", "Range": f"bytes={spec}"})
                response = connection.getresponse()
                response.read()
                assert response.status == 206, response.status
            cpu = (cpu_seconds(process.pid) - before) / args.requests
            wall = (time.monotonic() - started) / args.requests
            print(f"Range bytes={spec} of {args.mib} MiB: {cpu * 1000:.1f} ms CPU, {wall * 1000:.1f} ms wall a request "
                  f"({args.requests} requests)")


if __name__ == "__main__":
    sys.exit(main())
