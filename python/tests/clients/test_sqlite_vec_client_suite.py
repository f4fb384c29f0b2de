"""sqlite-vec-client's own test suite, from its sdist, run twice: on sqlite-vec 0.1.9 and with
VecSync in its place. Each of its tests is one test here, which passes when the test had the
same outcome in both runs.

VECSYNC_CLIENT_SUITE names the suite's folder (the sdist's tests/);
scripts/test-python-clients.sh downloads the sdist of the version pinned in requirements.txt
and sets it. Each run is a child process (sqlite_vec.load swapped for the whole process),
under sqlite_vec_client_suite_plugin.py.
"""
import json
import os
import subprocess
import sys

import pytest

from side_by_side import EXTENSIONS

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.environ.get("VECSYNC_CLIENT_SUITE", "")


def pytest_generate_tests(metafunc):
    if "suite_test" in metafunc.fixturenames:
        metafunc.parametrize("suite_test", collect_suite())


def suite_command(*arguments):
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
            "-p", "sqlite_vec_client_suite_plugin", "--rootdir", SUITE, SUITE] + list(arguments)


def suite_env(extension, outcomes=""):
    env = dict(os.environ, VECSYNC_CLIENT_EXTENSION=extension, VECSYNC_CLIENT_OUTCOMES=outcomes)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)
    return env


def collect_suite():
    """The suite's test ids, as pytest collects them under sqlite-vec."""
    if not os.path.isdir(SUITE):
        raise pytest.UsageError(
            "VECSYNC_CLIENT_SUITE=%r is no folder: it names sqlite-vec-client's tests/ from its "
            "sdist (scripts/test-python-clients.sh downloads it)" % SUITE)
    run = subprocess.run(suite_command("--collect-only", "-q"), env=suite_env("sqlite-vec"),
                         capture_output=True, text=True, timeout=300)
    ids = [line for line in run.stdout.splitlines() if "::" in line]
    if run.returncode != 0 or not ids:
        raise pytest.UsageError("collecting sqlite-vec-client's suite failed:\n%s%s"
                                % (run.stdout[-3000:], run.stderr[-3000:]))
    return ids


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Each run's outcomes by test id, and how the run ended."""
    folder = tmp_path_factory.mktemp("sqlite-vec-client-suite")
    runs = {}
    for extension in EXTENSIONS:
        path = folder / ("%s.json" % extension)
        run = subprocess.run(suite_command("-q"), env=suite_env(extension, str(path)),
                             cwd=str(folder), capture_output=True, text=True, timeout=600)
        recorded = json.loads(path.read_text())["outcomes"] if path.exists() else {}
        runs[extension] = (recorded, "exit code %d; its last output:\n%s%s" % (
            run.returncode, run.stdout[-2000:], run.stderr[-2000:]))
    return runs


def test_suite_test_has_the_same_outcome(outcomes, suite_test):
    expected, expected_run = outcomes["sqlite-vec"]
    actual, actual_run = outcomes["vecsync"]
    assert suite_test in expected, "no outcome under sqlite-vec 0.1.9 (%s)" % expected_run
    assert suite_test in actual, "no outcome with VecSync (%s)" % actual_run
    want, got = expected[suite_test], actual[suite_test]
    assert got["outcome"] == want["outcome"], (
        "%s: %s under sqlite-vec 0.1.9, %s with VecSync\n--- VecSync:\n%s\n--- sqlite-vec:\n%s"
        % (suite_test, want["outcome"], got["outcome"], got["text"], want["text"]))


def test_suite_passes_on_sqlite_vec(outcomes):
    """The baseline: every test of the pinned sqlite-vec-client passes on sqlite-vec 0.1.9 with
    these fixtures (144 in 2.4.1), so a fixture gone wrong cannot pass for a match."""
    expected, run = outcomes["sqlite-vec"]
    passed = sorted(k for k, v in expected.items() if v["outcome"] == "passed")
    others = sorted("%s: %s" % (k, v["outcome"]) for k, v in expected.items()
                    if v["outcome"] != "passed")
    assert len(passed) >= 100 and not others, (len(passed), others, run)
