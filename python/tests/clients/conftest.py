"""Real clients of sqlite-vec, from PyPI, run on sqlite-vec 0.1.9 and on VecSync in its place
(make test-python-clients; scripts/test-python-clients.sh installs the pinned versions of
requirements.txt beside this file and sets VECSYNC_CLIENT_TESTS=1).

make test-python collects python/tests without these packages: there this folder is left
out. By hand, in a venv with the wheel and requirements.txt installed:

    VECSYNC_CLIENT_TESTS=1 python -m pytest python/tests/clients
"""
import os

if os.environ.get("VECSYNC_CLIENT_TESTS") != "1":
    collect_ignore_glob = ["*.py"]
