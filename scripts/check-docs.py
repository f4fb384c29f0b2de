#!/usr/bin/env python3
"""check-docs.py: the README and the pages of docs/ say only what the code does.

    scripts/check-docs.py                      # the static checks
    scripts/check-docs.py --run --cli .build/debug/vecsync-cli --extension .build/libvecsync.so
                                               # and the shell examples, run (make check-docs)

Every fenced block of README.md and docs/*.md is one of these, by its language:

- `sql`: SQL with what it prints as comment lines (`-- row: A|B`, `-- no rows`,
  `-- error: words`; the format of Tests/SQLCases/README.md). SQLCaseFilesTests runs each
  block in-process and in the sqlite3 shell (Tests/VecSyncCoreTests/SQLCaseFile+Docs.swift);
  here, each must say what it prints.
- `swift`: byte for byte a region of Tests/DocExamplesTests/*.swift between
  `// snippet: NAME` and `// end snippet` (without their common indentation), which the
  test target compiles and runs.
- `python`: run by python/tests/test_doc_examples.py (make test-python).
- `console`: a transcript: each `$ command` (a trailing backslash continues it) prints the
  lines under it, exactly; a line `...` stands for any lines.
- `sh`: a script that must succeed.
  Both run in a new temporary folder holding `.build/libvecsync.so` (the built extension)
  and `sql/`, with `vecsync-cli` first on PATH.
- `text`, `ini`, `nginx`, `yaml`, `json`: diagrams and configuration files, not examples.

A block whose line before is `<!-- not run: REASON -->` or `<!-- not compiled: REASON -->`
is left out, with its reason printed (installs, root, a Mac). A block whose line before is
`<!-- with vecsync-server: make test-server runs it -->` runs only with --server PATH (and
then only such blocks run), with `vecsync-server` on PATH too: make test-server does that.
A block without a language is refused. The README stays within 250 lines and links every
page of docs/, and every relative link of the pages names a file that exists (and a heading
of it, after a #).

Prints each problem and exits 1 when there is one; `make check-docs` runs it with --run, and
`make test` runs that.
"""
import argparse
import difflib
import os
import re
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SNIPPETS = os.path.join(ROOT, "Tests", "DocExamplesTests")
README_LIMIT = 250
NOT_EXAMPLES = {"text", "ini", "nginx", "yaml", "json"}
EXAMPLES = {"sql", "swift", "python", "console", "sh"}
EXEMPTION = re.compile(r"^<!-- not (run|compiled): (.+?) -->$")
WITH_SERVER = "<!-- with vecsync-server: make test-server runs it -->"
EXPECTATION = re.compile(r"^-- (row:( |$)|no rows$|error: )")


class Block:
    """A fenced block of a page: its language, its text, the line of its opening fence."""

    def __init__(self, page, line, language, lines, exemption, needs_server):
        self.page, self.line, self.language = page, line, language
        self.text = "\n".join(lines) + "\n"
        self.exemption = exemption
        self.needs_server = needs_server

    @property
    def place(self):
        return f"{self.page}:{self.line}"


