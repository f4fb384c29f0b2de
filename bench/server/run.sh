#!/usr/bin/env bash
# bench/server/run.sh [SECONDS] [DEVICES] [IDLE] [SLOW] [TOKENLESS]: the server load test on
# both back ends.
#
# Builds vecsync-server and the load generator in release mode, then runs DEVICES (100)
# simulated devices for SECONDS (60) against one server on SQLite, and against two server
# instances sharing a throw-away PostgreSQL with fsync on (scripts/postgres-test-server.sh
# starts it on a loopback port and stops it afterwards); then both again with IDLE (300)
# idle connections held open to each server (IDLE=0 skips those runs); then both again
# beside SLOW (4) slow uploads and TOKENLESS (200) clients without a valid token, a request
# each every 100 ms, to each server (SLOW=0 and TOKENLESS=0 skip those runs). Every request
# goes to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
devices=${2:-100}
idle=${3:-300}
slow=${4:-4}
tokenless=${5:-200}
# The root package's .build serves the server package too: what both use is built once.
swift build --package-path Server --scratch-path .build -c release --product vecsync-server
swift build --package-path Server --scratch-path .build -c release --product vecsync-server-bench
bench=.build/release/vecsync-server-bench
server=.build/release/vecsync-server
# Each idle connection is a descriptor of this process and of the server.
ulimit -n 4096 2>/dev/null || true
runs=("quiet|")
[ "$idle" != 0 ] && runs+=("$idle idle connections|--idle-connections $idle")
[ "$slow$tokenless" != 00 ] && runs+=("$slow slow uploads and $tokenless tokenless clients|--slow-uploads $slow --tokenless $tokenless")
for run in "${runs[@]}"; do
  what=${run%%|*}
  extra=${run#*|}
  echo "== SQLite, one instance, $what =="
  # shellcheck disable=SC2086
  "$bench" --server-binary "$server" --devices "$devices" --seconds "$seconds" $extra
  echo "== PostgreSQL (fsync on), two instances, $what (to each) =="
  VECSYNC_TEST_POSTGRES_FSYNC=on scripts/postgres-test-server.sh sh -c \
    "$bench --server-binary $server --devices $devices --seconds $seconds --instances 2 $extra --postgres \"\$VECSYNC_TEST_POSTGRES_URL\""
done
