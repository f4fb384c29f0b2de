"""The systems under test, each measured the same way.

Every system gets the same stored vectors X (float32, n x 768), stores or indexes them
(timed: ``build_s``), answers ``warmup`` untimed queries, then ``queries`` timed single
queries one at a time (``single``: median, p99), and where it has a way to answer many
queries in one call, one batch of ``batch`` queries (``batch``: median of repeats).
The ids it returns are kept so that run.py can score recall against exact answers.

Systems:
- ``vecsync-vec0``: our ``vec0`` virtual table, loaded into apsw; batch through the
  ``vecsync_knn_batch(table, queries_blob, k)`` table-valued function.
- ``vecsync-topk``: libSQL's vector SQL on stock SQLite through our extension:
  ``libsql_vector_idx`` index on an ``F32_BLOB(768)`` column, ``vector_top_k`` queries.
- ``sqlite-vec``: sqlite-vec's ``vec0`` (pip ``sqlite-vec``), loaded into apsw.
- ``libsql``: real libSQL (pip ``libsql``) with its DiskANN vector index.
- ``numpy``: brute force, ``X @ q`` + ``argpartition``, on pre-normalised vectors.
- ``faiss``: ``IndexFlatIP`` on normalised vectors.

Quantized scans (bench/quantized.py), at the oversample of ``Config.oversample``:
- ``vecsync-int8``, ``vecsync-bit``: our vec0 with ``indexed by rescore(quantizer=int8|bit)``:
  int8 codes or sign bits in memory, the best k x oversample re-scored from float32.
- ``sqlite-vec-bit``: sqlite-vec's binary quantization as its documentation describes it:
  a ``bit[D]`` column beside the float one, filled with ``vec_quantize_binary``, a KNN
  query on the bits for k x oversample candidates, re-ranked by ``vec_distance_cosine``.
- ``sqliteai-vector``: pip ``sqliteai-vector`` (SQLite AI's sqlite-vector): a plain
  table of float32 blobs, ``vector_init``, ``vector_quantize``, ``vector_quantize_preload``,
  then ``vector_quantize_scan``; ``sqliteai-vector-full``: its exact ``vector_full_scan``.
- ``faiss-sq8``: ``IndexScalarQuantizer`` with ``QT_8bit`` codes, inner product on
  normalised vectors.

Every system records resident memory (VmRSS) before its build and after its timed
queries (``extra``): the difference is what it holds to search, plus allocator slack.
- ``membw``: not a system: single-thread read bandwidth of a 1 GB array, for reference.

Ids stored in SQL are 1..n; results are reported as 0-based row indexes into X.
"""

import dataclasses
import os
import statistics
import time

import numpy as np

import common

MIB = 1 << 20


class Unavailable(Exception):
    """The system, or one of its features, cannot be measured here; the message says why."""


@dataclasses.dataclass
class Config:
    k: int
    warmup: np.ndarray  # untimed queries
    queries: np.ndarray  # timed single queries
    batch: np.ndarray  # queries of the batch measurement
    extension: str | None  # libvecsync.so
    db_dir: str | None  # database files go here; None: in memory
    tag: str  # unique name for this run's database file
    batch_repeats: int = 5
    oversample: int | None = None  # quantized systems: candidates re-scored = k x this
    pragmas: tuple = ()  # "name=value" run as PRAGMA on each SQLite connection when it opens
    threads: tuple = ()  # thread counts to time the queries at again (worker.py --threads)


@dataclasses.dataclass
class Result:
    system: str
    label: str
    n: int
    status: str = "ok"  # ok | unavailable | failed
    error: str | None = None
    build_s: float | None = None  # insert / index build time, seconds
    build_note: str | None = None  # what build_s covers
    first_query_ms: float | None = None  # first query after the build (cold, lazy work)
    single: dict | None = None  # median_ms, p99_ms, mean_ms, min_ms, count
    single_ids: list | None = None  # 0-based rows, one list per timed query
    single_dists: list | None = None  # distances the system reported, when it reports them
    batch: dict | None = None  # queries, total_ms, per_query_ms, repeats | error
    batch_ids: list | None = None
    db_bytes: int | None = None  # size of the database file after the build
    versions: dict = dataclasses.field(default_factory=dict)
    extra: dict = dataclasses.field(default_factory=dict)
    libraries: list = dataclasses.field(default_factory=list)


