#!/usr/bin/env python3
"""fuzz/make_seeds.py: write the seed corpus of each harness into fuzz/corpus/<harness>/.

    python3 fuzz/make_seeds.py          # rewrites the committed seeds

The seeds are committed; this script only documents how they were made and remakes them
after a harness changes its input format. Each seed is a small program in the byte
format its harness decodes (see the comments at the top of each fuzz_*.c); the encoders
below mirror those decoders. Check a seed with VECSYNC_FUZZ_TRACE=1 .build/fuzz/<h> FILE,
which prints the SQL it runs.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# fuzzInterestingInt's table (fuzz_common.h): a byte below 192 picks aVal[byte % 37].
INTERESTING = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 256, 1023, 1024, 1025,
               4096, 65535, 65536, 65537, -1, -2, -5, -8, -1024, 2147483647, -2147483648,
               4294967295, 4294967296, 34359738368, 1099511627776, 9223372036854775807,
               -9223372036854775808, 9223372036854775806, 4611686018427387904]


def interesting(v):
    return bytes([INTERESTING.index(v)])


def write(harness, name, data):
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))


# ---- fuzz_vector_parse: flags, split, then the vector bytes ----------------------------

def parse_seeds():
    h = "fuzz_vector_parse"
    write(h, "text-pair", b"\x04\x80" + b"[1, 2.5, -3e-2][0,1,0]")
    write(h, "text-spaces", b"\x04\x60" + b" [ 1 ,2 ,\t3 ] [4,5,6]  ")
    write(h, "f32-blob", b"\x04\x80" + struct.pack("<4f", 1, 2, 3, 4) + struct.pack("<4f", 4, 3, 2, 1))
    write(h, "f64-typed", b"\x06\x80" + struct.pack("<3d", 1.5, -2, 1e300))
    write(h, "f32-typed", b"\x05\x80" + struct.pack("<2f", 0.5, 0.25))
    write(h, "nan-inf", b"\x04\x80" + b"[nan, inf, -inf][1e39, -1e39, 1e-46]")
    write(h, "empty", b"\x04\x80" + b"[][]")
    write(h, "zero-vectors", b"\x04\x80" + b"[0,0,0][0,0,0]")
    write(h, "bad-text", b"\x04\x80" + b"[1,,2][1 2][\x00][1,2")
    write(h, "exponents", b"\x04\x80" + b"[1e,2e+,.5,-.5e-3,0x10][+1,-0,1E2]")
    write(h, "ragged-blob", b"\x04\x80" + bytes(range(1, 12)))
    write(h, "nested", b"\x04\x80" + b"[[1],[2]][{\"a\":1}]")


# ---- fuzz_vec0: a declaration, then operations -----------------------------------------

OP_INSERT, OP_INSERT_SELECT, OP_UPDATE, OP_DELETE, OP_TXN = 0, 4, 5, 6, 7
OP_KNN, OP_ORACLE, OP_NESTED, OP_POINT, OP_SCAN, OP_BATCH, OP_SCHEMA = 8, 10, 11, 12, 13, 14, 15
DIST_OPS = ["<", "<=", ">", ">="]
TYPES = ["text", "integer", "int", "float", "real", "double", "boolean", "bool", "blob", ""]
METRICS = ["cosine", "l2", "dot", "L2", "manhattan", "l1", "hamming"]
CHUNKS = [8, 16, 24, 64, 1024, 65536, 0, 7, 12, 65544, -8]
TXN = ["BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT s1", "SAVEPOINT s2", "RELEASE s1",
       "ROLLBACK TO s1", "ROLLBACK TO s2", "RELEASE s2", "BEGIN IMMEDIATE", "END"]
FILTER_OPS = ["=", "<>", "!=", "<", "<=", ">", ">=", "IS", "IS NOT", "==",
              "IS NULL", "IS NOT NULL", "IN", "IN", "NOT IN", "IN SELECT", "BETWEEN", "distance"]


class Vec0:
    """Encoder mirroring fuzz_vec0.c's decoder."""

    def __init__(self, pk="text", dims=4, metric=None, cols=(), chunk=None, flags=0, elem="float"):
        self.pk = {"none": 0, "text": 1, "integer": 2}[pk]
        self.dims = dims
        self.elem = elem                 # float, int8 (dims 1..40) or bit (dims 8..64)
        self.cols = list(cols)           # (type, aux); ("vec", i): aVecType[i], a further
                                         # vector column
        self.nvec = sum(1 for t, _ in self.cols if t == "vec")
        b = bytearray()
        f = flags
        if metric is not None:
            f |= 4
        if chunk is not None:
            f |= 2                       # chunk_size last
        f |= {"float": 0, "int8": 0x80, "bit": 0xC0}[elem]
        b.append(f)
        b.append(CHUNKS.index(chunk) if chunk is not None else 15)
        b.append(self.pk)
        b.append(dims // 8 - 1 if elem == "bit" else dims - 1)
        b.append(len(self.cols))
        for t, aux in self.cols:
            b.append(120 + aux if t == "vec" else (0x80 if aux else 0) | TYPES.index(t))
        if metric is not None:
            b.append(METRICS.index(metric))
        self.b = b

    # values
    def key(self, k):
        """A small key: 'k<n>' for a text pk, else the integer n (0..15)."""
        return bytes([(k & 15) << 3])

    def vec(self, values):
        """A float32 blob of the right dimensions, each element a byte/16."""
        out = bytearray([0, 3])          # form 0 (f32 blob), fill 3 (one byte each)
        for v in values:
            out.append(int(v * 16) & 0xff)
        return bytes(out)

    def vec_bytes(self, data):
        """An int8 or bit column's vector: its bytes, as the column takes them."""
        return bytes([0]) + bytes(data)

    def vec_text(self, values):
        out = bytearray([3, 3])          # form 3 (text), fill 3 (byte/8)
        for v in values:
            out.append(int(v * 8) & 0xff)
        return bytes(out)

    def vec_special(self, fill):
        """fill 0: zero vector, 2: one-hot."""
        return bytes([0, fill])

    def vec_nan(self):
        return bytes([0, 1]) + bytes([2]) * self.dims   # fuzzDouble case 2: NaN

    def vec_wrong_dims(self):
        return bytes([0xC0, 6, 2])       # dims + 2, one-hot

    def colval(self, i, v):
        t = self.cols[i][0]
        if t == "vec":
            return bytes([0]) + v        # v: an encoded vector (vec(), vec_bytes())
        if t == "text":
            return bytes([v & 3])        # 'a<v>'
        if t in ("integer", "int"):
            return bytes([(v + 3) % 16])
        if t in ("boolean", "bool"):
            return bytes([v & 1])
        if t in ("float", "real", "double"):
            return bytes([(v + 3) % 16])
        return bytes([208])              # NULL

    # operations
    def insert(self, key, vec, vals=None, conflict=0):
        flags = 0
        if key is not None:
            flags |= 1
        if vals is not None:
            flags |= 4
        self.b += bytes([OP_INSERT, flags, conflict])
        if vals is None:
            self.b += bytes([0]) * len(self.cols)       # no metadata columns
        if key is not None:
            self.b += self.key(key)
        self.b += vec
        if vals is not None:
            for i, v in enumerate(vals):
                self.b += self.colval(i, v)

    def knn(self, vec, k=None, limit=None, filters=(), proj=0, interrupt=None, match=None,
            both=False):
        """filters: list of (column, op, values): column 'id', 'rowid' or int index.
        match: the n-th further vector column MATCH is on (None: the first vector column);
        both: MATCH on it and on the first (refused)."""
        form = 0 if limit is None else (2 if k is not None else 1)
        if k is None and limit is None:
            form = 3
        assert len(filters) <= 4
        flags = form | (len(filters) << 2)
        self.b += bytes([OP_KNN, flags])
        if self.pk:
            self.b.append(32)            # not the "id, distance" projection
        self.b.append(proj)
        if self.nvec:
            if match is None:
                self.b.append(0)
            else:
                base = 240 if both else 96
                self.b.append(base + ((match - base) % self.nvec))
        binds = []
        for col, op, vals in filters:
            self.b += self.column(col)
            self.b.append(FILTER_OPS.index(op) if op != "IN" else 12)
            if op in ("IN", "NOT IN"):
                self.b.append(len(vals) - 1)
            binds += [(col, v) for v in vals]
        self.b += vec if match is None else bytes([0]) + vec
        for kv in (k, limit):
            if kv is None:
                continue
            if 1 <= kv <= 12:
                self.b.append(kv - 1)
            else:
                self.b += bytes([128]) + interesting(kv)
        for col, v in binds:
            self.b += self.key(v) if col in ("id", "rowid") else self.colval(col, v)
        if interrupt is None:
            self.b.append(0)
        else:
            self.b += bytes([1]) + struct.pack("<H", interrupt - 1)

    def column(self, col):
        if col == "id":
            return bytes([0])
        if col == "rowid":
            return bytes([50])
        if self.nvec:
            return bytes([64 + (col - 64) % len(self.cols)])   # picks m<col>
        return bytes([64 + col])         # 64 % nCol == 0 for the other seeds' column counts

    def delete(self, col, v):
        self.b += bytes([OP_DELETE, 0]) + self.column(col) + bytes([0])   # col = ?
        self.b += self.key(v) if col in ("id", "rowid") else self.colval(col, v)

    def update_vec(self, col, v, vec):
        self.b += bytes([OP_UPDATE, 0x01, 0]) + self.column(col) + bytes([0]) + vec
        self.b += self.key(v) if col in ("id", "rowid") else self.colval(col, v)

    def txn(self, what):
        self.b += bytes([OP_TXN, TXN.index(what)])

    def point(self, which, a, b):
        self.b += bytes([OP_POINT, which]) + self.key(a) + self.key(b)

    def scan(self, which):
        self.b += bytes([OP_SCAN, which])

    def nested(self, which, rowid=1, k=3):
        self.b += bytes([OP_NESTED, which, rowid + 2, 0, k - 1]) + self.vec_special(2)

    def batch(self, queries, k=3):
        self.b += bytes([OP_BATCH, len(queries)])
        for q in queries:
            self.b += bytes(int(v * 16) & 0xff for v in q)
        self.b += bytes([0, 0, 0, k - 1])

    def schema(self, which, arg=0):
        self.b += bytes([OP_SCHEMA, which])
        if which == 2:                   # the trigger case reads a rowid
            self.b.append(arg)

    def oracle(self, from_row=None, k=5, bounds=()):
        """A KNN checked against brute force: the query is the vector of the first row at or
        after rowid from_row (None: a zero-ish vector of small values); bounds: (op, value)
        with value a number (a multiple of 1/8) or ("row", i), the i-th row's distance."""
        self.b += bytes([OP_ORACLE])
        if from_row is None:
            self.b += bytes([0]) + bytes([4]) * (self.dims if self.elem != "bit" else self.dims // 8)
        else:
            self.b.append(1 | (from_row << 1))
        self.b.append(k - 1 if 1 <= k <= 12 else 224 + (k - 100) % 32)
        self.b.append(len(bounds))
        for op, value in bounds:
            if isinstance(value, tuple):
                self.b += bytes([DIST_OPS.index(op) | 4, value[1]])
            else:
                self.b += bytes([DIST_OPS.index(op), int(value * 8) & 0xff])

    def big_table(self, dims_index, chunk_index, elem=0):
        """A second table of float[1024|4096|16384|65536] (int8, bit) with chunk_size
        8|1024|8192|65536: refused past the block limit, else one row and one query."""
        self.b += bytes([OP_SCHEMA, 4, dims_index | (chunk_index << 2) | (elem << 4), 0])

    def insert_select(self, conflict=0, limit=8, delta=20):
        self.b += bytes([OP_INSERT_SELECT, conflict, limit - 1])
        if self.pk == 2:
            self.b.append(delta + 4)


def vec0_seeds():
    h = "fuzz_vec0"
    V = lambda *a: list(a)

    # 1. Text key, cosine, metadata of three types and an auxiliary column.
    p = Vec0("text", 4, "cosine", [("text", 0), ("integer", 0), ("float", 0), ("text", 1)])
    for i in range(6):
        p.insert(i, p.vec(V(i + 1, 1, -i, 0.5)), vals=[i, i, i, i])
    p.knn(p.vec(V(1, 1, 0, 0)), k=3)
    p.knn(p.vec(V(1, 1, 0, 0)), k=5, filters=[(0, "=", [1]), (1, ">", [2])])
    p.point(1, 2, 0)
    p.delete("id", 3)
    p.knn(p.vec(V(1, 0, 1, 0)), limit=4)
    p.scan(0)
    write(h, "text-pk-cosine-filters", p.b)

    # 1b. Three vector columns: the first (l2), m0 float[3] cosine, m2 int8[5] l2, and an
    # integer m1: KNN on each, filtered, after an update and a delete; two MATCHes.
    p = Vec0("none", 3, "l2", [("vec", 1), ("integer", 0), ("vec", 4)])
    for i in range(8):
        p.insert(i + 1, p.vec(V(i, 1, -i)),
                 vals=[p.vec(V(1, i, 0.5)), i % 3, p.vec_bytes([i, 2, 250, 0, 7])])
    p.knn(p.vec(V(1, 1, 0)), k=3)
    p.knn(p.vec(V(1, 2, 0)), k=4, match=0)
    p.knn(p.vec_bytes([1, 1, 1, 1, 1]), k=3, match=1, filters=[(1, "=", [1])])
    p.update_vec("rowid", 2, p.vec(V(3, 3, 3)))
    p.delete("rowid", 3)
    p.knn(p.vec(V(0, 1, 0)), limit=5, match=0)
    p.knn(p.vec(V(0, 1, 0)), k=2, match=0, both=True)
    p.scan(0)
    write(h, "multi-vector", p.b)

    # 2. Integer key, l2, chunk_size=8: rows past a block, deletes, slot reuse.
    p = Vec0("integer", 2, "l2", [("integer", 0)], chunk=8)
    for i in range(12):
        p.insert(i, p.vec(V(i, -i)), vals=[i])
    p.delete("id", 2)
    p.delete("id", 5)
    p.insert(13, p.vec(V(1, 1)), vals=[1])
    p.insert(14, p.vec(V(2, 2)), vals=[2])
    p.knn(p.vec(V(1, 1)), limit=5)
    p.knn(p.vec(V(1, 1)), k=3, filters=[("id", ">=", [4]), (0, "IN", [1, 2, 3])])
    write(h, "int-pk-l2-chunk8", p.b)

    # 3. No key (rowid), dot, savepoints and rollbacks around writes.
    p = Vec0("none", 3, "dot", [("boolean", 0)])
    p.insert(1, p.vec(V(1, 0, 0)), vals=[1])
    p.txn("BEGIN")
    p.insert(2, p.vec(V(0, 1, 0)), vals=[0])
    p.txn("SAVEPOINT s1")
    p.insert(3, p.vec(V(0, 0, 1)), vals=[1])
    p.update_vec("rowid", 1, p.vec(V(2, 2, 2)))
    p.knn(p.vec(V(1, 1, 1)), k=2)
    p.txn("ROLLBACK TO s1")
    p.knn(p.vec(V(1, 1, 1)), k=2, filters=[(0, "=", [1])])
    p.txn("ROLLBACK")
    p.knn(p.vec(V(1, 1, 1)), k=2)
    write(h, "rowid-dot-savepoints", p.b)

    # 4. k at the edges: 0, -1, 2^63-1, and LIMIT huge.
    p = Vec0("text", 2, None, [])
    for i in range(3):
        p.insert(i, p.vec(V(i, 1)))
    for k in (0, -1, 9223372036854775807, 1024):
        p.knn(p.vec(V(1, 1)), k=k)
    p.knn(p.vec(V(1, 1)), limit=9223372036854775807)
    p.knn(p.vec(V(1, 1)), k=2, limit=-5)
    p.knn(p.vec(V(1, 1)))            # neither k nor LIMIT
    write(h, "k-edges", p.b)

    # 5. Bad vectors: NaN, zero under cosine, wrong dimensions, text.
    p = Vec0("text", 3, "cosine", [("text", 0)])
    p.insert(1, p.vec_nan(), vals=[1])
    p.insert(2, p.vec_special(0), vals=[1])
    p.insert(3, p.vec_wrong_dims(), vals=[1])
    p.insert(4, p.vec_text(V(1, 2, 3)), vals=[2])
    p.insert(5, p.vec(V(1, 0, 0)), vals=[2])
    p.knn(p.vec_special(0), k=2)
    p.knn(p.vec_nan(), k=2)
    p.knn(p.vec_text(V(1, 2, 3)), k=2)
    write(h, "bad-vectors", p.b)

    # 6. INSERT OR REPLACE and OR IGNORE on colliding keys, then point lookups.
    p = Vec0("text", 2, "l2", [("integer", 0)])
    p.insert(1, p.vec(V(1, 1)), vals=[1])
    p.insert(1, p.vec(V(2, 2)), vals=[2], conflict=1)
    p.insert(1, p.vec(V(3, 3)), vals=[3], conflict=2)
    p.insert(1, p.vec(V(4, 4)), vals=[4])
    p.insert_select(conflict=1)
    p.point(1, 1, 1)
    p.point(3, 1, 2)
    p.knn(p.vec(V(1, 1)), k=4)
    write(h, "insert-or-replace", p.b)

    # 7. An interrupt part way through a filtered KNN.
    p = Vec0("integer", 4, "l2", [("text", 0), ("integer", 0)], chunk=16)
    for i in range(10):
        p.insert(i, p.vec(V(i, 0, 1, -i)), vals=[i, i])
    for n in (1, 3, 10, 40):
        p.knn(p.vec(V(1, 0, 1, 0)), k=5, filters=[(0, "<>", [2])], interrupt=n)
    p.knn(p.vec(V(1, 0, 1, 0)), k=5)
    write(h, "interrupt-knn", p.b)

    # 8. vecsync_knn_batch over the table.
    p = Vec0("text", 2, "l2", [])
    for i in range(5):
        p.insert(i, p.vec(V(i, -i)))
    p.batch([V(1, 1), V(0, 2), V(1, 0)], k=2)
    p.batch([], k=1)
    write(h, "knn-batch", p.b)

    # 9. Every filter operator on the key, the rowid and metadata.
    p = Vec0("text", 2, "l2", [("text", 0), ("integer", 0)])
    for i in range(8):
        p.insert(i, p.vec(V(i, 1)), vals=[i, i])
    p.knn(p.vec(V(1, 1)), k=8, filters=[("id", "IN", [1, 2, 3]), (0, "IS NOT NULL", [])])
    p.knn(p.vec(V(1, 1)), k=8, filters=[("rowid", "<=", [5]), (0, "IS", [1])])
    p.knn(p.vec(V(1, 1)), k=8, filters=[(0, "IS NULL", []), (0, "NOT IN", [1, 2])])
    p.knn(p.vec(V(1, 1)), k=8, filters=[(0, "BETWEEN", []), (0, "<", [2]), (0, ">=", [0])])
    p.knn(p.vec(V(1, 1)), k=8, filters=[("id", "!=", [4]), (0, "IN SELECT", [])])
    write(h, "filter-operators", p.b)

    # 10. KNN nested in scans, subqueries and writes; rename; drop and recreate.
    p = Vec0("integer", 3, "cosine", [("integer", 0)])
    for i in range(6):
        p.insert(i + 1, p.vec(V(i + 1, 1, 0)), vals=[i])
    for which in range(6):
        p.nested(which)
    p.schema(0)
    p.knn(p.vec(V(1, 1, 0)), k=2)
    p.schema(1)
    p.insert(1, p.vec(V(1, 1, 1)), vals=[0])
    p.knn(p.vec(V(1, 1, 0)), k=2)
    write(h, "nested-rename-drop", p.b)

    # 11. 70 columns: past vec0's 64-column limit (the harness falls back to a plain table).
    p = Vec0("text", 2, "l2", [("integer", i % 2) for i in range(70)])
    write(h, "too-many-columns", p.b)

    # 12. 63 metadata columns plus key and vector: at the limit.
    p = Vec0("integer", 1, None, [("integer", 0)] * 62)
    p.insert(1, p.vec(V(1)), vals=[1] * 62)
    p.knn(p.vec(V(1)), k=1, filters=[(0, "=", [1])])
    write(h, "sixty-four-columns", p.b)

    # 13. An int8 column under l1: ties, a delete, a filter, a range, -128 and 127.
    p = Vec0("integer", 20, "l1", [("integer", 0)], chunk=8, elem="int8")
    for i in range(10):
        p.insert(i + 1, p.vec_bytes([(i * 37 + j * 11) & 0xff for j in range(20)]), vals=[i % 3])
    p.insert(11, p.vec_bytes([0x80] * 10 + [0x7f] * 10), vals=[1])
    p.delete("id", 4)
    p.knn(p.vec_bytes([j & 0xff for j in range(20)]), k=5)
    p.knn(p.vec_bytes([0x7f] * 20), k=3, filters=[(0, "=", [1])])
    p.knn(p.vec_bytes([0] * 20), limit=4)
    write(h, "int8-l1", p.b)

    # 14. A bit column: Hamming distances, duplicates, a transaction rolled back.
    p = Vec0("text", 24, None, [("text", 0)], chunk=8, elem="bit")
    for i in range(9):
        p.insert(i, p.vec_bytes([i * 29 & 0xff, 0x0f, i & 0xff]), vals=[i])
    p.txn("BEGIN")
    p.delete("id", 2)
    p.insert(12, p.vec_bytes([0xff, 0xff, 0xff]), vals=[1])
    p.knn(p.vec_bytes([0, 0x0f, 0]), k=4)
    p.txn("ROLLBACK")
    p.knn(p.vec_bytes([0, 0x0f, 0]), k=4, filters=[(0, "=", [1])])
    p.scan(3)
    write(h, "bit-hamming", p.b)

    # 15. The oracle: 40 rows [1,0] then 10 rows [0,1]; KNN with k and bounds on distance
    # (past the 40 duplicates at 0, at a row's own distance) checked against brute force.
    p = Vec0("none", 2, "l2", [], chunk=8)
    for i in range(50):
        p.insert(None, p.vec(V(1, 0) if i < 40 else V(0, 1)))
    p.oracle(0, k=5, bounds=[(">", 0)])
    p.oracle(0, k=324, bounds=[(">", 0)])
    p.oracle(0, k=3, bounds=[(">=", ("row", 45)), ("<=", 2)])
    p.oracle(None, k=7, bounds=[("<", ("row", 3))])
    write(h, "knn-oracle-bounds", p.b)

    # 16. Declarations past the block limit (float[65536], chunk_size=65536: 16 GiB a block)
    # are refused; float[65536] with 1024 a block (256 MiB, the limit) takes a row.
    p = Vec0("none", 2, "l2", [])
    p.big_table(3, 3)
    p.big_table(3, 3, elem=1)
    p.big_table(2, 2)
    p.big_table(3, 1)
    write(h, "big-blocks", p.b)


# ---- fuzz_shadow: flags, dims, chunk, rows, damage count, damages ----------------------

def shadow_seeds():
    h = "fuzz_shadow"
    aX = [-5, -1, 0, 1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 63, 64, 1024, 65535,
          65536, 34359738368, 9223372036854775807, -9223372036854775808, 4294967296,
          2147483647, 2147483648, -2147483648, 1099511627776, 4611686018427387904]

    def x(v):
        return bytes([0, aX.index(v)])  # bindX: an integer from pickX's table

    def seed(name, flags, dims, chunk, rows, damages):
        b = bytes([flags, dims - 1, [8, 16, 32].index(chunk), rows - 1, len(damages) - 1])
        for d in damages:
            b += d
        b += bytes([4]) * 8             # query vector bytes for the operations
        write(h, name, b)

    warm = 16    # flags: load the in-memory copy before the damage
    frees = 8    # flags: delete some rows first (v_free has slots)
    seed("slot-negative", warm, 2, 8, 10, [bytes([0, 0]) + x(-5) + x(2)])
    seed("slot-huge", 0, 2, 8, 10, [bytes([2]) + x(34359738368)])
    seed("slot-max", warm, 3, 16, 5, [bytes([2]) + x(9223372036854775807)])
    seed("next-slot-huge", 0, 2, 8, 10, [bytes([3, 0]) + x(34359738368)])
    seed("next-slot-max", 0, 2, 8, 10, [bytes([3, 0]) + x(9223372036854775807)])
    seed("next-slot-negative", warm, 2, 8, 10, [bytes([3, 0]) + x(-5)])
    seed("generation-bump", warm, 2, 8, 10, [bytes([18]) + x(1), bytes([0, 0]) + x(63) + x(2)])
    seed("chunk-id-moved", 0, 4, 8, 20, [bytes([6]) + x(-5) + x(0)])
    # case 7: size selector, the blob's bytes, all-or-one selector, chunk_id.
    seed("blob-short", 0, 4, 16, 20, [bytes([7, 130]) + bytes(252) + bytes([0, 0])])
    seed("blob-garbage", warm, 2, 8, 12, [bytes([7, 0]) + bytes([0xff]) * 64 + bytes([1, 0])])
    seed("vectors-deleted", warm | frees, 2, 8, 20, [bytes([9, 1]) + x(0)])
    seed("free-bogus", frees, 2, 8, 20, [bytes([11]) + x(-5), bytes([11]) + x(34359738368)])
    seed("rows-duplicate-slot", 0, 2, 8, 6, [bytes([13]) + x(64) + x(1)])
    seed("drop-rows", warm, 2, 8, 6, [bytes([12, 3])])
    seed("drop-info", 0, 2, 8, 6, [bytes([12, 0])])
    seed("dimensions-changed", 0, 2, 8, 6, [bytes([3, 2]) + x(64)])
    seed("chunk-size-changed", 0, 2, 8, 6, [bytes([3, 3]) + x(7)])
    seed("info-deleted", 32, 2, 8, 6, [bytes([5, 0]), bytes([5, 1])])
    # flags 64 without 32: a further vector column w, stored in v_rows.c5; case 17 damages it.
    seed("extra-vector-damaged", 64 | warm, 2, 8, 10,
         [bytes([17, 1]) + x(7), bytes([17, 2]) + x(9)])


# ---- fuzz_vector_index: setup, then operations -----------------------------------------

def index_seeds():
    h = "fuzz_vector_index"

    def setup(flags, etype, dims, key, opts):
        return bytes([flags, etype, dims - 1, key, len(opts)]) + bytes(opts)

    def vec(vals):
        return bytes([0, 3]) + bytes(int(v * 16) & 0xff for v in vals)

    def write_op(which, rid, v, x=0, conflict=0):
        b = bytes([0, which])
        if which <= 5 or which == 8:
            b += bytes([conflict])
        return b + bytes([rid]) + v + bytes([x])

    def topk(which, v, k, name=0):
        return bytes([4, which, name]) + v + bytes([k - 1, 0])

    def batch(queries, k, table=0):
        b = bytes([7, len(queries), table])
        for q in queries:
            b += bytes(int(v * 8) & 0xff for v in q)
        return b + bytes([0, k - 1])

    def schema(which, arg=0):
        b = bytes([9, which])
        return b + bytes([arg]) if which in (3, 9) else b

    # 1. Integer key, cosine: rows, search, update, delete, rebuild.
    b = setup(0, 0, 3, 0, [0])
    for i in range(1, 7):
        b += write_op(0, i, vec([i, 1, -1]))
    b += topk(0, vec([1, 1, 0]), 3) + topk(1, vec([1, 0, 0]), 10)
    b += write_op(3, 2, vec([0, 1, 0])) + write_op(6, 3, vec([0, 0, 0]))
    b += topk(0, vec([0, 1, 0]), 2) + schema(0) + topk(2, vec([1, 1, 1]), 5)
    write(h, "int-pk-cosine", b)

    # 2. Text key, l2, INSERT OR REPLACE and REPLACE through the triggers.
    b = setup(0, 0, 2, 1, [1])
    for i in range(5):
        b += write_op(0, i, vec([i, -i]))
    b += write_op(0, 1, vec([9, 9]), conflict=1) + write_op(9, 2, vec([8, 8]))
    b += topk(0, vec([9, 9]), 3)
    write(h, "text-pk-replace", b)

    # 3. Rows before the index (backfill on first search), a partial index.
    b = setup(2 | 1, 0, 4, 0, [1, 4, 5])
    b += topk(0, vec([1, 1, -1, 2]), 4) + write_op(0, 9, vec([1, 1, 1, 1])) + topk(0, vec([1, 1, 1, 1]), 4)
    write(h, "backfill-partial", b)

    # 4. UNIQUE columns: the BEFORE triggers' conflict clauses.
    b = setup(0, 0, 2, 3, [0])
    for i in range(4):
        b += write_op(0, i, vec([i, 1]), x=i)
    b += write_op(1, 7, vec([5, 5]), x=1, conflict=1) + topk(1, vec([5, 5]), 5)
    write(h, "unique-columns", b)

    # 5. Batch queries on the vec0 table and on the index's store.
    b = setup(0, 0, 2, 0, [])
    for i in range(4):
        b += write_op(0, i, vec([i, 2]))
    b += topk(0, vec([1, 1]), 2)
    b += batch([[1, 1], [2, 0], [0, 3]], 2) + batch([[1, 1]], 3, table=150) + batch([], 1)
    write(h, "knn-batch", b)

    # 6. Column types the index refuses: F64_BLOB, blob, F32_BLOB(0), F32_BLOB(70000).
    for etype, name in ((5, "f64-column"), (6, "blob-column"), (7, "zero-dims"), (8, "huge-dims")):
        b = setup(0, etype, 2, 0, [0]) + write_op(0, 1, vec([1, 1])) + topk(0, vec([1, 1]), 1)
        write(h, name, b)

    # 7. Read-only connection: vector_top_k scans the table itself.
    b = setup(0, 0, 2, 0, [0])
    for i in range(3):
        b += write_op(0, i, vec([i, 1]))
    b += schema(9, 1) + topk(0, vec([1, 1]), 2) + schema(9, 0) + topk(0, vec([1, 1]), 2)
    write(h, "query-only", b)

    # 8. Schema changes under the index: drop/recreate, rename, store damage, transactions.
    b = setup(0, 0, 2, 0, [0])
    for i in range(3):
        b += write_op(0, i, vec([i, 1]))
    b += topk(0, vec([1, 1]), 2)
    b += bytes([8, 0]) + write_op(0, 5, vec([5, 5])) + bytes([8, 2]) + topk(0, vec([1, 1]), 5)
    for which in (2, 3, 5, 7, 8, 11, 12):
        b += schema(which, 0) + topk(0, vec([1, 1]), 3)
    write(h, "schema-changes", b)

    # 9. k at the edges and bad index names.
    b = setup(0, 0, 2, 0, [0]) + write_op(0, 1, vec([1, 1]))
    b += bytes([4, 0, 0]) + vec([1, 1]) + bytes([200, 33, 0])    # k = 2^63-1
    b += bytes([4, 0, 0]) + vec([1, 1]) + bytes([200, 22, 0])    # k = -1
    b += bytes([4, 0, 205]) + vec([1, 1]) + bytes([1, 0])         # index 't'
    write(h, "k-edges", b)


if __name__ == "__main__":
    parse_seeds()
    vec0_seeds()
    shadow_seeds()
    index_seeds()
