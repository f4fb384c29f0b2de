#!/usr/bin/env python3
"""Raw-socket fuzzer for vecsync-server: malformed requests and clients that stop early.

Each case opens a new TCP connection to 127.0.0.1, sends a request mutated from a valid
one of the API (cut, bit-flipped, with broken or duplicated headers, a bad request line,
random bytes, a TLS ClientHello, a body abandoned half way or the connection closed early),
and reads what comes back. Every few cases, and at the end, a well-formed request must
still be answered. It fails (exit 1) when the server stops answering (it died or hangs),
or answers a 5xx other than 503/507 (store failures). Seeded: a run is replayed with the
same --seed; the seed and each finding are printed.

Usage:
  # against a server already running (token: --token or VECSYNC_TOKEN)
  scripts/fuzz-server-raw.py --port 8080 --space fuzz --token vst_...
  # start one on a fresh SQLite store (or --postgres URL) with the given binary, fuzz, stop it
  scripts/fuzz-server-raw.py --start .build/debug/vecsync-server --cases 2000 --seconds 60
Only the Python standard library is used; it only ever connects to 127.0.0.1.
"""
import argparse
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HOST = "127.0.0.1"


class Target:
    def __init__(self, port, space, token):
        self.port, self.space, self.token = port, space, token

    def templates(self):
        """Valid requests of every route, as bytes."""
        s, t = self.space, self.token
        auth = f"Authorization: Bearer {t}\r\n"
        body = b'{"site":"fuzz-device","name":"Fuzz","platform":"Linux"}'
        sha = "0" * 64
        cs = bytes(range(256)) * 4
        return [
            f"GET /v1/spaces/{s}/status HTTP/1.1\r\nHost: {HOST}\r\n{auth}Accept-Encoding: gzip\r\n\r\n".encode(),
            f"GET /v1/spaces/{s}/changesets?after=0&limit=10 HTTP/1.1\r\nHost: {HOST}\r\n{auth}\r\n".encode(),
            f"GET /v1/spaces/{s}/changesets/1 HTTP/1.1\r\nHost: {HOST}\r\n{auth}Range: bytes=0-10\r\n\r\n".encode(),
            f"GET /v1/spaces/{s}/snapshot HTTP/1.1\r\nHost: {HOST}\r\n{auth}\r\n".encode(),
            f"GET /v1/spaces/{s}/snapshot/1 HTTP/1.1\r\nHost: {HOST}\r\n{auth}\r\n".encode(),
            (f"POST /v1/spaces/{s}/devices HTTP/1.1\r\nHost: {HOST}\r\n{auth}Content-Type: application/json\r\n"
             f"Content-Length: {len(body)}\r\n\r\n").encode() + body,
            (f"POST /v1/spaces/{s}/changesets HTTP/1.1\r\nHost: {HOST}\r\n{auth}"
             f"Content-Type: application/vnd.vecsync.changeset\r\nX-VecSync-SHA256: {sha}\r\n"
             f"Content-Length: {len(cs)}\r\n\r\n").encode() + cs,
        ]

    def health_request(self):
        return (f"GET /v1/spaces/{self.space}/status HTTP/1.1\r\nHost: {HOST}\r\n"
                f"Authorization: Bearer {self.token}\r\nConnection: close\r\n\r\n").encode()


