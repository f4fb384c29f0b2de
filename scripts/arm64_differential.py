#!/usr/bin/env python3
"""The aarch64 build of the extension against the x86-64 one: same SQL, same answers.

    scripts/arm64_differential.py --host-shell sqlite3 --host-ext .build/arm64/x86_64/libvecsync \
        --arm-shell .build/arm64/sqlite3-aarch64 --arm-ext .build/arm64/aarch64/libvecsync [--seed N]

Runs every script twice, once in each `sqlite3` shell with its own build loaded, and
compares the output line by line:

- the shell SQL cases of sql/ (demo.sql, demo-errors.sql, choir.sql), and
- a generated workload (seeded; the seed is printed, `--seed` replays it): vector codecs
  (text, float64, vector8/16/b16/1bit blobs), sqlite-vec's scalar functions, vec0 KNN
  under every metric and element type with filters, distance bounds, duplicates and near
  ties, rescore tables, vector_top_k, and vecsync_knn_batch with 1, 16 and 40 queries.

The workload marks each section with `select '#exact NAME'` or `select '#approx NAME'`.
In an exact section every line must be the same text but for its numbers, which must be
the same doubles (blobs are printed as hex, doubles with 17 digits: one ulp shows; the
last of 17 digits may be rounded either way, as SQLite's printf rounds a halfway digit
by its long double, 80 bits on x86-64 and 128 on aarch64). In an approximate section rows must come in the same order
with the same integers (rowids, counts) and each other number within 1e-5 relative: the
scan's float32 kernels (AVX2 on x86-64, plain C on aarch64) and BLAS add in different
orders, and the distances reported come from those sums. Exits 1 on the first section that
differs, printing both sides.
"""
import argparse
import os
import random
import re
import struct
import subprocess
import sys
import time

REL_TOL = 1e-5
NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?Inf|NaN")
INTEGER = re.compile(r"-?\d+$")


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def vec_text(v):
    return "[" + ",".join(repr(x) for x in v) + "]"


def vec_blob(v):
    return "x'" + struct.pack("<%df" % len(v), *v).hex() + "'"


class Workload:
    """SQL statements in sections, each marked for the comparison."""

    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.lines = [".nullvalue NULL", ".mode list", ".bail off"]

    def section(self, kind, name):
        self.lines.append("select '#%s %s';" % (kind, name))

    def sql(self, statement):
        self.lines.append(statement)

    def gauss_vector(self, dim, digits=None):
        v = [self.rnd.gauss(0.0, 1.0) for _ in range(dim)]
        return [f32(round(x, digits) if digits else x) for x in v]

    def text(self):
        return "\n".join(self.lines) + "\n"


