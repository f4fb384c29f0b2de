#!/usr/bin/env python3
"""check-c-calls.py: the C files of the extension call each other without a circle.

Builds the file-level call graph of CSources/vecsync/*.c: file A depends on file B when A
names a function B defines (calls it, or takes its address for a method table or a
callback). The graph must have no cycle: a reader following a path goes down the floors
(vec0.c -> vec0_store.c -> ...) and never back up into a file it came from.

    python3 scripts/check-c-calls.py            # fails (exit 1) on a cycle, naming its edges
    python3 scripts/check-c-calls.py --graph    # prints every edge, with the names behind it

It also holds the file map of CSources/vecsync/vecsync_int.h to its word: the map lists
the files from the bottom up, and a file may name functions only of files listed above it
(a stronger rule than "no cycle": the order a newcomer reads is the order calls go down);
and the header's section labels ("/* ---- vec0: storage (vec0_store.c) ---- */") name the
files that define every function the section declares (a glob such as libsql_index*.c
counts).

How it reads C (simple tokenising, no preprocessor):
- comments, string and character literals are blanked first;
- a function definition is a name followed by a parameter list and then '{' at brace depth 0;
  one declared `static` stays private to its file (another file's static of the same name
  is a different function);
- a use is any other occurrence of a name some other file defines (not static), anywhere in
  the file: inside a body, or in a method table's initializer.

Its limits: it does not expand macros (a function named only inside another file's macro
is not seen as used there; one named in a macro of the file itself is); both sides of an
#if count; calls through function pointers count where the pointer is taken, not where it is
called (which is what a layering rule wants); the shared header is not read, so a function
defined only in a header is invisible.
"""
import fnmatch
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_DIR = os.path.join(ROOT, "CSources", "vecsync")

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LABEL = re.compile(r"^/\* ---- (.*?) -+ \*/$")          # a section label of the header
FILE_NAME = re.compile(r"[A-Za-z0-9_*]+\.c\b")          # a file (or glob) a label names
DECLARATION = re.compile(r"^[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\(")
KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "do", "else", "case",
            "defined", "__attribute__", "_Alignof", "alignof", "__typeof__", "typeof"}


def blank(text):
    """The text with comments, string and character literals replaced by spaces (line
    breaks kept), so that no name inside them counts."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_preprocessor(text, keep_defines):
    """Blank preprocessor lines (with their continuations). With keep_defines, a #define's
    lines stay: the names in its body count as uses of the file that defines the macro."""
    out = []
    cont = False
    for line in text.split("\n"):
        directive = cont or line.lstrip().startswith("#")
        if not cont:
            define = line.lstrip().startswith("#define")
        cont = directive and line.rstrip().endswith("\\")
        out.append(line if not directive or (keep_defines and define) else "")
    return "\n".join(out)


def definitions(code):
    """(name, is_static, start, end) of each function defined at brace depth 0."""
    found = []
    depth = 0
    i, n = 0, len(code)
    statement_start = 0
    while i < n:
        c = code[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                statement_start = i + 1
        elif c == ";" and depth == 0:
            statement_start = i + 1
        elif depth == 0 and c == "(":
            m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", code[statement_start:i])
            if m and m.group(1) not in KEYWORDS:
                # Skip the parameter list; a definition has '{' next (after blanks).
                j, level = i, 0
                while j < n:
                    if code[j] == "(":
                        level += 1
                    elif code[j] == ")":
                        level -= 1
                        if level == 0:
                            break
                    j += 1
                k = j + 1
                while k < n and code[k].isspace():
                    k += 1
                if k < n and code[k] == "{":
                    head = code[statement_start:i]
                    name_start = statement_start + m.start(1)
                    is_static = re.search(r"\bstatic\b", head) is not None
                    found.append((m.group(1), is_static, name_start, name_start + len(m.group(1))))
                i = j
        i += 1
    return found


def read_files():
    """{file: (code for definitions, code for uses)}: comments and literals blanked; the
    first without any preprocessor line, the second with #define bodies."""
    files = {}
    for name in sorted(os.listdir(SOURCE_DIR)):
        if name.endswith(".c"):
            with open(os.path.join(SOURCE_DIR, name), encoding="utf-8") as f:
                text = blank(f.read())
            files[name] = (strip_preprocessor(text, False), strip_preprocessor(text, True))
    return files


