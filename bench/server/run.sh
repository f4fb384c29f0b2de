#!/usr/bin/env bash
# bench/server/run.sh [SECONDS] [DEVICES]: the server load test on both back ends.
#
# Builds vecsync-server and the load generator in release mode, then runs DEVICES (100)
# simulated devices for SECONDS (60) against one server on SQLite, and against two server
# instances sharing a throw-away PostgreSQL (scripts/postgres-test-server.sh starts it on a
# loopback port and stops it afterwards). Every request goes to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
devices=${2:-100}
swift build --package-path Server -c release --product vecsync-server
swift build --package-path Server -c release --product vecsync-server-bench
bench=Server/.build/release/vecsync-server-bench
echo "== SQLite, one instance =="
"$bench" --server-binary Server/.build/release/vecsync-server --devices "$devices" --seconds "$seconds"
echo "== PostgreSQL, two instances =="
scripts/postgres-test-server.sh sh -c \
  "$bench --server-binary Server/.build/release/vecsync-server --devices $devices --seconds $seconds --instances 2 --postgres \"\$VECSYNC_TEST_POSTGRES_URL\""