log = common.log


def loaded_libraries() -> list[str]:
    """BLAS, SQLite and vector libraries mapped into this process (last two path parts)."""
    keys = ("blas", "lapack", "sqlite", "vecsync", "vec0", "libsql", "faiss", "gomp")
    seen = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 6 or not parts[5].startswith("/"):
                    continue
                real = os.path.realpath(parts[5])
                name = os.path.basename(real).lower()
                if ".so" in name and any(k in name for k in keys):
                    short = "/".join(real.split("/")[-2:])
                    if short not in seen:
                        seen.append(short)
    except OSError:
        pass
    return seen


rss_mib = common.rss_mib


def _stats(lat_ms: list[float]) -> dict:
    s = sorted(lat_ms)
    p99 = s[min(len(s) - 1, int(np.ceil(0.99 * len(s))) - 1)]
    return {
        "median_ms": statistics.median(s),
        "p99_ms": p99,
        "mean_ms": statistics.fmean(s),
        "min_ms": s[0],
        "count": len(s),
    }


def _ms_since(t0: int) -> float:
    return (time.perf_counter_ns() - t0) / 1e6


def _run_queries(r: Result, cfg: Config, search, set_threads=None, note=None) -> None:
    """First query, warm-up, then timed single queries. search(q) -> [(row, dist|None)].
    With cfg.threads and a system that can scan on several threads (set_threads(t)), the
    same queries again at each thread count, interleaved (extra["threads"])."""
    t0 = time.perf_counter_ns()
    search(cfg.warmup[0] if len(cfg.warmup) else cfg.queries[0])
    r.first_query_ms = _ms_since(t0)
    for q in cfg.warmup[1:]:
        search(q)
    lat, ids, dists = [], [], []
    for q in cfg.queries:
        t0 = time.perf_counter_ns()
        hits = search(q)
        lat.append(_ms_since(t0))
        ids.append([int(h[0]) for h in hits])
        dists.append([None if h[1] is None else float(h[1]) for h in hits])
    r.single = _stats(lat)
    r.extra["rss_after_queries_mib"] = rss_mib()
    r.single_ids = ids
    if any(d is not None for row in dists for d in row):
        r.single_dists = dists
    log(f"{r.label} N={r.n}: query median {r.single['median_ms']:.3f} ms, "
        f"p99 {r.single['p99_ms']:.3f} ms ({len(lat)} queries)")
    if len(cfg.threads) > 1 and set_threads:
        t = common.time_threads(lambda q: [h[0] for h in search(q)], set_threads, cfg.queries,
                                list(cfg.threads), note)
        r.extra["threads"] = t
        log(f"{r.label} N={r.n}: " + ", ".join(
            f"{c} thread(s) {v['median_ms']:.2f} ms ({v['ratio']:.2f}x)" for c, v in t["by_threads"].items())
            + ("" if t["same_answers"] else " -- ANSWERS DIFFER"))


def _run_batch(r: Result, cfg: Config, search_batch) -> None:
    """search_batch(Q) -> list of row lists, one per query. Median of repeats after one warm-up.

    A slow batch (seconds) is repeated fewer times, so that a slow BLAS does not stretch
    the run: as many repeats as fit in about 5 s, at least one. No batch when cfg.batch
    is empty (worker.py --batch 0).
    """
    if not len(cfg.batch):
        return
    t0 = time.perf_counter()
    search_batch(cfg.batch)
    warm_s = time.perf_counter() - t0
    repeats = max(1, min(cfg.batch_repeats, int(5.0 / max(warm_s, 1e-9))))
    totals, ids = [], None
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        ids = search_batch(cfg.batch)
        totals.append(_ms_since(t0))
    total = statistics.median(totals)
    r.batch = {
        "queries": len(cfg.batch),
        "total_ms": total,
        "per_query_ms": total / len(cfg.batch),
        "repeats": len(totals),
    }
    r.batch_ids = [[int(x) for x in row] for row in ids]
    log(f"{r.label} N={r.n}: batch of {len(cfg.batch)}: {total:.2f} ms, "
        f"{r.batch['per_query_ms']:.3f} ms per query")


