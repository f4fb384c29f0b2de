#!/usr/bin/env bash
# test-server.sh: the sync server's package (Server/) tested on both back ends.
#
# Run inside scripts/postgres-test-server.sh (make test-server does), so that
# VECSYNC_TEST_POSTGRES_URL names a throw-away PostgreSQL:
# 1. the Swift suites of Server/ (SQLite, and PostgreSQL through that URL), whose CLI test
#    runs the root package's vecsync-cli ($VECSYNC_CLI);
# 2. the raw-socket fuzzer (scripts/fuzz-server-raw.py) against the debug vecsync-server,
#    once on a fresh SQLite store and once on PostgreSQL: malformed requests and clients
#    that stop early; no 5xx but store failures, and the server still answers afterwards;
# 3. schemathesis over every route of docs/openapi.yaml (scripts/fuzz-server-schema.py), with
#    a token and without, against the same server on SQLite and on PostgreSQL: no 5xx,
#    statuses, content types and JSON bodies as the document says, invalid requests refused;
# 4. the server's peak memory beside 40 downloads of 16 MiB nobody reads and 8 uploads of 64 MiB
#    (scripts/server-memory.py): at most 320 MiB above where it started.
# 5. the client's peak memory (vecsync-cli sync, $VECSYNC_CLI) against servers whose answers
#    never end (scripts/client-memory.py): each sync fails, within 2 minutes, under 160 MiB.
# SERVER_FUZZ_ARGS sets the raw fuzzer's seed and bounds, SCHEMA_FUZZ_ARGS schemathesis's
# (about 35 s a back end with the default); SCHEMATHESIS names its command.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
fuzz_args=${SERVER_FUZZ_ARGS:---seed 1 --cases 600 --seconds 30}
schema_args=${SCHEMA_FUZZ_ARGS:---seed 1 --max-examples 100}
schemathesis=${SCHEMATHESIS:-.build/venv-schemathesis/bin/schemathesis}
: "${VECSYNC_TEST_POSTGRES_URL:?run this inside scripts/postgres-test-server.sh}"

# The root package's .build serves as the server package's too: what both use is built once.
"$swift" test --package-path Server --scratch-path .build
server=.build/debug/vecsync-server
echo "== raw-socket fuzzing, SQLite =="
# shellcheck disable=SC2086
python3 scripts/fuzz-server-raw.py --start "$server" $fuzz_args
echo "== raw-socket fuzzing, PostgreSQL =="
# shellcheck disable=SC2086
python3 scripts/fuzz-server-raw.py --start "$server" --postgres "$VECSYNC_TEST_POSTGRES_URL" $fuzz_args
echo "== schemathesis, SQLite =="
# shellcheck disable=SC2086
python3 scripts/fuzz-server-schema.py --start "$server" --schemathesis "$schemathesis" $schema_args
echo "== schemathesis, PostgreSQL =="
# shellcheck disable=SC2086
python3 scripts/fuzz-server-schema.py --start "$server" --schemathesis "$schemathesis" \
  --postgres "$VECSYNC_TEST_POSTGRES_URL" $schema_args
echo "== peak memory under unread downloads and large uploads =="
python3 scripts/server-memory.py --server "$server"
echo "== the client's peak memory against answers that never end =="
python3 scripts/client-memory.py --cli "${VECSYNC_CLI:?set VECSYNC_CLI to the vecsync-cli of the root package}"
