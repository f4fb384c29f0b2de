#!/usr/bin/env python3
"""check-darwin.py: the C as Apple's toolchain builds it, without a Mac.

Usage (what `make check-darwin` runs):

    python3 scripts/check-darwin.py --zig ".build/venv-zig/bin/python -m ziglang"

For arm64 and x86_64 macOS 13 and arm64 iOS 16 (the floors in Package.swift), every file
of CSources/vecsync is compiled twice with clang, as zig's `cc` drives it with the macOS
libc headers it carries, under -Wall -Wextra -Werror and Apple's define
(VECSYNC_ACCELERATE):

  - the host build (-DSQLITE_CORE), as SwiftPM compiles it into an app;
  - the loadable build (no SQLITE_CORE), the libvecsync.dylib of the sqlite3 shell and Python.

Each build is then linked as a dylib against zig's libSystem. The only undefined symbols
allowed are CBLAS's (Accelerate provides them) and, in the host build, SQLite's own API (the
app's SQLite provides them; each must be declared by sqlite3.h). The loadable build must
need no SQLite symbol at all: it reaches SQLite through the routine table. zig has no iOS
libSystem, so the iOS builds are compiled, not linked.

Then the SQLite floor: every sqlite3_* function the host build calls must exist in SQLite
3.39 (macOS 13, iOS 16). sqlite3ext.h tags each routine with the version that added it
("Version 3.40.0 and later"); a routine added after 3.39 fails the check, since a symbol
the OS's SQLite lacks stops the app from loading. SQLITE_* constants newer than 3.39 (the
table NEWER_CONSTANTS, from SQLite's release history) must be gated by an #if in the file
that uses them (older libraries ignore an unknown flag; a gated one is defined by us).

sqlite3.h and sqlite3ext.h come from the build machine (Debian's libsqlite3-dev), copied
into a folder of their own so no glibc header leaks into the Apple builds.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(ROOT, "CSources", "vecsync")
FLOOR = (3, 39, 0)

# (zig target, platform name, linked?)
TARGETS = [
    ("aarch64-macos.13.0", "macOS arm64", True),
    ("x86_64-macos.13.0", "macOS x86_64", True),
    ("aarch64-ios.16.0", "iOS arm64", False),
]

# SQLITE_* constants added after SQLite 3.39, with the version that added them.
NEWER_CONSTANTS = {
    "SQLITE_DBCONFIG_REVERSE_SCANORDER": "3.42.0",
    "SQLITE_DBCONFIG_STMT_SCANSTATUS": "3.42.0",
    "SQLITE_RESULT_SUBTYPE": "3.45.0",
    "SQLITE_INDEX_SCAN_HEX": "3.47.0",
    "SQLITE_PREPARE_DONT_LOG": "3.48.0",
    "SQLITE_DBCONFIG_ENABLE_ATTACH_CREATE": "3.49.0",
    "SQLITE_DBCONFIG_ENABLE_ATTACH_WRITE": "3.49.0",
    "SQLITE_DBCONFIG_ENABLE_COMMENTS": "3.49.0",
    "SQLITE_SETLK_BLOCK_ON_CONNECT": "3.50.0",
}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def sqlite_headers(dest, include):
    os.makedirs(dest, exist_ok=True)
    for name in ("sqlite3.h", "sqlite3ext.h"):
        src = os.path.join(include, name)
        if not os.path.exists(src):
            sys.exit("check-darwin: %s not found (install libsqlite3-dev)" % src)
        shutil.copy(src, os.path.join(dest, name))
    return dest


def routine_versions(sqlite3ext):
    """sqlite3_<name> -> the version that added it, from sqlite3ext.h."""
    text = open(sqlite3ext).read()
    struct = text[text.index("struct sqlite3_api_routines {"):text.index("};", text.index("struct sqlite3_api_routines {"))]
    field_version = {}
    version = (3, 0, 0)
    for line in struct.splitlines():
        m = re.search(r"Version (\d+)\.(\d+)\.(\d+)", line)
        if m:
            version = tuple(int(x) for x in m.groups())
            continue
        for field in re.findall(r"\(\s*\*\s*(\w+)\s*\)", line):
            field_version.setdefault(field, version)
    functions = {}
    for name, field in re.findall(r"#define\s+(sqlite3_\w+)\s+sqlite3_api->(\w+)", text):
        if field in field_version:
            functions[name] = field_version[field]
    return functions


def declared_functions(sqlite3h):
    return set(re.findall(r"\b(sqlite3_\w+)\s*\(", open(sqlite3h).read()))


def compile_build(zig, target, host, includes, out_dir):
    defines = ["-DVECSYNC_ACCELERATE"] + (["-DSQLITE_CORE"] if host else [])
    objects, failures = [], []
    for name in sorted(os.listdir(SOURCES)):
        if not name.endswith(".c"):
            continue
        obj = os.path.join(out_dir, name[:-2] + ".o")
        cmd = zig + ["cc", "--target=" + target, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"] + defines + [
            "-I" + SOURCES, "-I" + os.path.join(SOURCES, "include")] + includes + ["-c", os.path.join(SOURCES, name), "-o", obj]
        r = run(cmd)
        if r.returncode != 0:
            failures.append("%s:\n%s" % (name, (r.stderr or r.stdout).strip()))
        objects.append(obj)
    return objects, failures


def link_undefined(zig, target, objects, out):
    """The symbols the linker could not find in libSystem (with their leading _ removed)."""
    r = run(zig + ["cc", "--target=" + target, "-shared", "-o", out] + objects)
    if r.returncode == 0:
        return set(), ""
    missing = set(re.findall(r"undefined symbol: _(\w+)", r.stderr))
    if not missing:
        return None, r.stderr.strip()
    return missing, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zig", required=True, help="the command that runs zig, e.g. 'python3 -m ziglang'")
    ap.add_argument("--sqlite-include", default="/usr/include", help="where sqlite3.h and sqlite3ext.h are")
    ap.add_argument("--out", default=os.path.join(ROOT, ".build", "darwin"))
    args = ap.parse_args()
    zig = shlex.split(args.zig)
    r = run(zig + ["version"])
    if r.returncode != 0:
        sys.exit("check-darwin: cannot run zig (%s): %s" % (args.zig, r.stderr.strip()))
    zig_lib = run(zig + ["env"]).stdout
    m = re.search(r'"lib_dir"\s*:\s*"([^"]+)"', zig_lib) or re.search(r"\.lib_dir\s*=\s*\"([^\"]+)\"", zig_lib)
    if not m:
        sys.exit("check-darwin: zig env does not say where its lib folder is")
    darwin_headers = os.path.join(m.group(1), "libc", "include", "any-darwin-any")

    sqlite_dir = sqlite_headers(os.path.join(args.out, "sqlite-include"), args.sqlite_include)
    declared = declared_functions(os.path.join(sqlite_dir, "sqlite3.h"))
    problems = []
    host_sqlite = set()
    for target, label, linked in TARGETS:
        includes = ["-idirafter", sqlite_dir]
        if not linked:
            # zig carries no iOS SDK; the Darwin libc headers are the same on iOS.
            includes = ["-isystem", darwin_headers] + includes
        for host in (True, False):
            build = "host (SQLITE_CORE)" if host else "loadable"
            out_dir = os.path.join(args.out, target, "host" if host else "loadable")
            os.makedirs(out_dir, exist_ok=True)
            objects, failures = compile_build(zig, target, host, includes, out_dir)
            if failures:
                problems += ["%s, %s build, does not compile cleanly: %s" % (label, build, f) for f in failures]
                continue
            if not linked:
                print("check-darwin: %s, %s build: %d files compile with -Werror (not linked: no iOS libSystem)"
                      % (label, build, len(objects)))
                continue
            missing, error = link_undefined(zig, target, objects, os.path.join(out_dir, "libvecsync.dylib"))
            if missing is None:
                problems.append("%s, %s build, does not link: %s" % (label, build, error))
                continue
            cblas = {s for s in missing if s.startswith("cblas_")}
            sqlite = {s for s in missing if s.startswith("sqlite3_")}
            other = missing - cblas - sqlite
            if other:
                problems.append("%s, %s build, needs symbols that neither libSystem, CBLAS nor SQLite provides: %s"
                                % (label, build, ", ".join(sorted(other))))
            if host:
                undeclared = sqlite - declared
                if undeclared:
                    problems.append("%s, host build, calls SQLite symbols sqlite3.h does not declare: %s"
                                    % (label, ", ".join(sorted(undeclared))))
                host_sqlite |= sqlite
            elif sqlite:
                problems.append("%s, loadable build, links SQLite symbols directly (it must use the routine table): %s"
                                % (label, ", ".join(sorted(sqlite))))
            print("check-darwin: %s, %s build: links against libSystem; needs %d CBLAS and %d SQLite symbols"
                  % (label, build, len(cblas), len(sqlite)))

    versions = routine_versions(os.path.join(sqlite_dir, "sqlite3ext.h"))
    newer = sorted((versions[f], f) for f in host_sqlite if versions.get(f, (0,)) > FLOOR)
    for version, f in newer:
        problems.append("%s is SQLite %s and later, above the floor %s (macOS 13, iOS 16)"
                        % (f, ".".join(map(str, version)), ".".join(map(str, FLOOR))))
    unknown = sorted(f for f in host_sqlite if f not in versions)
    for f in unknown:
        problems.append("%s has no version in sqlite3ext.h: check by hand that SQLite %s has it, and list it here"
                        % (f, ".".join(map(str, FLOOR))))
    for name in sorted(os.listdir(SOURCES)):
        if not name.endswith((".c", ".h")):
            continue
        text = open(os.path.join(SOURCES, name)).read()
        gated = set()
        for line in text.splitlines():
            if re.match(r"\s*#\s*(if|ifdef|ifndef|elif)\b", line):
                gated |= set(re.findall(r"\bSQLITE_\w+", line))
        for const in sorted(set(re.findall(r"\bSQLITE_\w+", text)) & set(NEWER_CONSTANTS)):
            if const not in gated:
                problems.append("%s uses %s (SQLite %s and later) without an #if gate"
                                % (name, const, NEWER_CONSTANTS[const]))
    if host_sqlite:
        oldest = max(versions.get(f, (0, 0, 0)) for f in host_sqlite)
        print("check-darwin: SQLite floor: %d sqlite3_* functions, the newest from %s; floor %s"
              % (len(host_sqlite), ".".join(map(str, oldest)), ".".join(map(str, FLOOR))))
    if problems:
        for p in problems:
            print("check-darwin: " + p, file=sys.stderr)
        sys.exit(1)
    print("check-darwin: clean for %s" % ", ".join(label for _, label, _ in TARGETS))


if __name__ == "__main__":
    main()