def codecs(w):
    """Text and blob codecs, sqlite-vec's arithmetic, double distances: bit-exact."""
    w.section("exact", "codecs")
    texts = []
    for i in range(40):
        dim = w.rnd.choice([1, 3, 8, 17, 64])
        # Long decimals (more digits than a float holds) and wide exponents.
        a = [w.rnd.choice([w.rnd.gauss(0, 1), w.rnd.uniform(-1e3, 1e3), w.rnd.uniform(-1e-3, 1e-3)])
             for _ in range(dim)]
        b = [w.rnd.gauss(0, 2) for _ in range(dim)]
        ta = "[" + ",".join("%.12g" % x for x in a) + "]"
        tb = "[" + ",".join("%.9g" % x for x in b) + "]"
        w.sql("select %d, hex(vector32('%s')), hex(vector64('%s'));" % (i, ta, ta))
        w.sql("select hex(vector8('%s')), hex(vector32(vector8('%s')));" % (ta, ta))
        w.sql("select hex(vector16('%s')), hex(vectorb16('%s')), hex(vector1bit('%s'));" % (ta, ta, ta))
        w.sql("select hex(vector32(vector16('%s'))), hex(vector64(vectorb16('%s')));" % (ta, ta))
        texts.append(ta)
        w.sql("select hex(vec_normalize('%s')), hex(vec_normalize(vector64('%s')));" % (ta, ta))
        for fn in ("vector_distance_l2", "vector_distance_cos"):
            for cast in ("vector32", "vector64", "vector8", "vector16"):
                w.sql("select printf('%%!.17g', %s(%s('%s'), %s('%s')));" % (fn, cast, ta, cast, tb))
        for fn in ("vec_distance_l2", "vec_distance_cosine", "vec_distance_l1"):
            w.sql("select printf('%%!.17g', %s('%s', '%s'));" % (fn, ta, tb))
        w.sql("select hex(vec_add('%s', '%s')), hex(vec_sub('%s', '%s'));" % (ta, tb, ta, tb))
        w.sql("select vec_length('%s'), vec_type('%s');" % (ta, ta))
        if dim % 8 == 0:
            w.sql("select hex(vec_quantize_binary('%s'));" % ta)
            w.sql("select hex(vec_quantize_int8(vec_normalize('%s'), 'unit'));" % ta)
            ia = [w.rnd.randint(-128, 127) for _ in range(dim)]
            ib = [w.rnd.randint(-128, 127) for _ in range(dim)]
            for fn in ("vec_distance_l2", "vec_distance_cosine", "vec_distance_l1"):
                w.sql("select printf('%%!.17g', %s(vec_int8('%s'), vec_int8('%s')));"
                      % (fn, vec_text(ia), vec_text(ib)))
            w.sql("select vec_distance_hamming(vec_quantize_binary('%s'), vec_quantize_binary('%s'));"
                  % (ta, tb))
    # Decimal text: SQLite's printf rounds a halfway digit by its long double, which
    # differs between the two (x86-64's 80 bits, aarch64's 128), so this text is compared
    # as numbers, within the tolerance.
    w.section("approx", "codecs as text")
    for ta in texts:
        w.sql("select vector_extract(vector8('%s')), vector_extract(vector16('%s'));" % (ta, ta))
        w.sql("select vector_extract(vector64('%s')), vector_extract(vector32('%s'));" % (ta, ta))
    # Errors are answers too: the same text on both.
    for bad in ("'[1,2'", "'[1e999]'", "x'0000'", "'[]'", "NULL"):
        w.sql("select vector_extract(vector32(%s));" % bad)
        w.sql("select vec_normalize(%s);" % bad)