# --------------------------------------------------------------------------------------
# SQLite connections: apsw (stock SQLite + loadable extensions) and libsql.


class _Database:
    def __init__(self, cfg: Config):
        self.path = ":memory:"
        if cfg.db_dir:
            os.makedirs(cfg.db_dir, exist_ok=True)
            self.path = os.path.join(cfg.db_dir, cfg.tag + ".db")
            self.remove_files()

    def remove_files(self) -> None:
        if self.path == ":memory:":
            return
        for suffix in ("", "-journal", "-wal", "-shm"):
            try:
                os.remove(self.path + suffix)
            except FileNotFoundError:
                pass

    def size(self) -> int | None:
        if self.path == ":memory:":
            return self.scalar("select page_count * page_size from pragma_page_count, pragma_page_size")
        return sum(os.path.getsize(self.path + s) for s in ("", "-wal") if os.path.exists(self.path + s))

    def scalar(self, sql, params=()):
        rows = self.rows(sql, params)
        return rows[0][0] if rows else None

    def insert_all(self, r: Result, sql: str, X: np.ndarray, chunk: int = 1000) -> None:
        """Insert rows (id 1..n, float32 blob) in one transaction, timed into r.build_s."""
        n = len(X)
        t0 = time.perf_counter()
        last_log = t0
        self.execute("begin")
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            self.executemany(sql, ((i + 1, X[i].tobytes()) for i in range(start, stop)))
            now = time.perf_counter()
            if now - last_log > 20 and stop < n:
                rate = stop / (now - t0)
                log(f"{r.label} N={n}: {stop:,} rows in {now - t0:.0f} s "
                    f"({rate:,.0f} rows/s, ~{(n - stop) / rate:.0f} s to go)")
                last_log = now
        self.execute("commit")
        r.build_s = time.perf_counter() - t0
        r.db_bytes = self.size()
        log(f"{r.label} N={n}: inserted in {r.build_s:.2f} s ({n / r.build_s:,.0f} rows/s)")


class ApswDatabase(_Database):
    def __init__(self, cfg: Config, extensions: list[str]):
        import apsw

        super().__init__(cfg)
        self.conn = apsw.Connection(self.path)
        self.conn.enable_load_extension(True)
        for ext in extensions:
            self.conn.load_extension(ext)
        for pragma in cfg.pragmas:
            self.conn.execute(f"pragma {pragma}")

    def rows(self, sql, params=()):
        return self.conn.execute(sql, params).fetchall()

    def execute(self, sql, params=()):
        self.conn.execute(sql, params)

    def executemany(self, sql, seq):
        self.conn.executemany(sql, seq)

    def close(self, r: Result):
        r.libraries = loaded_libraries()  # before close: SQLite unloads extensions then
        self.conn.close()
        self.remove_files()


class LibsqlDatabase(_Database):
    def __init__(self, cfg: Config):
        import libsql

        super().__init__(cfg)
        # isolation_level=None: no implicit transactions; insert_all opens its own.
        self.conn = libsql.connect(self.path, isolation_level=None)

    def rows(self, sql, params=()):
        return self.conn.execute(sql, params).fetchall()

    def execute(self, sql, params=()):
        self.conn.execute(sql, params)

    def executemany(self, sql, seq):
        self.conn.executemany(sql, list(seq))

    def close(self, r: Result):
        r.libraries = loaded_libraries()
        self.conn.close()
        self.remove_files()


