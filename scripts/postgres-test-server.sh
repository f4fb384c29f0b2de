#!/usr/bin/env bash
# postgres-test-server.sh COMMAND [ARG...]
#
# Runs COMMAND with a throw-away PostgreSQL server and VECSYNC_TEST_POSTGRES_URL pointing at
# it, then stops the server and removes its files, whether COMMAND passed or failed; exits
# with COMMAND's status.
#
# The server listens on 127.0.0.1 only, on a free port, with its data and socket in a new
# temporary directory, trust authentication for the user `vecsync`, and fsync off: it is
# for tests, nothing else. VECSYNC_TEST_POSTGRES_FSYNC=on keeps fsync and synchronous
# commits on, as a production server runs (bench/server/run.sh sets it). When Debian's `postgresql` package is missing it is installed
# (as root: apt-get update once, then apt-get install -y postgresql; otherwise the script
# says what to install and fails). initdb and pg_ctl refuse to run as root, so as root the
# server runs as the `postgres` user (made by the package), or `nobody`.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 COMMAND [ARG...]" >&2
  exit 2
fi

find_bin() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
  done
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"; return 0
  fi
  return 1
}

if ! bin=$(find_bin); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing PostgreSQL for the server tests (Debian package postgresql)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq postgresql
    bin=$(find_bin) || { echo "postgresql is installed but initdb and pg_ctl were not found" >&2; exit 1; }
  else
    echo "The server tests need PostgreSQL's initdb and pg_ctl: sudo apt-get install postgresql" >&2
    exit 1
  fi
fi

as_user=()
owner=$(id -un)
if [ "$(id -u)" = 0 ]; then
  owner=postgres
  id postgres >/dev/null 2>&1 || owner=nobody
  as_user=(runuser -u "$owner" --)
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/vecsync-postgres-XXXXXX")
chmod 755 "$dir"
[ "$(id -u)" = 0 ] && chown "$owner" "$dir"

started=0
cleanup() {
  if [ "$started" = 1 ]; then
    "${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fsync=${VECSYNC_TEST_POSTGRES_FSYNC:-off}
case "$fsync" in
  on|off) ;;
  *) echo "VECSYNC_TEST_POSTGRES_FSYNC must be on or off, not '$fsync'" >&2; exit 2 ;;
esac

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null || echo 55432)

"${as_user[@]}" "$bin/initdb" -D "$dir/data" -U vecsync --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 1; }
started=1
if ! "${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=$fsync -c synchronous_commit=$fsync -c max_connections=200" start >/dev/null; then
  cat "$dir/server.log" >&2
  exit 1
fi

export VECSYNC_TEST_POSTGRES_URL="postgres://vecsync@127.0.0.1:$port/postgres"
echo "PostgreSQL for the tests at $VECSYNC_TEST_POSTGRES_URL"
status=0
"$@" || status=$?
exit "$status"
