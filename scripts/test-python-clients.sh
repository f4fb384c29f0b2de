#!/usr/bin/env bash
# test-python-clients.sh: real clients of sqlite-vec, with VecSync loaded in its place
# (make test-python-clients).
#
#   scripts/test-python-clients.sh [pytest arguments]
#
# In a temporary folder, removed afterwards: `pip wheel ./python` in one venv, then the wheel
# installed in a fresh venv with the clients pinned in python/tests/clients/requirements.txt
# (LangChain's SQLiteVec, sqlite-utils with its sqlite-vec plugin, sqlite-vec-client) and
# sqlite-vec 0.1.9; sqlite-vec-client's sdist, whose tests/ is its own test suite, is
# downloaded and unpacked beside them. python/tests/clients then runs each client on both
# libraries and compares what they return. PYTHON chooses the interpreter: by default
# Debian's /usr/bin/python3, whose sqlite3 module can load extensions (the clients open
# their connections with it).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
. scripts/python-wheel.sh
requirements=python/tests/clients/requirements.txt
client_version=$(sed -n 's/^sqlite-vec-client==//p' "$requirements")
python_wheel vecsync-python-clients

echo "== the wheel in a fresh venv, with the clients of $requirements"
"$PYTHON" -m venv "$tmp/venv"
# --no-compile: the clients' dependencies (LangChain's most of all) are many files, and
# compiling them all at install time took longer than the tests; Python compiles what they import.
"$tmp/venv/bin/pip" install -q --no-compile "$tmp"/wheels/vecsync-*.whl -r "$requirements"
"$tmp/venv/bin/pip" download -q --no-deps --no-binary :all: -d "$tmp/sdist" \
  "sqlite-vec-client==$client_version"
tar -xzf "$tmp"/sdist/sqlite_vec_client-"$client_version".tar.gz -C "$tmp/sdist"
suite="$tmp/sdist/sqlite_vec_client-$client_version/tests"
[ -d "$suite" ] || { echo "test-python-clients: the sdist of sqlite-vec-client $client_version has no tests/" >&2; exit 1; }

cd "$tmp"
VECSYNC_CLIENT_TESTS=1 VECSYNC_CLIENT_SUITE="$suite" \
  "$tmp/venv/bin/python" -m pytest -p no:cacheprovider -rxXs "$repo/python/tests/clients" "$@"
echo "test-python-clients: $(( $(date +%s) - start )) s"