def vec0_tables(w):
    """vec0 KNN, all metrics and element types: rowids exact, distances to 1e-5."""
    for metric in ("l2", "cosine", "dot", "l1"):
        dim = w.rnd.choice([7, 16, 33, 96])
        name = "f_" + metric
        w.section("approx", "vec0 float " + metric)
        w.sql("create virtual table %s using vec0(id integer primary key, e float[%d] distance_metric=%s,"
              " cat text, n integer, chunk_size=64);" % (name, dim, metric))
        w.sql("begin;")
        base = [w.gauss_vector(dim, 5) for _ in range(12)]
        rows = 700
        for i in range(1, rows + 1):
            if i % 3 == 0:
                # Duplicates and scaled copies: ties and near-ties across the k-th row.
                v = [f32(x * w.rnd.choice([1.0, 2.0, 3.0, 0.5])) for x in w.rnd.choice(base)]
            else:
                v = w.gauss_vector(dim, 5)
            w.sql("insert into %s(id, e, cat, n) values (%d, %s, '%s', %d);"
                  % (name, i, vec_blob(v), "abc"[i % 3], i % 10))
        w.sql("commit;")
        w.sql("delete from %s where id %% 37 = 0;" % name)
        for j in range(12):
            q = w.rnd.choice(base) if j % 2 else w.gauss_vector(dim, 5)
            k = w.rnd.choice([1, 5, 10, 40])
            w.sql("select id, distance from %s where e match %s and k = %d;" % (name, vec_blob(q), k))
            w.sql("select id, distance from %s where e match %s and k = %d and cat = 'b' and n < 7;"
                  % (name, vec_blob(q), k))
            if metric != "dot":
                w.sql("select count(*) from %s where e match %s and k = 1000 and distance > 0.5;"
                      % (name, vec_blob(q)))
        queries = [w.gauss_vector(dim, 5) for _ in range(40)]
        if metric != "l1":
            for n in (1, 16, 40):
                blob = "x'" + b"".join(struct.pack("<%df" % dim, *q) for q in queries[:n]).hex() + "'"
                w.sql("select query_index, id, distance from vecsync_knn_batch('%s', %s, 7);" % (name, blob))

    for quant in ("int8", "bit"):
        dim = 64
        name = "r_" + quant
        w.section("approx", "vec0 rescore " + quant)
        w.sql("create virtual table %s using vec0(e float[%d] distance_metric=cosine"
              " indexed by rescore(quantizer=%s, oversample=8));" % (name, dim, quant))
        w.sql("begin;")
        for i in range(1, 400):
            w.sql("insert into %s(rowid, e) values (%d, %s);" % (name, i, vec_blob(w.gauss_vector(dim, 4))))
        w.sql("commit;")
        for _ in range(8):
            w.sql("select rowid, distance from %s where e match %s and k = 10;"
                  % (name, vec_blob(w.gauss_vector(dim, 4))))

    for elem, dim in (("int8", 32), ("bit", 64)):
        name = "t_" + elem
        metrics = ("l2", "cosine", "l1") if elem == "int8" else ("",)
        for metric in metrics:
            w.section("approx", "vec0 %s %s" % (elem, metric))
            clause = " distance_metric=" + metric if metric else ""
            table = name + metric
            w.sql("create virtual table %s using vec0(e %s[%d]%s);" % (table, elem, dim, clause))
            w.sql("begin;")
            for i in range(1, 300):
                if elem == "int8":
                    v = [w.rnd.randint(-128, 127) for _ in range(dim)]
                    w.sql("insert into %s(rowid, e) values (%d, vec_int8('%s'));" % (table, i, vec_text(v)))
                else:
                    w.sql("insert into %s(rowid, e) values (%d, vec_bit(x'%s'));"
                          % (table, i, bytes(w.rnd.getrandbits(8) for _ in range(dim // 8)).hex()))
            w.sql("commit;")
            for _ in range(6):
                if elem == "int8":
                    q = "vec_int8('%s')" % vec_text([w.rnd.randint(-128, 127) for _ in range(dim)])
                else:
                    q = "vec_bit(x'%s')" % bytes(w.rnd.getrandbits(8) for _ in range(dim // 8)).hex()
                w.sql("select rowid, distance from %s where e match %s and k = 12;" % (table, q))


def vector_top_k(w):
    """libSQL's vector index: the same ids in the same order."""
    w.section("approx", "vector_top_k")
    dim = 24
    w.sql("create table docs(id integer primary key, emb F32_BLOB(%d));" % dim)
    w.sql("create index docs_idx on docs(libsql_vector_idx(emb, 'metric=cosine'));")
    w.sql("begin;")
    for i in range(1, 300):
        w.sql("insert into docs values (%d, vector32('%s'));" % (i, vec_text(w.gauss_vector(dim, 5))))
    w.sql("commit;")
    for _ in range(10):
        q = vec_text(w.gauss_vector(dim, 5))
        w.sql("select d.id, vector_distance_cos(d.emb, vector32('%s')) from vector_top_k('docs_idx', "
              "vector32('%s'), 8) t join docs d on d.id = t.id;" % (q, q))


def generate(seed):
    w = Workload(seed)
    codecs(w)
    vec0_tables(w)
    vector_top_k(w)
    return w.text()


def run_shell(shell, ext, script):
    cmd = shell + ["-batch", "-cmd", ".load " + ext, ":memory:"]
    out = subprocess.run(cmd, input=script, capture_output=True, text=True, timeout=600)
    # Errors go to stderr, interleaved by the shell in statement order only when merged.
    return out.stdout.splitlines(), out.stderr.splitlines(), out.returncode


def sections(lines):
    result, name = [], ("exact", "preamble")
    body = []
    for line in lines:
        if line.startswith("#exact ") or line.startswith("#approx "):
            result.append((name, body))
            kind, _, title = line[1:].partition(" ")
            name, body = (kind, title), []
        else:
            body.append(line)
    result.append((name, body))
    return result


def close(a, b, tol):
    """Whether two lines agree: the same text around their numbers, the same integers,
    and other numbers within tol relative (0: the same double)."""
    if a == b:
        return True
    ta, tb = NUMBER.findall(a), NUMBER.findall(b)
    if len(ta) != len(tb) or NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    for x, y in zip(ta, tb):
        if INTEGER.match(x) and INTEGER.match(y):
            if x != y:
                return False
            continue
        fx, fy = float(x), float(y)
        if fx != fy and not abs(fx - fy) <= tol * max(abs(fx), abs(fy)):
            return False
    return True


def compare(label, host, arm):
    hs, as_ = sections(host), sections(arm)
    if [n for n, _ in hs] != [n for n, _ in as_]:
        print("%s: the two runs printed different sections" % label)
        return False
    ok = True
    for (name, hb), (_, ab) in zip(hs, as_):
        tol = 0.0 if name[0] == "exact" else REL_TOL
        bad = len(hb) != len(ab) or any(not close(h, a, tol) for h, a in zip(hb, ab))
        if bad:
            ok = False
            print("%s: section '%s' (%s) differs" % (label, name[1], name[0]))
            shown = 0
            for i in range(max(len(hb), len(ab))):
                h = hb[i] if i < len(hb) else "<none>"
                a = ab[i] if i < len(ab) else "<none>"
                if not close(h, a, tol):
                    print("  line %d\n    x86-64:  %s\n    aarch64: %s" % (i + 1, h, a))
                    shown += 1
                    if shown == 8:
                        break
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host-shell", default="sqlite3")
    ap.add_argument("--host-ext", required=True)
    ap.add_argument("--arm-shell", required=True, help="a command that runs the aarch64 sqlite3")
    ap.add_argument("--arm-ext", required=True)
    ap.add_argument("--sql-dir", default=os.path.join(os.path.dirname(__file__), "..", "sql"))
    ap.add_argument("--seed", type=lambda s: int(s, 0), default=None)
    args = ap.parse_args()
    # A fixed seed, so make test passes or fails the same way on the same code; a new one
    # under make soak's VECSYNC_EXPLORE=1 (a failing one becomes --seed of a rerun, and a case).
    if args.seed is not None:
        seed = args.seed
    elif os.environ.get("VECSYNC_EXPLORE") == "1":
        seed = random.SystemRandom().randrange(1 << 32)
    else:
        seed = 2026112800
    print("arm64 differential: seed %d (replay with --seed %d)" % (seed, seed))

    scripts = []
    for name in ("demo.sql", "demo-errors.sql", "choir.sql"):
        with open(os.path.join(args.sql_dir, name)) as f:
            # vecsync_debug() names the platform's BLAS and SIMD: the one answer that differs.
            text = f.read().replace("select vecsync_debug()", "select 'vecsync_debug(): per platform'")
            scripts.append(("sql/" + name, ".nullvalue NULL\n.bail off\n" + text))
    scripts.append(("workload", generate(seed)))

    from concurrent.futures import ThreadPoolExecutor
    host_shell, arm_shell = args.host_shell.split(), args.arm_shell.split()
    failed = 0
    with ThreadPoolExecutor(max_workers=2) as pool:
        for label, script in scripts:
            t0 = time.time()
            fh = pool.submit(run_shell, host_shell, args.host_ext, script)
            fa = pool.submit(run_shell, arm_shell, args.arm_ext, script)
            (ho, he, hrc), (ao, ae, arc) = fh.result(), fa.result()
            ok = compare(label, ho, ao)
            if he != ae:
                ok = False
                print("%s: error messages differ\n  x86-64:  %s\n  aarch64: %s"
                      % (label, he[:5], ae[:5]))
            if hrc != arc:
                ok = False
                print("%s: exit status %d on x86-64, %d on aarch64" % (label, hrc, arc))
            print("%s %s: %d lines, %d errors, %.1f s"
                  % ("ok  " if ok else "FAIL", label, len(ho), len(he), time.time() - t0))
            failed += not ok
    print("%d passed, %d failed" % (len(scripts) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