def pages():
    docs = sorted(f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
    return ["README.md"] + ["docs/" + f for f in docs]


def blocks_of(page):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, index = [], 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("```"):
            language = line[3:].strip()
            end = index + 1
            while end < len(lines) and lines[end] != "```":
                end += 1
            before = lines[index - 1] if index > 0 else ""
            match = EXEMPTION.match(before)
            found.append(Block(page, index + 1, language, lines[index + 1:end],
                               match.group(2) if match else None, before == WITH_SERVER))
            index = end + 1
        else:
            index += 1
    return found


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def check_links(page, problems):
    """Every relative link of `page` names a file that exists, and an anchor one of its headings has."""
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        text = f.read()
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", prose):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(ROOT, os.path.dirname(page), path)) if path else os.path.join(ROOT, page)
        if not os.path.exists(full):
            problems.append(f"{page}: the link {target} names no file")
        elif anchor and full.endswith(".md"):
            with open(full, encoding="utf-8") as f:
                headings = [slug(m) for m in re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", f.read(), flags=re.S), re.M)]
            if anchor not in headings:
                problems.append(f"{page}: the link {target} names no heading of {os.path.relpath(full, ROOT)}")


def snippets():
    """Every `// snippet: NAME` … `// end snippet` region of Tests/DocExamplesTests, dedented."""
    regions = {}
    for name in sorted(os.listdir(SNIPPETS)):
        if not name.endswith(".swift"):
            continue
        with open(os.path.join(SNIPPETS, name), encoding="utf-8") as f:
            lines = f.read().split("\n")
        current, body = None, []
        for line in lines:
            stripped = line.strip()
            if stripped.startswith("// snippet: "):
                current, body = stripped[len("// snippet: "):], []
            elif stripped == "// end snippet" and current:
                indent = min((len(l) - len(l.lstrip(" ")) for l in body if l.strip()), default=0)
                regions[f"{name}: {current}"] = "\n".join(l[indent:] for l in body) + "\n"
                current = None
            elif current:
                body.append(line)
    return regions


def check_swift(block, regions, problems):
    if block.text in regions.values():
        return
    closest = difflib.get_close_matches(block.text, list(regions.values()), n=1, cutoff=0)
    hint = ""
    if closest:
        name = next(k for k, v in regions.items() if v == closest[0])
        diff = difflib.unified_diff(closest[0].splitlines(), block.text.splitlines(),
                                    f"Tests/DocExamplesTests/{name}", block.place, lineterm="", n=1)
        hint = "\n" + "\n".join(diff)
    problems.append(f"{block.place}: this swift block is no snippet of Tests/DocExamplesTests{hint}")


def sandbox(args):
    folder = tempfile.mkdtemp(prefix="vecsync-docs.")
    os.makedirs(os.path.join(folder, ".build"))
    os.makedirs(os.path.join(folder, "bin"))
    if os.path.exists(args.extension):
        os.symlink(os.path.abspath(args.extension), os.path.join(folder, ".build", os.path.basename(args.extension)))
    os.symlink(os.path.join(ROOT, "sql"), os.path.join(folder, "sql"))
    os.symlink(os.path.abspath(args.cli), os.path.join(folder, "bin", "vecsync-cli"))
    if args.server:
        os.symlink(os.path.abspath(args.server), os.path.join(folder, "bin", "vecsync-server"))
    if args.sqlite3 != "sqlite3":
        os.symlink(os.path.abspath(args.sqlite3), os.path.join(folder, "bin", "sqlite3"))
    env = dict(os.environ, PATH=os.path.join(folder, "bin") + os.pathsep + os.environ.get("PATH", ""))
    return folder, env


def run_script(script, folder, env):
    """Runs `script` with bash in `folder`: its exit status and output. The script runs in a
    session of its own, ended when it exits, so what it left in the background (a server)
    goes with it, whether it passed or failed."""
    with tempfile.TemporaryFile(mode="w+") as out:
        process = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=folder, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = process.wait(timeout=300)
        except subprocess.TimeoutExpired:
            status = "a timeout (300 s)"
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        process.wait()
        out.seek(0)
        return status, out.read()


def run_sh(block, args, problems):
    folder, env = sandbox(args)
    status, output = run_script(block.text, folder, env)
    subprocess.run(["rm", "-rf", folder])
    if status != 0:
        problems.append(f"{block.place}: the sh block exits with status {status}:\n" + output.rstrip())


def transcript(block):
    """The commands of a console block, each with the lines it must print."""
    steps, command = [], None
    for line in block.text.rstrip("\n").split("\n"):
        if command is not None and command.endswith("\\"):
            command = command[:-1] + "\n" + line
            steps[-1][0] = command
        elif line.startswith("$ "):
            command = line[2:]
            steps.append([command, []])
        elif steps:
            steps[-1][1].append(line)
        else:
            return None
    return steps


def matches(expected, actual):
    """Whether `actual` lines are `expected`, where a line `...` stands for any lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def run_console(block, args, problems):
    steps = transcript(block)
    if not steps:
        problems.append(f"{block.place}: a console block starts with `$ command`")
        return
    folder, env = sandbox(args)
    marker = "@@vecsync-docs-step@@"
    script = "".join(f"printf '\\n%s\\n' '{marker}'\n{command}\n" for command, _ in steps)
    status, output = run_script(script, folder, env)
    subprocess.run(["rm", "-rf", folder])
    outputs = output.split("\n" + marker + "\n")[1:]
    for index, (command, expected) in enumerate(steps):
        if index >= len(outputs):
            problems.append(f"{block.place}: `{command}` did not run (an earlier command failed)")
            break
        actual = outputs[index].rstrip("\n").split("\n") if outputs[index].rstrip("\n") else []
        if not matches(expected, actual):
            problems.append(f"{block.place}: `{command}` prints\n  " + "\n  ".join(actual)
                            + "\nwhere the page says\n  " + "\n  ".join(expected))
    if status != 0 and len(outputs) == len(steps):
        problems.append(f"{block.place}: the last command exits with status {status}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", action="store_true", help="run the sh and console blocks")
    parser.add_argument("--cli", default=".build/debug/vecsync-cli")
    parser.add_argument("--extension", default=".build/libvecsync.so")
    parser.add_argument("--sqlite3", default=os.environ.get("SQLITE3", "sqlite3"))
    parser.add_argument("--server", help="a built vecsync-server: run only the blocks that need it")
    args = parser.parse_args()

    problems, counts, exempt = [], {}, []
    regions = snippets()
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    if readme.count("\n") > README_LIMIT:
        problems.append(f"README.md: {readme.count(chr(10))} lines, over {README_LIMIT}: move a section to docs/")
    for page in pages()[1:]:
        if f"({page})" not in readme and f"({page}#" not in readme:
            problems.append(f"README.md links no {page}")
    for page in pages():
        check_links(page, problems)
        for block in blocks_of(page):
            if not block.language:
                problems.append(f"{block.place}: a block without a language (sql, swift, python, console, sh, text, …)")
                continue
            if block.exemption:
                exempt.append(f"{block.place} ({block.language}): {block.exemption}")
                continue
            if block.needs_server != bool(args.server):
                if block.needs_server:
                    exempt.append(f"{block.place} ({block.language}): needs vecsync-server, run by make test-server")
                continue
            if block.language in NOT_EXAMPLES:
                continue
            if block.language not in EXAMPLES:
                problems.append(f"{block.place}: unknown language `{block.language}`")
                continue
            counts[block.language] = counts.get(block.language, 0) + 1
            if block.language == "sql" and not any(EXPECTATION.match(l) for l in block.text.split("\n")):
                problems.append(f"{block.place}: a sql block says what it prints (`-- row:`, `-- no rows`, `-- error:`)")
            elif block.language == "swift":
                check_swift(block, regions, problems)
            elif args.run and block.language == "sh":
                run_sh(block, args, problems)
            elif args.run and block.language == "console":
                run_console(block, args, problems)
    for problem in problems:
        print(problem)
    for line in exempt:
        print(f"left out: {line}")
    summary = ", ".join(f"{n} {language}" for language, n in sorted(counts.items()))
    if problems:
        print(f"check-docs: {len(problems)} problems")
        return 1
    if args.server:
        print(f"check-docs: {summary} blocks that need vecsync-server run")
        return 0
    ran = "sh and console run, " if args.run else ""
    print(f"check-docs: {summary} blocks ({ran}swift matched to compiled snippets; sql run by "
          f"SQLCaseFilesTests, python by make test-python); {len(exempt)} left out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