def _need_extension(cfg: Config) -> str:
    if not cfg.extension:
        raise Unavailable("no --extension given")
    if not os.path.exists(cfg.extension):
        raise Unavailable(f"{cfg.extension} not found (build it: swift build -c release --product vecsync)")
    return cfg.extension


def _open_vecsync(cfg: Config, r: Result) -> ApswDatabase:
    db = ApswDatabase(cfg, [_need_extension(cfg)])
    r.versions["sqlite"] = db.scalar("select sqlite_version()")
    try:
        r.versions["vecsync_debug"] = db.scalar("select vecsync_debug()")
    except Exception as e:
        r.versions["vecsync_debug"] = f"unavailable: {e}"
    return db


# --------------------------------------------------------------------------------------
# vec0: ours and sqlite-vec's, the same SQL.

VEC0_CREATE = ("create virtual table v using vec0("
               "id integer primary key, embedding float[{dim}] distance_metric=cosine{index})")
VEC0_INSERT = "insert into v(id, embedding) values (?, ?)"
VEC0_QUERY = "select id, distance from v where embedding match ? and k = {k} order by distance"


def _vec0(db: _Database, X: np.ndarray, cfg: Config, r: Result, index: str = "",
          ours: bool = True) -> None:
    try:
        db.execute(VEC0_CREATE.format(dim=X.shape[1], index=index))
    except Exception as e:
        raise Unavailable(f"create virtual table ... using vec0: {e}") from e
    r.build_note = "inserts, one transaction"
    db.insert_all(r, VEC0_INSERT, X)
    sql = VEC0_QUERY.format(k=cfg.k)
    set_threads = note = None
    if ours:  # sqlite-vec scans on one thread: nothing to set
        def set_threads(t):
            db.rows(f"pragma threads = {t - 1}")

        def note(t):
            return db.scalar("select json_extract(vecsync_cache_info('v'), '$.scan_threads')")
    _run_queries(r, cfg, lambda q: [(i - 1, d) for i, d in db.rows(sql, (q.tobytes(),))],
                 set_threads, note)


def vecsync_vec0(X, cfg: Config, r: Result) -> None:
    db = _open_vecsync(cfg, r)
    try:
        _vec0(db, X, cfg, r)
        _cache_info(db, r)
        _vecsync_batch(db, cfg, r)
    finally:
        db.close(r)


def _cache_info(db: ApswDatabase, r: Result) -> None:
    import json

    try:
        r.extra["cache_info"] = json.loads(db.scalar("select vecsync_cache_info('v')"))
    except Exception as e:  # an extension without it
        r.extra["cache_info"] = {"error": str(e)}


def _vecsync_rescore(quantizer: str):
    def run(X, cfg: Config, r: Result) -> None:
        db = _open_vecsync(cfg, r)
        try:
            options = f"quantizer={quantizer}"
            if cfg.oversample:
                options += f", oversample={cfg.oversample}"
            r.extra["index"] = f"indexed by rescore({options})"
            _vec0(db, X, cfg, r, index=" " + r.extra["index"])
            _cache_info(db, r)
        finally:
            db.close(r)

    return run


def _vecsync_batch(db: ApswDatabase, cfg: Config, r: Result) -> None:
    sql = "select query_index, id, distance from vecsync_knn_batch('v', ?, ?)"

    def search_batch(Q):
        out = [[] for _ in range(len(Q))]
        rows = db.rows(sql, (np.ascontiguousarray(Q, dtype=np.float32).tobytes(), cfg.k))
        for qi, rowid, _dist in rows:  # query_index is 0-based
            out[qi].append(rowid - 1)
        return out

    try:
        _run_batch(r, cfg, search_batch)
    except Exception as e:
        r.batch = {"error": f"not available: {type(e).__name__}: {e}"}
        log(f"{r.label} N={r.n}: batch not available: {e}")


