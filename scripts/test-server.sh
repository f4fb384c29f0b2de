#!/usr/bin/env bash
# test-server.sh: the sync server's package (Server/) tested on both back ends.
#
# Run inside scripts/postgres-test-server.sh (make test-server does), so that
# VECSYNC_TEST_POSTGRES_URL names a throw-away PostgreSQL:
# 1. the Swift suites of Server/ (SQLite, and PostgreSQL through that URL), whose CLI test
#    runs the root package's vecsync-cli ($VECSYNC_CLI);
# 2. the raw-socket fuzzer (scripts/fuzz-server-raw.py) against the debug vecsync-server,
#    once on a fresh SQLite store and once on PostgreSQL: malformed requests and clients
#    that stop early; no 5xx but store failures, and the server still answers afterwards.
# SERVER_FUZZ_ARGS sets the fuzzer's seed and bounds.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
fuzz_args=${SERVER_FUZZ_ARGS:---seed 1 --cases 600 --seconds 30}
: "${VECSYNC_TEST_POSTGRES_URL:?run this inside scripts/postgres-test-server.sh}"

"$swift" test --package-path Server
server=Server/.build/debug/vecsync-server
echo "== raw-socket fuzzing, SQLite =="
# shellcheck disable=SC2086
python3 scripts/fuzz-server-raw.py --start "$server" $fuzz_args
echo "== raw-socket fuzzing, PostgreSQL =="
# shellcheck disable=SC2086
python3 scripts/fuzz-server-raw.py --start "$server" --postgres "$VECSYNC_TEST_POSTGRES_URL" $fuzz_args