def mutate(rng, request):
    """One malformed variant of `request`, and how the client behaves after sending it."""
    r = bytearray(request)
    kind = rng.randrange(16)
    close_early = False
    if kind == 0:  # cut anywhere
        r = r[: rng.randrange(len(r))]
        close_early = True
    elif kind == 1:  # flip bits
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(r))
            r[i] ^= 1 << rng.randrange(8)
    elif kind == 2:  # insert control bytes
        for _ in range(rng.randint(1, 4)):
            r.insert(rng.randrange(len(r)), rng.choice([0, 10, 13, 0x7F, 0xFF, 0x80, 9]))
    elif kind == 3:  # garbage request line
        line_end = r.find(b"\r\n")
        r[:line_end] = bytes(rng.randrange(33, 127) for _ in range(rng.randint(0, 60)))
    elif kind == 4:  # header without a colon
        r = r.replace(b"\r\nHost: ", b"\r\nHost ", 1)
    elif kind == 5:  # Content-Length with Transfer-Encoding
        head_end = r.find(b"\r\n\r\n")
        r[head_end:head_end] = b"\r\nContent-Length: 7\r\nTransfer-Encoding: chunked"
    elif kind == 6:  # bad or huge Content-Length
        value = rng.choice([b"-1", b"abc", b"99999999999999999999", b"1e3", b" 5", b"5, 6", str(64 << 20).encode()])
        r = re.sub(rb"Content-Length: [^\r]*", b"Content-Length: " + value, bytes(r), count=1) \
            if b"Content-Length" in r else r.replace(b"\r\n\r\n", b"\r\nContent-Length: " + value + b"\r\n\r\n", 1)
        r = bytearray(r)
        close_early = True
    elif kind == 7:  # duplicated and long headers
        extra = b"".join(b"X-F%d: %s\r\n" % (i, b"a" * rng.choice([1, 100, 9000])) for i in range(rng.randint(1, 40)))
        r = r.replace(b"\r\n", b"\r\n" + extra, 1)
    elif kind == 8:  # bad method, path or version
        first, rest = r.split(b" ", 1) if b" " in r else (r, b"")
        r = bytearray(rng.choice([b"BREW", b"G\x00T", b"", b"CONNECT", b"TRACE", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"]) + b" " + rest)
        if rng.random() < 0.5:
            r = r.replace(b"HTTP/1.1", rng.choice([b"HTTP/9.9", b"HTTP/1.1 extra", b"HTTX/1.1", b"HTTP/0.9"]), 1)
    elif kind == 9:  # random bytes
        r = bytearray(rng.randbytes(rng.randint(1, 2048)))
    elif kind == 10:  # TLS ClientHello
        r = bytearray(b"\x16\x03\x01\x00\xf4\x01\x00\x00\xf0\x03\x03" + rng.randbytes(240))
    elif kind == 11:  # a body far larger than announced-then-abandoned
        r = r.replace(b"\r\n\r\n", b"\r\nContent-Length: 10485760\r\n\r\n", 1) + rng.randbytes(200_000)
        close_early = True
    elif kind == 12:  # a broken chunked body
        head_end = r.find(b"\r\n\r\n")
        head = re.sub(rb"\r\nContent-Length: [^\r]*", b"", bytes(r[:head_end]))
        chunks = rng.choice([b"zz\r\nabc\r\n0\r\n\r\n", b"5\r\nab", b"ffffffffffffffff\r\n", b"3\r\nabcde\r\n", b"0\r\n"])
        r = bytearray(head + b"\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks)
        close_early = rng.random() < 0.5
    elif kind == 13:  # bad token and a large upload
        r = re.sub(rb"Bearer [^\r]*", b"Bearer vst_" + b"f" * 64, bytes(r), count=1)
        r = bytearray(r.replace(b"\r\n\r\n", b"\r\nContent-Length: 10485760\r\n\r\n", 1) + rng.randbytes(300_000))
        close_early = True
    elif kind == 14:  # bad gzip body
        r = bytearray(r.replace(b"\r\n\r\n", b"\r\nContent-Encoding: " + rng.choice([b"gzip", b"deflate", b"br", b"gzip, gzip"]) + b"\r\n\r\n", 1))
    else:  # several requests pipelined, one broken
        r = bytearray(request + bytes(mutate(rng, request)[0]) + request)
    return bytes(r), close_early


def exchange(port, data, close_early, timeout):
    """Sends `data`; returns the status codes read, and 'closed'/'timeout'."""
    statuses = []
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
            if close_early:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            return statuses, "closed"
        buffer = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                piece = sock.recv(65536)
            except socket.timeout:
                return statuses, "timeout"
            except OSError:
                return statuses, "closed"
            if not piece:
                statuses += [int(m) for m in re.findall(rb"HTTP/1\.[01] (\d{3})", buffer)]
                return statuses, "closed"
            buffer += piece
            found = [int(m) for m in re.findall(rb"HTTP/1\.[01] (\d{3})", buffer)]
            if found and not close_early:
                # One answer is enough unless pipelined; give the rest a moment.
                sock.settimeout(0.2)
        statuses = [int(m) for m in re.findall(rb"HTTP/1\.[01] (\d{3})", buffer)]
        return statuses, "timeout"


def alive(target, timeout=10.0):
    try:
        statuses, _ = exchange(target.port, target.health_request(), False, timeout)
    except OSError as error:
        return False, str(error)
    return statuses[:1] == [200], f"answered {statuses or 'nothing'}"


def start_server(binary, postgres):
    data = tempfile.mkdtemp(prefix="vecsync-fuzz-")
    store = ["--postgres", postgres] if postgres else ["--data", data]
    space = "fuzz-%d" % os.getpid()
    subprocess.run([binary, "space", "create", space, *store], check=True, stdout=subprocess.DEVNULL, timeout=60)
    issued = subprocess.run([binary, "token", "issue", "--space", space, *store], check=True,
                            capture_output=True, text=True, timeout=60).stdout
    token = issued.strip().splitlines()[-1]
    # No rate limits: a refused case would hide the request it stands for.
    # The space's token also opens /metrics, so a fuzzer holding it reaches that route too;
    # warnings and errors only (every 5xx has an error line), not an access line per case.
    process = subprocess.Popen([binary, "serve", "--port", "0", "--host", HOST, "--rate", "0",
                                "--auth-failure-rate", "0", *store],
                               stdout=subprocess.PIPE, text=True, env=dict(os.environ, VECSYNC_METRICS_TOKEN=token, VECSYNC_LOG_LEVEL="warning"))
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
    if not match:
        process.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return process, data, Target(int(match.group(1)), space, token)


def stop_server(process, findings):
    """SIGTERM, then up to 30 s for the server to exit (a finding, and SIGKILL, past that)."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        findings.append("the server ignored SIGTERM for 30 s")
        process.kill()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int)
    parser.add_argument("--space", default="fuzz")
    parser.add_argument("--token", default=os.environ.get("VECSYNC_TOKEN", ""))
    parser.add_argument("--start", metavar="BINARY", help="start this vecsync-server on a fresh store")
    parser.add_argument("--postgres", metavar="URL", help="with --start: use this PostgreSQL database")
    parser.add_argument("--seed", type=lambda text: int(text, 0), default=None)
    parser.add_argument("--cases", type=int, default=1000, help="at most this many cases (default 1000)")
    parser.add_argument("--seconds", type=float, default=60, help="at most this long (default 60)")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds to wait for one answer")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    rng = random.Random(seed)
    process = data = None
    if args.start:
        process, data, target = start_server(args.start, args.postgres)
    elif args.port and args.token:
        target = Target(args.port, args.space, args.token)
    else:
        parser.error("give --start BINARY, or --port with --token (or VECSYNC_TOKEN)")
    print(f"fuzz-server-raw: seed {seed:#x}, port {target.port}, up to {args.cases} cases or {args.seconds:g} s",
          flush=True)
    findings = []
    templates = target.templates()
    started = time.monotonic()
    done = 0
    counts = {}
    try:
        ok, why = alive(target)
        if not ok:
            raise SystemExit(f"the server does not answer a plain request before fuzzing: {why}")
        while done < args.cases and time.monotonic() - started < args.seconds:
            data_sent, close_early = mutate(rng, rng.choice(templates))
            try:
                statuses, end = exchange(target.port, data_sent, close_early, args.timeout)
            except ConnectionRefusedError:
                findings.append(f"case {done}: connection refused: the server is gone")
                break
            except OSError as error:
                statuses, end = [], f"error {error}"
            for status in statuses:
                counts[status] = counts.get(status, 0) + 1
                if status >= 500 and status not in (503, 507):
                    findings.append(f"case {done}: answered {status} to {data_sent[:120]!r}")
            done += 1
            if done % 25 == 0 or findings:
                ok, why = alive(target)
                if not ok:
                    findings.append(f"after case {done - 1} ({data_sent[:120]!r}) a plain request is not served: {why}")
                    break
        ok, why = alive(target)
        if not ok and not any("not served" in f or "gone" in f for f in findings):
            findings.append(f"at the end a plain request is not served: {why}")
        if process and process.poll() is not None:
            findings.append(f"the server exited with status {process.returncode}")
    finally:
        if process:
            stop_server(process, findings)
        if data:
            shutil.rmtree(data, ignore_errors=True)
    summary = ", ".join(f"{code}: {count}" for code, count in sorted(counts.items()))
    print(f"fuzz-server-raw: {done} cases in {time.monotonic() - started:.1f} s; statuses {summary or 'none'}")
    for finding in findings:
        print(f"FINDING (seed {seed:#x}): {finding}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