def _sqlite_vec_open(cfg: Config, r: Result) -> "ApswDatabase":
    """A database with sqlite-vec loaded, its versions recorded in r."""
    from importlib.metadata import version

    db = ApswDatabase(cfg, [_sqlite_vec_path()])
    try:
        r.versions["sqlite"] = db.scalar("select sqlite_version()")
        r.versions["sqlite-vec"] = db.scalar("select vec_version()")
        r.versions["pip sqlite-vec"] = version("sqlite-vec")
    except BaseException:
        db.close(r)
        raise
    return db


def sqlite_vec(X, cfg: Config, r: Result) -> None:
    db = _sqlite_vec_open(cfg, r)
    try:
        _vec0(db, X, cfg, r, ours=False)
    finally:
        db.close(r)


def _sqlite_vec_path() -> str:
    import importlib.util

    # The path sqlite_vec.loadable_path() returns, found without importing the package:
    # its __init__ imports Python's sqlite3, which would map a second SQLite library
    # (the system's) into this process beside apsw's.
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.origin:
        raise Unavailable("pip package sqlite-vec not installed")
    return os.path.join(os.path.dirname(spec.origin), "vec0")


# sqlite-vec's binary quantization with re-scoring, as its documentation shows it: the
# float vector and its sign bits in one vec0 table, a KNN query on the bits, then exact
# distances for those candidates only.
SQLITE_VEC_BIT_CREATE = ("create virtual table v using vec0(id integer primary key, "
                         "embedding float[{dim}] distance_metric=cosine, embedding_coarse bit[{dim}])")
SQLITE_VEC_BIT_INSERT = ("insert into v(id, embedding, embedding_coarse) "
                         "values (?1, ?2, vec_quantize_binary(?2))")
SQLITE_VEC_BIT_QUERY = (
    "with coarse as (select id, embedding from v "
    "where embedding_coarse match vec_quantize_binary(?1) and k = {candidates}) "
    "select id, vec_distance_cosine(embedding, ?1) as d from coarse order by d limit {k}")


def sqlite_vec_bit(X, cfg: Config, r: Result) -> None:
    db = _sqlite_vec_open(cfg, r)
    try:
        try:
            db.execute(SQLITE_VEC_BIT_CREATE.format(dim=X.shape[1]))
        except Exception as e:
            raise Unavailable(f"create virtual table ... bit[{X.shape[1]}]: {e}") from e
        oversample = cfg.oversample or 8
        r.extra["index"] = f"bit[{X.shape[1]}] column, k x {oversample} candidates re-ranked"
        r.build_note = "inserts of the float vector and vec_quantize_binary of it, one transaction"
        db.insert_all(r, SQLITE_VEC_BIT_INSERT, X)
        sql = SQLITE_VEC_BIT_QUERY.format(candidates=cfg.k * oversample, k=cfg.k)
        _run_queries(r, cfg, lambda q: [(i - 1, d) for i, d in db.rows(sql, (q.tobytes(),))])
    finally:
        db.close(r)


