#!/usr/bin/env bash
# Create bench/.venv and install the pinned benchmark dependencies into it.
#
# Idempotent: the venv is created once, and pip runs again only when
# requirements.txt has changed since the last successful install.
#
#   bash bench/setup.sh            # then: bench/.venv/bin/python bench/run.py
#   PYTHON=python3.12 bash bench/setup.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
req="$here/requirements.txt"
stamp="$venv/.requirements.sha256"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
        echo "bench/setup.sh: $python lacks venv/ensurepip; installing python3-venv" >&2
        apt-get update -qq && apt-get install -y -qq python3-venv >&2
    fi
    echo "bench/setup.sh: creating $venv" >&2
    "$python" -m venv "$venv"
fi

want="$(sha256sum "$req" | cut -d' ' -f1)"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$want" != "$have" ]; then
    echo "bench/setup.sh: installing bench/requirements.txt" >&2
    "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
    "$venv/bin/python" -m pip install --quiet -r "$req" >&2
    echo "$want" > "$stamp"
else
    echo "bench/setup.sh: bench/.venv is up to date" >&2
fi