def call_graph(files):
    """{a: {b: set(names)}}: file a names functions that file b defines."""
    defs = {name: definitions(code) for name, (code, _) in files.items()}
    owner = {}
    for fname, items in defs.items():
        for func, is_static, _, _ in items:
            if not is_static:
                if func in owner and owner[func] != fname:
                    raise SystemExit(f"check-c-calls: {func} is defined in {owner[func]} and {fname}")
                owner[func] = fname
    graph = {f: {} for f in files}
    for fname, (code, uses) in files.items():
        statics = {func for func, is_static, _, _ in defs[fname] if is_static}
        for m in IDENT.finditer(uses):
            func = m.group(0)
            target = owner.get(func)
            if target is None or target == fname or func in statics:
                continue
            graph[fname].setdefault(target, set()).add(func)
    return graph


def cycles(graph):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on_stack, result = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return result


def map_order():
    """The C files in the order vecsync_int.h's file map lists them."""
    with open(os.path.join(SOURCE_DIR, "vecsync_int.h"), encoding="utf-8") as f:
        return re.findall(r"^\*\*\s+([a-z0-9_]+\.c)\s", f.read(), re.M)


def label_problems(files):
    """Functions declared in a section of vecsync_int.h whose label does not name the file
    that defines them, and sections that name no file."""
    owner = {}
    for fname, (code, _) in files.items():
        for func, is_static, _, _ in definitions(code):
            if not is_static:
                owner[func] = fname
    with open(os.path.join(SOURCE_DIR, "vecsync_int.h"), encoding="utf-8") as f:
        raw = f.read()
    # The blanked copy keeps the line breaks: read it line by line beside the raw text.
    code_lines = strip_preprocessor(blank(raw), False).split("\n")
    problems = []
    label = "the top of the file, before any section label"
    for raw_line, line in zip(raw.split("\n"), code_lines):
        m = LABEL.match(raw_line)
        if m:
            label = m.group(1)
            if not FILE_NAME.findall(label):
                problems.append(f"vecsync_int.h: the section '{label}' names no file")
            continue
        d = DECLARATION.match(line)
        if not d or line.startswith(("typedef", "struct")) or d.group(1) not in owner:
            continue
        if not any(fnmatch.fnmatch(owner[d.group(1)], n) for n in FILE_NAME.findall(label)):
            problems.append(f"vecsync_int.h: {d.group(1)} is declared under '{label}', "
                            f"but defined in {owner[d.group(1)]}")
    return problems


def upward_edges(graph, order):
    """Edges from a file to one listed after it in the map (or not listed at all)."""
    rank = {name: i for i, name in enumerate(order)}
    found = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            if rank.get(b, len(order)) > rank.get(a, -1):
                found.append((a, b))
    return found


def main():
    files = read_files()
    graph = call_graph(files)
    upward = upward_edges(graph, map_order())
    labels = label_problems(files)
    for problem in labels:
        print("check-c-calls: " + problem)
    for a, b in upward:
        print(f"check-c-calls: {a} calls {b}, listed after it in vecsync_int.h's file map: "
              f"{', '.join(sorted(graph[a][b]))}")
    if "--graph" in sys.argv[1:]:
        for a in sorted(graph):
            for b in sorted(graph[a]):
                print(f"{a} -> {b}: {', '.join(sorted(graph[a][b]))}")
    found = cycles(graph)
    for component in found:
        members = set(component)
        print("check-c-calls: these files call each other in a circle: " + ", ".join(component))
        for a in component:
            for b in sorted(graph[a]):
                if b in members:
                    print(f"  {a} -> {b}: {', '.join(sorted(graph[a][b]))}")
    edges = sum(len(v) for v in graph.values())
    if found:
        print(f"check-c-calls: {len(found)} cycle(s) among {len(files)} files")
    if found or upward or labels:
        return 1
    print(f"check-c-calls: {len(files)} C files, {edges} file-to-file edges, no cycle, "
          f"every call goes down vecsync_int.h's file map, its section labels name their files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