def _sqliteai_vector(full_scan: bool):
    """SQLite AI's sqlite-vector (pip sqliteai-vector): quantized scan, or its full scan."""

    def run(X, cfg: Config, r: Result) -> None:
        import importlib.util
        from importlib.metadata import version

        spec = importlib.util.find_spec("sqlite_vector")
        if spec is None or not spec.origin:
            raise Unavailable("pip package sqliteai-vector not installed")
        # The wheel ships the loadable library as sqlite_vector/binaries/vector.so.
        lib = os.path.join(os.path.dirname(spec.origin), "binaries", "vector")
        db = ApswDatabase(cfg, [lib])
        try:
            r.versions["sqlite"] = db.scalar("select sqlite_version()")
            r.versions["sqlite-vector"] = db.scalar("select vector_version()")
            r.versions["sqlite-vector backend"] = db.scalar("select vector_backend()")
            r.versions["pip sqliteai-vector"] = version("sqliteai-vector")
            db.execute("create table t(id integer primary key, embedding blob)")
            db.insert_all(r, "insert into t(id, embedding) values (?, ?)", X)
            t0 = time.perf_counter()
            db.scalar("select vector_init('t', 'embedding', ?)",
                      (f"dimension={X.shape[1]},type=FLOAT32,distance=COSINE",))
            r.extra["insert_s"] = r.build_s
            if full_scan:
                r.build_note = "inserts, one transaction; vector_init"
                sql = "select rowid, distance from vector_full_scan('t', 'embedding', ?, {k})"
            else:
                t1 = time.perf_counter()
                db.scalar("select vector_quantize('t', 'embedding')")
                t2 = time.perf_counter()
                r.extra["quantize_memory_bytes"] = db.scalar(
                    "select vector_quantize_memory('t', 'embedding')")
                db.scalar("select vector_quantize_preload('t', 'embedding')")
                t3 = time.perf_counter()
                r.extra.update(quantize_s=t2 - t1, preload_s=t3 - t2)
                r.build_note = ("inserts, one transaction; vector_init, vector_quantize, "
                                "vector_quantize_preload")
                sql = "select rowid, distance from vector_quantize_scan('t', 'embedding', ?, {k})"
            r.build_s += time.perf_counter() - t0
            r.db_bytes = db.size()
            log(f"{r.label} N={r.n}: ready in {r.build_s:.2f} s ({r.extra})")
            sql = sql.format(k=cfg.k)
            _run_queries(r, cfg, lambda q: [(i - 1, d) for i, d in db.rows(sql, (q.tobytes(),))])
        finally:
            db.close(r)

    return run


# --------------------------------------------------------------------------------------
# libSQL's vector SQL: ours on stock SQLite, and libSQL itself.

TOPK_SCHEMA = [
    "create table m(id integer primary key, embedding F32_BLOB({dim}))",
    "create index m_idx on m(libsql_vector_idx(embedding, 'metric=cosine'))",
]
TOPK_INSERT = "insert into m(id, embedding) values (?, ?)"
TOPK_QUERY = "select id from vector_top_k('m_idx', ?, {k})"


def _topk(db: _Database, X: np.ndarray, cfg: Config, r: Result) -> None:
    for stmt in TOPK_SCHEMA:
        try:
            db.execute(stmt.format(dim=X.shape[1]))
        except Exception as e:
            raise Unavailable(f"{stmt.split('(')[0].strip()}: {e}") from e
    r.build_note = "inserts with the vector index in place, one transaction"
    db.insert_all(r, TOPK_INSERT, X)
    sql = TOPK_QUERY.format(k=cfg.k)
    _run_queries(r, cfg, lambda q: [(row[0] - 1, None) for row in db.rows(sql, (q.tobytes(),))])


def vecsync_topk(X, cfg: Config, r: Result) -> None:
    db = _open_vecsync(cfg, r)
    try:
        _topk(db, X, cfg, r)
    finally:
        db.close(r)


def libsql_topk(X, cfg: Config, r: Result) -> None:
    try:
        import libsql  # noqa: F401
        from importlib.metadata import version
    except ImportError as e:
        raise Unavailable(f"pip package libsql not installed: {e}") from e
    db = LibsqlDatabase(cfg)
    try:
        r.versions["sqlite"] = db.scalar("select sqlite_version()")
        r.versions["pip libsql"] = version("libsql")
        _topk(db, X, cfg, r)
    finally:
        db.close(r)


# --------------------------------------------------------------------------------------
# In-memory references: numpy and faiss.


def _numpy_blas() -> str:
    try:
        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            if info.get("user_api") == "blas" and "numpy" in info.get("filepath", ""):
                return f"{info.get('internal_api')} {info.get('version')} ({info.get('num_threads')} thread)"
    except Exception:
        pass
    return "unknown"


