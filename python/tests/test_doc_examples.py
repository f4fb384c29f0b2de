"""The `python` blocks of README.md and docs/*.md, each run as it is written, in a new
temporary folder, against the installed vecsync package: a page cannot show Python that
fails (scripts/check-docs.py says which blocks of the pages are run where).

A block whose line before is `<!-- not run: REASON -->` is left out. Away from the
repository (an sdist, the wheel's test), there are no pages and the test skips, saying so.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md")) if (ROOT / "docs").is_dir() else []


def python_blocks():
    blocks = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").split("\n")
        index = 0
        while index < len(lines):
            if lines[index].startswith("```"):
                end = index + 1
                while end < len(lines) and lines[end] != "```":
                    end += 1
                exempt = index > 0 and re.match(r"<!-- not (run|compiled): ", lines[index - 1])
                if lines[index] == "```python" and not exempt:
                    name = "%s:%d" % (page.relative_to(ROOT), index + 1)
                    blocks.append(pytest.param("\n".join(lines[index + 1:end]) + "\n", id=name))
                index = end + 1
            else:
                index += 1
    return blocks


BLOCKS = python_blocks()


@pytest.mark.skipif(not BLOCKS, reason="no README.md and docs/ beside the tests (not in a repository checkout)")
@pytest.mark.parametrize("source", BLOCKS or [pytest.param("", id="none")])
def test_page_example_runs(source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(source, "<page example>", "exec"), {"__name__": "__doc_example__"})
