#!/usr/bin/env bash
# test-python.sh: the Python package as a user gets it (make test-python).
#
#   scripts/test-python.sh [pytest arguments]
#
# In a temporary folder, removed afterwards: `pip wheel ./python` in one venv, then the
# wheel installed with pytest and apsw in a fresh venv, and python/tests run from outside
# the repository (so `import vecsync` is the installed package; test_sql_cases.py reads
# the SQL cases of Tests/SQLCases/ from the repository). PYTHON chooses the
# interpreter: by default Debian's /usr/bin/python3, whose sqlite3 module can load
# extensions (the sqlite3 cases skip, saying why, on one that cannot; apsw's always run).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
. scripts/python-wheel.sh
python_wheel vecsync-python

echo "== the wheel in a fresh venv, with pytest and apsw"
"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q "$tmp"/wheels/vecsync-*.whl pytest apsw

cd "$tmp"
"$tmp/venv/bin/python" -m pytest -p no:cacheprovider -rs "$repo/python/tests" "$@"
echo "test-python: $(( $(date +%s) - start )) s"