def numpy_bruteforce(X, cfg: Config, r: Result) -> None:
    from threadpoolctl import threadpool_limits

    k = cfg.k
    r.versions["numpy"] = np.__version__
    with threadpool_limits(1):
        r.versions["numpy BLAS"] = _numpy_blas()
        t0 = time.perf_counter()
        Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
        r.build_s = time.perf_counter() - t0
        r.build_note = "normalise the stored matrix once"

        def search(q):
            s = Xn @ (q / np.linalg.norm(q))
            top = np.argpartition(-s, k - 1)[:k]
            top = top[np.argsort(-s[top])]
            return [(i, 1.0 - s[i]) for i in top]

        def search_batch(Q):
            S = (Q / np.linalg.norm(Q, axis=1, keepdims=True)) @ Xn.T
            top = np.argpartition(-S, k - 1, axis=1)[:, :k]
            order = np.argsort(-np.take_along_axis(S, top, axis=1), axis=1)
            return np.take_along_axis(top, order, axis=1)

        _run_queries(r, cfg, search)
        _run_batch(r, cfg, search_batch)


def _faiss(make_index, note: str):
    def run(X, cfg: Config, r: Result) -> None:
        try:
            import faiss
        except ImportError as e:
            raise Unavailable(f"pip package faiss-cpu not installed: {e}") from e
        faiss.omp_set_num_threads(1)
        r.versions["faiss"] = faiss.__version__
        k = cfg.k
        t0 = time.perf_counter()
        Xn = np.array(X, dtype=np.float32, copy=True)
        faiss.normalize_L2(Xn)
        index = make_index(faiss, X.shape[1])
        if not index.is_trained:
            index.train(Xn)
        index.add(Xn)
        del Xn  # the index holds what it searches
        r.build_s = time.perf_counter() - t0
        r.build_note = note

        def search(q):
            qn = np.array(q[None, :], dtype=np.float32, copy=True)
            faiss.normalize_L2(qn)
            D, I = index.search(qn, k)
            return [(int(i), 1.0 - float(d)) for d, i in zip(D[0], I[0])]

        def search_batch(Q):
            Qn = np.array(Q, dtype=np.float32, copy=True)
            faiss.normalize_L2(Qn)
            return index.search(Qn, k)[1]

        _run_queries(r, cfg, search, faiss.omp_set_num_threads)
        _run_batch(r, cfg, search_batch)

    return run


faiss_flat = _faiss(lambda faiss, d: faiss.IndexFlatIP(d), "normalise + IndexFlatIP.add")
faiss_sq8 = _faiss(
    lambda faiss, d: faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_8bit,
                                                faiss.METRIC_INNER_PRODUCT),
    "normalise + IndexScalarQuantizer(QT_8bit).train + add")


def memory_bandwidth(X, cfg: Config, r: Result) -> None:
    """Single-thread read bandwidth over a 1 GB float32 array: best of 5, two ways."""
    from threadpoolctl import threadpool_limits

    a = np.ones(1 << 28, dtype=np.float32)  # 1.07 GB, every page touched
    nbytes = a.nbytes

    def best(fn, repeats=5):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return nbytes / min(times) / 1e9

    with threadpool_limits(1):
        r.extra = {
            "bytes": nbytes,
            "sum_gbps": best(lambda: a.sum()),  # numpy pairwise sum
            "dot_gbps": best(lambda: np.dot(a, a)),  # BLAS sdot, one pass over the array
        }
    r.extra["read_gbps"] = max(r.extra["sum_gbps"], r.extra["dot_gbps"])
    log(f"memory bandwidth (one thread): sum {r.extra['sum_gbps']:.1f} GB/s, "
        f"dot {r.extra['dot_gbps']:.1f} GB/s")


SYSTEMS = {
    "vecsync-vec0": vecsync_vec0,
    "vecsync-topk": vecsync_topk,
    "sqlite-vec": sqlite_vec,
    "libsql": libsql_topk,
    "numpy": numpy_bruteforce,
    "faiss": faiss_flat,
    "vecsync-int8": _vecsync_rescore("int8"),
    "vecsync-bit": _vecsync_rescore("bit"),
    "sqlite-vec-bit": sqlite_vec_bit,
    "sqliteai-vector": _sqliteai_vector(full_scan=False),
    "sqliteai-vector-full": _sqliteai_vector(full_scan=True),
    "faiss-sq8": faiss_sq8,
    "membw": memory_bandwidth,
}
