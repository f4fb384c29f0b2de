# python-wheel.sh: what test-python.sh and test-python-clients.sh share, sourced by both from
# the repository's top folder. PYTHON is the interpreter (by default Debian's
# /usr/bin/python3, whose sqlite3 module can load extensions); python_wheel NAME makes $tmp,
# a temporary folder removed when the script exits, notes the $start time, and builds
# `pip wheel ./python` in a venv of its own into $tmp/wheels.
if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi

python_wheel() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  start=$(date +%s)
  echo "== pip wheel ./python ($($PYTHON --version))"
  "$PYTHON" -m venv "$tmp/build"
  "$tmp/build/bin/pip" wheel -q --no-deps -w "$tmp/wheels" ./python
  # setuptools leaves its build folders beside setup.py: not the source tree's business.
  rm -rf python/build python/vecsync.egg-info
  ls "$tmp"/wheels
}
