#!/usr/bin/env python3
"""Schema fuzzing of vecsync-server: every route of docs/openapi.yaml through schemathesis.

Starts the given vecsync-server on a fresh SQLite store (or on --postgres URL) with a new
space and a token of it, then runs schemathesis over every operation of the document twice:
once with that token (the `space` path parameter set to the new space, so requests get past
authentication) and once with no token at all. Both runs check that

  - no answer is a 5xx (not_a_server_error), and the server still answers afterwards;
  - each status is one the document lists for the operation (status_code_conformance);
  - the content type and, for JSON, the body match the document's (content_type_conformance,
    response_schema_conformance), as do documented response headers;
  - a request the document calls invalid is refused with a 4xx (negative_data_rejection);
  - an operation that needs a token refuses a request without one, or with a wrong one
    (ignored_auth).

Bounded: --max-examples cases per operation and phase, seeded (--seed; printed). Exit status 1
when schemathesis reports a failure or the server stops answering. Needs schemathesis (the
version in scripts/requirements-schemathesis.txt; `make test-server` installs it in a venv).

Usage:
  scripts/fuzz-server-schema.py --start .build/debug/vecsync-server
  scripts/fuzz-server-schema.py --start .build/debug/vecsync-server --postgres postgres://u@127.0.0.1:5432/db
It only ever connects to 127.0.0.1.
"""
import argparse
import importlib.util
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "openapi.yaml"
CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "ignored_auth",
])


def raw_fuzzer():
    """scripts/fuzz-server-raw.py as a module: its way of starting a server and probing it."""
    spec = importlib.util.spec_from_file_location("fuzz_server_raw", ROOT / "scripts" / "fuzz-server-raw.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seed_space(cli, server, store, target, folder):
    """Gives the space a change set (seq 1, pushed by `vecsync-cli sync`) and a snapshot through
    it (`vecsync-server space compact --snapshot-only`), so the download routes serve bytes."""
    database = folder / "seed.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)")
        connection.executemany("INSERT INTO notes VALUES (?, ?)", [(f"n{i}", "x" * (i * 40)) for i in range(20)])
    connection.close()
    environment = dict(os.environ, VECSYNC_TOKEN=target.token)
    for command in (
        [cli, "track", "--db", str(database), "--table", "notes", "--site", "schema-seed"],
        [cli, "sync", "--db", str(database), "--server", f"http://127.0.0.1:{target.port}", "--space", target.space],
        [server, "space", "compact", target.space, "--snapshot-only", *store],
    ):
        subprocess.run(command, check=True, env=environment, stdout=subprocess.DEVNULL, timeout=120)


def run_schemathesis(binary, target, token, args, report_dir, label):
    """One schemathesis run; returns (exit status, cases run, seconds)."""
    config = report_dir / f"{label}.toml"
    lines = ['[dictionaries.seq]', 'values = [1]', '', '[parameters]', f'"path.space" = "{target.space}"',
             # Half the cases ask for the change set and the snapshot that exist.
             '"path.seq" = { dictionary = "seq", probability = 0.5 }', '',
             # A request the document calls invalid may also get 413 (too large) or 416 (a
             # Range header that is not one satisfiable byte range), as the document says.
             '[checks.negative_data_rejection]',
             'expected-statuses = [400, 401, 403, 404, 405, 406, 409, 413, 415, 416, 422, 428, 429]']
    if token:
        lines += ['', '[headers]', f'Authorization = "Bearer {token}"']
    config.write_text("\n".join(lines) + "\n")
    report = report_dir / f"{label}.ndjson"
    command = [
        binary, "--config-file", str(config), "run", str(SPEC),
        "--url", f"http://127.0.0.1:{target.port}",
        "--checks", CHECKS,
        "--max-examples", str(args.max_examples),
        "--seed", str(args.seed),
        "--phases", "examples,coverage,fuzzing",
        "--workers", "1",
        "--request-timeout", "10",
        "--generation-database", "none",
        "--no-color",
        "--report", "ndjson", "--report-ndjson-path", str(report),
    ]
    command += args.extra
    if not token:
        # Without a token the security scheme is not filled in either.
        command += ["--generation-with-security-parameters", "false"]
    started = time.monotonic()
    environment = dict(os.environ, SCHEMATHESIS_HOOKS=str(ROOT / "scripts" / "schemathesis_hooks.py"))
    # In the report folder: schemathesis leaves a .schemathesis/ folder where it runs.
    status = subprocess.run(command, env=environment, cwd=report_dir).returncode
    seconds = time.monotonic() - started
    return status, count_cases(report), seconds


def count_cases(report):
    """The requests schemathesis sent, read from its ndjson event report."""
    cases = 0
    try:
        with open(report) as events:
            for line in events:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and "ScenarioFinished" in event:
                    recorder = event["ScenarioFinished"].get("recorder") or {}
                    cases += len(recorder.get("interactions") or {})
    except OSError:
        return 0
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start", metavar="BINARY", required=True, help="the vecsync-server to start")
    parser.add_argument("--postgres", metavar="URL", help="use this PostgreSQL database instead of SQLite")
    parser.add_argument("--schemathesis", default=str(ROOT / ".build" / "venv-schemathesis" / "bin" / "schemathesis"),
                        help="the schemathesis command (default: the venv make test-server creates)")
    parser.add_argument("--cli", default=os.environ.get("VECSYNC_CLI"),
                        help="vecsync-cli, to give the space a change set and a snapshot first (env VECSYNC_CLI)")
    parser.add_argument("--max-examples", type=int, default=25, help="cases per operation and phase (default 25)")
    parser.add_argument("--seed", type=int, default=1, help="schemathesis's seed (default 1)")
    parser.add_argument("extra", nargs="*", help="further schemathesis run options (after --)")
    args = parser.parse_args()
    if not shutil.which(args.schemathesis):
        raise SystemExit(f"schemathesis not found at {args.schemathesis}: pip install -r scripts/requirements-schemathesis.txt")
    raw = raw_fuzzer()
    process, data, target = raw.start_server(args.start, args.postgres)
    report_dir = pathlib.Path(tempfile.mkdtemp(prefix="vecsync-schema-"))
    findings = []
    back_end = "PostgreSQL" if args.postgres else "SQLite"
    try:
        if args.cli:
            store = ["--postgres", args.postgres] if args.postgres else ["--data", data]
            seed_space(args.cli, args.start, store, target, report_dir)
        else:
            print("fuzz-server-schema: no --cli (VECSYNC_CLI): the space stays empty, downloads answer 404")
        for label, token in (("with-token", target.token), ("without-token", None)):
            print(f"== schemathesis {label}, {back_end}, seed {args.seed}, {args.max_examples} examples ==", flush=True)
            status, cases, seconds = run_schemathesis(args.schemathesis, target, token, args, report_dir, label)
            print(f"fuzz-server-schema: {label} on {back_end}: {cases} cases in {seconds:.1f} s, exit {status}",
                  flush=True)
            if status != 0:
                findings.append(f"schemathesis {label} failed (exit {status}); rerun with --seed {args.seed}")
            ok, why = raw.alive(target)
            if not ok:
                findings.append(f"after schemathesis {label} a plain request is not served: {why}")
                break
        if process.poll() is not None:
            findings.append(f"the server exited with status {process.returncode}")
    finally:
        raw.stop_server(process, findings)
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(report_dir, ignore_errors=True)
    for finding in findings:
        print(f"FINDING: {finding}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
