"""The SQL cases of Tests/SQLCases/*.cases (the format: that folder's README.md), run
through the installed vecsync package on the standard library's sqlite3 and on apsw.

Swift runs the same files in-process and in the sqlite3 shell; here each case runs as a
Python program would run it: a new connection, vecsync.load(), then the case's
statements one by one (a failing one records its error and the next one runs, as in a
shell script). Rows are compared as the shell prints them: columns joined with "|", NULL
for a null, a REAL as the shell's list mode prints it with the SQLite the expectations
were written against (15 significant digits, "%!.15g": rendered by the connection's own
SQLite when it prints REALs so, as Debian's 3.40 does; formatted here when it prints the
shortest round-trip form instead, as the newer SQLite apsw bundles does), a blob as its
bytes.

Flags: `-- python skips: REASON` skips a case on both modules; `-- apsw skips: REASON`
on apsw only (its own, newer SQLite answers differently, not the extension);
`-- apsw fails: REASON` marks a known failure on apsw (xfail, strict: it fails the run
once fixed, so the flag is removed).
"""
import math
import sqlite3
from pathlib import Path

import pytest

from loaded_connection import LoadedConnection

# The repository's cases, or the copy an sdist carries beside this file (setup.py makes it).
HERE = Path(__file__).resolve().parent
CASES = next((d for d in (HERE / "SQLCases", HERE.parents[1] / "Tests" / "SQLCases")
              if d.is_dir()), HERE.parents[1] / "Tests" / "SQLCases")
KEY_WORDS = ("case", "row", "rows", "no rows", "no row", "error", "errors", "read-only", "readonly",
             "read only", "python skips", "python skip", "apsw skips", "apsw skip", "apsw fails",
             "apsw fail", "setup", "file setup")
FLAGS = ("-- python skips: ", "-- apsw skips: ", "-- apsw fails: ")


class Malformed(Exception):
    """A case file breaks the format: the file, the line, the problem."""

    def __init__(self, name, line, problem):
        super().__init__("Tests/SQLCases/%s:%d: %s" % (name, line, problem))


class Case:
    def __init__(self, title, line):
        self.title, self.line = title, line
        self.read_only = False
        self.flags = {}
        self.sql_lines = []
        self.rows, self.errors = [], []
        self.no_rows = False
        self.expecting = False

    @property
    def sql(self):
        return "\n".join(block(self.sql_lines))


class Group:
    def __init__(self, on_file, line):
        self.on_file, self.line = on_file, line
        self.setup_lines = []
        self.cases = []

    @property
    def setup(self):
        return "".join(line + "\n" for line in block(self.setup_lines))


def block(lines):
    """lines without the blank ones at either end."""
    kept = [i for i, line in enumerate(lines) if line.strip(" \t")]
    return lines[kept[0]:kept[-1] + 1] if kept else []


def looks_like_a_key_line(line):
    text = line.strip(" \t").lower()
    if not text.startswith("--"):
        return False
    rest = text[2:].lstrip(" \t")
    return any(rest.startswith(key) and (rest[len(key):] == "" or rest[len(key):].startswith(":"))
               for key in KEY_WORDS)


def parse(name, text):
    """The groups of a case file, as SQLCaseFileParser.swift reads them."""
    groups, group = [], Group(False, 0)
    titles, case, in_setup, seen_group = set(), None, False, False

    def finish_case():
        nonlocal case
        if case is None:
            return
        if not case.expecting:
            raise Malformed(name, case.line, "case \u201c%s\u201d does not say what it must print" % case.title)
        group.cases.append(case)
        case = None

    def finish_group(number):
        if group.cases:
            groups.append(group)
        elif seen_group:
            raise Malformed(name, group.line, "a setup without a case after it (line %d ends it)" % number)

    def expect(number, allowed):
        if case is None:
            raise Malformed(name, number, "an expectation outside a case")
        if not block(case.sql_lines):
            raise Malformed(name, number, "case \u201c%s\u201d has no SQL before what it must print" % case.title)
        if not allowed:
            raise Malformed(name, number, "case \u201c%s\u201d mixes rows, `-- no rows` and `-- error:`" % case.title)
        case.expecting = True

    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        line = line[:-1] if line.endswith("\r") else line
        if line.startswith("-- case: "):
            finish_case()
            title = line[len("-- case: "):].strip(" \t")
            if not title:
                raise Malformed(name, number, "`-- case:` needs a title")
            if title in titles:
                raise Malformed(name, number, "a second case titled \u201c%s\u201d" % title)
            titles.add(title)
            in_setup = False
            case = Case(title, number)
        elif line in ("-- setup", "-- file setup"):
            finish_case()
            finish_group(number)
            group = Group(line == "-- file setup", number)
            in_setup = seen_group = True
        elif line == "-- read-only" or line.startswith(FLAGS):
            if case is None or block(case.sql_lines) or case.expecting:
                raise Malformed(name, number, "a flag belongs right after its `-- case:` line, before the SQL")
            if line == "-- read-only":
                case.read_only = True
            else:
                flag, _, reason = line.partition(": ")
                if not reason.strip():
                    raise Malformed(name, number, "`%s:` needs a reason" % flag)
                case.flags[flag[3:]] = reason.strip()
        elif line == "-- row:" or line.startswith("-- row: "):
            expect(number, not case.errors and not case.no_rows if case else False)
            case.rows.append(line[len("-- row: "):])
        elif line == "-- no rows":
            expect(number, not case.errors and not case.rows and not case.no_rows if case else False)
            case.no_rows = True
        elif line.startswith("-- error: "):
            words = line[len("-- error: "):]
            if not words.strip(" \t"):
                raise Malformed(name, number, "`-- error:` needs the words the message must contain")
            expect(number, not case.rows and not case.no_rows if case else False)
            case.errors.append(words)
        elif looks_like_a_key_line(line):
            raise Malformed(name, number, "`%s` looks like a case file's line but is not one" % line)
        elif case is not None:
            if not case.expecting:
                case.sql_lines.append(line)
            elif line.strip(" \t") and not line.startswith("--"):
                raise Malformed(name, number, "SQL after what case \u201c%s\u201d must print" % case.title)
        elif in_setup:
            group.setup_lines.append(line)
        elif line.strip(" \t") and not line.startswith("--"):
            raise Malformed(name, number, "SQL before the first `-- case:` or `-- setup`")
    finish_case()
    finish_group(len(lines))
    if not groups:
        raise Malformed(name, 0, "the file has no case")
    return groups


