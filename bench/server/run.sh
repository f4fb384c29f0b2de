#!/usr/bin/env bash
# bench/server/run.sh [SECONDS] [DEVICES] [IDLE]: the server load test on both back ends.
#
# Builds vecsync-server and the load generator in release mode, then runs DEVICES (100)
# simulated devices for SECONDS (60) against one server on SQLite, and against two server
# instances sharing a throw-away PostgreSQL with fsync on (scripts/postgres-test-server.sh
# starts it on a loopback port and stops it afterwards); then both again with IDLE (300)
# idle connections held open to each server (IDLE=0 skips those runs). Every request goes
# to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
devices=${2:-100}
idle=${3:-300}
swift build --package-path Server -c release --product vecsync-server
swift build --package-path Server -c release --product vecsync-server-bench
bench=Server/.build/release/vecsync-server-bench
server=Server/.build/release/vecsync-server
# Each idle connection is a descriptor of this process and of the server.
ulimit -n 4096 2>/dev/null || true
runs=(0)
[ "$idle" != 0 ] && runs+=("$idle")
for held in "${runs[@]}"; do
  echo "== SQLite, one instance, $held idle connections =="
  "$bench" --server-binary "$server" --devices "$devices" --seconds "$seconds" --idle-connections "$held"
  echo "== PostgreSQL (fsync on), two instances, $held idle connections each =="
  VECSYNC_TEST_POSTGRES_FSYNC=on scripts/postgres-test-server.sh sh -c \
    "$bench --server-binary $server --devices $devices --seconds $seconds --instances 2 --idle-connections $held --postgres \"\$VECSYNC_TEST_POSTGRES_URL\""
done
