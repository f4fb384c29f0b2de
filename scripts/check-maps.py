#!/usr/bin/env python3
"""check-maps.py: the maps a newcomer reads first still match the code.

Checks, from the repository root:
- CONTRIBUTING.md's "Where does X happen?" table: every file it names exists (a path with a
  slash from the root, a bare file name somewhere in the tree), and every symbol it names
  (`vec0Search`, `Quarantine.retry`, `refusal(_:columns:)`, `vecsync_quarantine`)
  occurs in a file that its row names: a symbol in the row's files is where the row says
  it is, and one that is only elsewhere is a stale row; a row that names no source file (an
  engine table such as `vecsync_quarantine`) is checked against every source; and the rows
  of the sync path (SYNC_PATH_ROWS) are there, each naming a file;
- docs/architecture.md's Layout block: every folder it lists exists, and every top-level
  folder of the repository is listed;
- the file map in CSources/vecsync/vecsync_int.h: every C file it names exists and every C
  file of the extension is named.

Prints each stale entry and exits 1 when there is one; `make check-maps` runs it, and
`make test` runs that.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_DIRS = ["CSources", "Sources", "Server/Sources", "sql", "scripts", "fuzz", "Tests", "Server/Tests"]
SOURCE_ENDINGS = (".c", ".h", ".swift", ".sql", ".py", ".sh")
FILE_ENDINGS = SOURCE_ENDINGS + (".md", ".yaml", ".json")
# The sync path, answered in one hop each: rows of CONTRIBUTING's table that must stay.
SYNC_PATH_ROWS = ["Sync path: entry point", "Sync path: change scan", "Sync path: merge order",
                  "Sync path: quarantine", "Sync path: cursors", "Sync path: HTTP wire types"]


def tracked_files():
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def source_text(files):
    chunks = []
    for path in files:
        if path.endswith(SOURCE_ENDINGS) and any(path.startswith(d + "/") for d in SOURCE_DIRS):
            full = os.path.join(ROOT, path)
            if os.path.isfile(full):
                with open(full, encoding="utf-8", errors="replace") as f:
                    chunks.append(f.read())
    return "\n".join(chunks)


def source_files(files):
    """The text of every source file, by path."""
    texts = {}
    for path in files:
        if path.endswith(SOURCE_ENDINGS) and any(path.startswith(d + "/") for d in SOURCE_DIRS):
            full = os.path.join(ROOT, path)
            if os.path.isfile(full):
                with open(full, encoding="utf-8", errors="replace") as f:
                    texts[path] = f.read()
    return texts


def files_named(line, files, source_paths):
    """The source files a table row names, by path or by bare name, with their text: where the
    row says its symbols are. Folders named (`Sources/VecSyncWire/`) stand for their files."""
    named = {}
    for token in re.findall(r"`([^`]+)`", line):
        if token.endswith(SOURCE_ENDINGS):
            for path in source_paths:
                if path == token or os.path.basename(path) == token or path.endswith("/" + token):
                    named[path] = source_paths[path]
        elif token.endswith("/") and "/" in token.rstrip("/"):
            for path in source_paths:
                if path.startswith(token):
                    named[path] = source_paths[path]
    return named


def symbol_name(token):
    """The name to look for in `Type.method(_:label:)`, `function()`, `table_name`."""
    token = token.split("(")[0]
    token = token.rstrip("/")
    return token.split(".")[-1]


def check_contributing(files, sources, source_paths, problems):
    with open(os.path.join(ROOT, "CONTRIBUTING.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.find("## Where does X happen?")
    if start < 0:
        problems.append("CONTRIBUTING.md: the 'Where does X happen?' table is missing")
        return 0
    table = text[start:]
    names = {os.path.basename(p) for p in files}
    checked = 0
    rows = {}
    for line in table.splitlines()[1:]:
        if line.startswith("## "):
            break
        if not line.startswith("|") or line.startswith("| ---") or line.startswith("| What"):
            continue
        row = line.split("|")[1].strip()
        rows[row] = line
        row_files = files_named(line, files, source_paths)
        for token in re.findall(r"`([^`]+)`", line):
            checked += 1
            if " " in token or token.startswith("-") or "<" in token or "=" in token or "[" in token:
                continue  # a command line, a flag or a pattern: nothing to look up
            if token.endswith(FILE_ENDINGS):
                if "/" in token:
                    ok = os.path.exists(os.path.join(ROOT, token))
                else:
                    ok = token in names
                if not ok:
                    problems.append(f"CONTRIBUTING.md ({row}): no file {token}")
                continue
            if token.endswith("/"):
                if not os.path.isdir(os.path.join(ROOT, token)):
                    problems.append(f"CONTRIBUTING.md ({row}): no folder {token}")
                continue
            name = symbol_name(token)
            if not name:
                continue
            if row_files:
                if not any(re.search(r"\b" + re.escape(name) + r"\b", text) for text in row_files.values()):
                    elsewhere = [p for p in source_paths if re.search(r"\b" + re.escape(name) + r"\b", source_paths[p])]
                    where = f" (it is in {', '.join(sorted(elsewhere)[:3])})" if elsewhere else " nor in the sources"
                    problems.append(f"CONTRIBUTING.md ({row}): `{token}` is not in the files the row names"
                                    f" ({', '.join(sorted(row_files))}){where}")
            elif not re.search(r"\b" + re.escape(name) + r"\b", sources):
                problems.append(f"CONTRIBUTING.md ({row}): `{token}` is not in the sources")
    for row in SYNC_PATH_ROWS:
        if row not in rows:
            problems.append(f"CONTRIBUTING.md: the row '{row}' is missing")
        elif not any(token.endswith(".swift") for token in re.findall(r"`([^`]+)`", rows[row])):
            problems.append(f"CONTRIBUTING.md ({row}): names no Swift file")
    return checked


def check_layout(files, problems):
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as f:
        text = f.read()
    match = re.search(r"## Layout\s*\n+```text\n(.*?)```", text, re.S)
    if not match:
        problems.append("docs/architecture.md: the Layout block is missing")
        return
    listed = set()
    for line in match.group(1).splitlines():
        first = line.split(" ")[0]
        if first and not line.startswith(" "):
            listed.add(first.rstrip("/").split("/")[0])
            if not os.path.exists(os.path.join(ROOT, first)):
                problems.append(f"docs/architecture.md Layout: {first} does not exist")
    top = {p.split("/")[0] for p in files if "/" in p and not p.startswith(".")}
    for folder in sorted(top - listed):
        problems.append(f"docs/architecture.md Layout: the folder {folder}/ is not listed")


def check_file_map(files, problems):
    header = os.path.join(ROOT, "CSources/vecsync/vecsync_int.h")
    with open(header, encoding="utf-8") as f:
        text = f.read()
    named = set(re.findall(r"^\*\*\s+([a-z0-9_]+\.c)\s", text, re.M))
    present = {os.path.basename(p) for p in files if p.startswith("CSources/vecsync/") and p.endswith(".c")}
    for name in sorted(named - present):
        problems.append(f"vecsync_int.h names {name}, which does not exist")
    for name in sorted(present - named):
        problems.append(f"vecsync_int.h's file map does not name {name}")


def check_loadable_build(files, problems):
    """CSources/vecsync-loadable holds, for each C file of CSources/vecsync, one file of the
    same name that includes it (the loadable build of the same sources), and nothing else."""
    sources = {os.path.basename(p) for p in files if p.startswith("CSources/vecsync/") and p.endswith(".c")}
    wrappers = {os.path.basename(p) for p in files if p.startswith("CSources/vecsync-loadable/") and p.endswith(".c")}
    for name in sorted(sources - wrappers):
        problems.append(f"CSources/vecsync-loadable/{name} is missing: the loadable build would lack {name}")
    for name in sorted(wrappers - sources):
        problems.append(f"CSources/vecsync-loadable/{name} has no namesake in CSources/vecsync/")
    for name in sorted(sources & wrappers):
        with open(os.path.join(ROOT, "CSources/vecsync-loadable", name), encoding="utf-8") as f:
            if f'#include "../vecsync/{name}"' not in f.read():
                problems.append(f"CSources/vecsync-loadable/{name} does not include ../vecsync/{name}")


def check_sqlite_module(files, problems):
    """The library's modules (Sources/, Package.swift) never name GRDB's GRDBSQLite target:
    GRDB's SQLCipher and custom-SQLite setups remove it, and an app so set up must still
    build VecSync. (Tests and the server's package may.)"""
    for path in files:
        if path == "Package.swift" or (path.startswith("Sources/") and path.endswith(".swift")):
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if "GRDBSQLite" in line and not line.lstrip().startswith("//"):
                        problems.append(f"{path}:{number} names GRDBSQLite, which GRDB's SQLCipher setup removes")


def main():
    files = tracked_files()
    sources = source_text(files)
    source_paths = source_files(files)
    problems = []
    checked = check_contributing(files, sources, source_paths, problems)
    check_layout(files, problems)
    check_file_map(files, problems)
    check_loadable_build(files, problems)
    check_sqlite_module(files, problems)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-maps: {len(problems)} stale entries")
        return 1
    print(f"check-maps: CONTRIBUTING's table ({checked} names, each in a file its row names), "
          "docs/architecture.md's Layout and vecsync_int.h's file map are true")
    return 0


if __name__ == "__main__":
    sys.exit(main())