def statements(sql):
    """The statements of a script, split where SQLite says one is complete."""
    found, start = [], 0
    for end, ch in enumerate(sql):
        if ch == ";" and sqlite3.complete_statement(sql[start:end + 1]):
            found.append(sql[start:end + 1])
            start = end + 1
    rest = sql[start:]
    if rest.strip() and not all(line.strip().startswith("--") or not line.strip()
                                for line in rest.split("\n")):
        found.append(rest)
    return found


class Connection(LoadedConnection):
    """A loaded connection that runs a case's script and prints its rows as the shell does."""

    def __init__(self, kind, path=":memory:", read_only=False):
        super().__init__(kind, path, read_only)
        self.renders_reals = self.value("select cast(0.1 + 0.2 as text)") == "0.3"

    def value(self, sql, params=()):
        return self.rows(sql, params)[0][0]

    def text(self, value):
        """A value as the shell prints it with .nullvalue NULL."""
        if value is None:
            return "NULL"
        if isinstance(value, float):
            return self.value("select cast(? as text)", (value,)) if self.renders_reals else real_text(value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode("utf-8", errors="replace")
        return str(value)

    def run(self, sql):
        """The rows and the errors of a script."""
        rows, errors = [], []
        for statement in statements(sql):
            try:
                for row in self.conn.execute(statement):
                    rows.append("|".join(self.text(v) for v in row))
            except self.error as e:
                errors.append(str(e))
        return rows, errors


def real_text(value):
    """SQLite's "%!.15g" of a REAL: 15 significant digits, a ".0" when there is no point.
    (SQLite 3.40's own digits differ from these at a few exact halfway points past the 15th.)"""
    if value == 0:
        return "0.0"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    text = "%.15g" % value
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def check(case, rows, errors):
    """What differs from what the case must print, or None."""
    if case.errors:
        message = errors[0] if len(errors) == 1 else ""
        if rows or len(errors) != 1 or not all(w.lower() in message.lower() for w in case.errors):
            return "expected no row and one error mentioning %r\ngot rows %r, errors %r" % (case.errors, rows, errors)
    elif errors or rows != case.rows:
        return "expected rows %r\ngot rows %r, errors %r" % (case.rows, rows, errors)
    return None


def report(name, case, problem):
    return "Tests/SQLCases/%s:%d: %s\nSQL:\n%s\n%s" % (name, case.line, case.title, case.sql, problem)


def collect():
    """(file, group, case) for the cases that run alone; (file, group) for file setups."""
    alone, sessions = [], []
    for path in sorted(CASES.glob("*.cases")):
        try:
            groups = parse(path.name, path.read_text(encoding="utf-8"))
        except Malformed as e:
            alone.append(pytest.param(path.name, None, e, id=path.name))
            continue
        for group in groups:
            if group.on_file:
                sessions.append(pytest.param(path.name, group, None, id="%s:%d" % (path.name, group.line)))
            else:
                alone += [pytest.param(path.name, group, case, id="%s:%d" % (path.name, case.line))
                          for case in group.cases]
    return alone, sessions


ALONE, SESSIONS = collect()
KINDS = ["sqlite3", "apsw"]


def test_the_case_files_are_found():
    assert len(ALONE) + len(SESSIONS) > 0, "no case file in %s" % CASES


def apply_flags(case, kind, request):
    """Skips the case, or marks it a known failure, as its flags say for this module."""
    if "python skips" in case.flags:
        pytest.skip(case.flags["python skips"])
    if kind == "apsw" and "apsw skips" in case.flags:
        pytest.skip(case.flags["apsw skips"])
    if kind == "apsw" and "apsw fails" in case.flags:
        request.applymarker(pytest.mark.xfail(reason=case.flags["apsw fails"], strict=True))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name, group, case", ALONE)
def test_case(kind, name, group, case, request):
    if isinstance(case, Malformed):
        pytest.fail(str(case))
    apply_flags(case, kind, request)
    db = Connection(kind)
    try:
        problem = check(case, *db.run(group.setup + case.sql))
    finally:
        db.close()
    assert problem is None, report(name, case, problem)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name, group, unused", SESSIONS)
def test_file_session(kind, name, group, unused, tmp_path):
    path = str(tmp_path / "cases.db")
    db = Connection(kind, path)
    try:
        db.run(group.setup)
    finally:
        db.close()
    problems, skipped = [], []
    for case in group.cases:
        reason = case.flags.get("python skips") or (case.flags.get("apsw skips") if kind == "apsw" else None)
        if kind == "apsw" and not reason:
            reason = case.flags.get("apsw fails")
        if reason:
            skipped.append("%s (%s)" % (case.title, reason))
            continue
        db = Connection(kind, path, read_only=case.read_only)
        try:
            problem = check(case, *db.run(case.sql))
        finally:
            db.close()
        if problem:
            problems.append(report(name, case, problem))
    assert not problems, "\n\n".join(problems)
    if skipped:
        pytest.skip("ran every other case; skipped: " + "; ".join(skipped))
