"""Deterministic benchmark data and its exact answers.

The vectors are a mixture of 100 clusters, each spread along a random 32-dimensional
subspace around its centre plus a little noise in all 768 dimensions. Real embeddings
occupy few effective dimensions like this, and it gives each query a meaningful
neighbourhood: its nearest neighbour is clearly nearer than its 100th. (Isotropic
gaussian clusters in 768 dimensions do not: there the 1st and 10th neighbours of a query
are almost equally far, which no real embedding set looks like and which makes every
approximate index look worse than it is in use.)

- ``generate(n, n_queries, seed, kind="lowrank")``: ``n`` stored vectors and ``n_queries`` query
  vectors, float32, 768 dimensions. The stored vectors are produced in fixed-size
  chunks from one seeded stream, so the data for N = 10,000 is exactly the first
  10,000 rows of the data for N = 100,000. Queries come from a second stream of the
  same seed: they are new points of the same clusters, never stored rows, and do not
  depend on N.
- ``exact_topk(X, Q, k)``: the exact cosine top-k of each query, in float64.
- ``recall_at_k(...)``: recall of returned ids against the exact answer, counting a
  returned id as correct when its exact distance is within ``tie_eps`` of the k-th
  exact distance (two float32 implementations may order an exact near-tie at the
  boundary differently; that is not an approximation error).
"""

import json
import os
import time

import numpy as np

DIM = 768
CLUSTERS = 100
RANK = 32  # dimensions each cluster spreads along
NOISE = 0.2  # standard deviation of the noise in every dimension
CHUNK = 10_000


KINDS = ("lowrank", "isotropic")


class _Model:
    """Cluster centres and how points spread around them.

    kind "lowrank" (the benchmark's data): along a random RANK-dimensional subspace per
    cluster, plus NOISE in every dimension. kind "isotropic": a plain gaussian around the
    centre in all dimensions, the hard case for approximate indexes (used only to show how
    an approximate index's recall depends on the data).
    """

    def __init__(self, seed: int, dim: int, clusters: int, rank: int, kind: str):
        if kind not in KINDS:
            raise ValueError(f"unknown data kind {kind!r}; one of {KINDS}")
        rng = np.random.default_rng([seed, 0])
        self.kind = kind
        self.centers = rng.standard_normal((clusters, dim), dtype=np.float32)
        # Per-dimension spread 0.5 to 1.0: same-cluster cosine similarity from about 0.5 to 0.8.
        self.spread = rng.uniform(0.5, 1.0, clusters).astype(np.float32)
        basis = rng.standard_normal((clusters, dim, rank), dtype=np.float32)
        self.bases = basis * (self.spread / np.sqrt(rank))[:, None, None]
        self.rank = rank

    def sample(self, rng: np.random.Generator, rows: int) -> np.ndarray:
        labels = rng.integers(0, len(self.centers), rows)
        if self.kind == "isotropic":
            noise = rng.standard_normal((rows, self.centers.shape[1]), dtype=np.float32)
            return self.centers[labels] + self.spread[labels, None] * noise
        out = np.empty((rows, self.centers.shape[1]), dtype=np.float32)
        for c in range(len(self.centers)):
            idx = np.flatnonzero(labels == c)
            z = rng.standard_normal((len(idx), self.rank), dtype=np.float32)
            out[idx] = self.centers[c] + z @ self.bases[c].T
        out += NOISE * rng.standard_normal(out.shape, dtype=np.float32)
        return out


def generate(n: int, n_queries: int, seed: int, dim: int = DIM, clusters: int = CLUSTERS,
             kind: str = "lowrank", out: str | None = None):
    """Return (X, Q): n stored vectors and n_queries queries, float32, C-contiguous. With
    `out`, X is a memory map of a new .npy file there (a set larger than memory)."""
    model = _Model(seed, dim, clusters, RANK, kind)
    data = np.random.default_rng([seed, 1])
    if out is None:
        X = np.empty((n, dim), dtype=np.float32)
    else:
        X = np.lib.format.open_memmap(out, mode="w+", dtype=np.float32, shape=(n, dim))
    for start in range(0, n, CHUNK):
        stop = min(start + CHUNK, n)
        # Always draw a whole chunk so that a prefix of the data does not depend on n.
        X[start:stop] = model.sample(data, CHUNK)[: stop - start]
    Q = model.sample(np.random.default_rng([seed, 2]), n_queries)
    return X, np.ascontiguousarray(Q)


def cached(d: str, meta: dict, make) -> str:
    """The folder `d` holding vectors.npy and queries.npy made by `make()` -> (X, Q) with the
    settings `meta`: reused when its meta.json equals `meta`, made and saved otherwise."""
    import common

    meta_path = os.path.join(d, "meta.json")
    try:
        with open(meta_path) as f:
            if json.load(f) == meta:
                common.log(f"reusing data in {common.rel(d)}")
                return d
    except (OSError, ValueError):
        pass
    os.makedirs(d, exist_ok=True)
    t0 = time.perf_counter()
    X, Q = make()
    np.save(os.path.join(d, "vectors.npy"), X)
    np.save(os.path.join(d, "queries.npy"), Q)
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    common.log(f"generated {X.shape[0]:,} x {X.shape[1]} vectors and {Q.shape[0]} queries "
               f"in {time.perf_counter() - t0:.1f} s ({common.rel(d)})")
    return d


def _unit64(a: np.ndarray) -> np.ndarray:
    a = a.astype(np.float64)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def exact_topk(X: np.ndarray, Q: np.ndarray, k: int, block: int = 20_000):
    """Exact cosine top-k for each query, computed in float64.

    Returns (ids, dists): row indexes into X (0-based) and cosine distances (1 - cos),
    each of shape (len(Q), k), nearest first.
    """
    Qn = _unit64(Q)
    best_d = np.full((len(Q), 0), np.inf)
    best_i = np.zeros((len(Q), 0), dtype=np.int64)
    for start in range(0, len(X), block):
        d = 1.0 - Qn @ _unit64(X[start : start + block]).T
        i = np.broadcast_to(np.arange(start, start + d.shape[1]), d.shape)
        d = np.concatenate([best_d, d], axis=1)
        i = np.concatenate([best_i, i], axis=1)
        keep = np.argsort(d, axis=1, kind="stable")[:, :k]
        best_d = np.take_along_axis(d, keep, axis=1)
        best_i = np.take_along_axis(i, keep, axis=1)
    return best_i, best_d


def exact_distances(X: np.ndarray, q: np.ndarray, rows) -> np.ndarray:
    """Exact cosine distances, float64, between query q and the given rows of X."""
    rows = np.asarray(rows, dtype=np.int64)
    qn = _unit64(q[None, :])[0]
    return 1.0 - _unit64(X[rows]) @ qn


def recall_at_k(X, Q, gt_dists, returned, k: int, tie_eps: float = 1e-5):
    """Mean recall@k of ``returned`` (list of lists of 0-based row indexes) over queries.

    Also returns the number of queries whose answer was wrong beyond ties.
    """
    total, imperfect = 0.0, 0
    for qi, rows in enumerate(returned):
        rows = [r for r in dict.fromkeys(rows) if 0 <= r < len(X)][:k]
        if rows:
            d = exact_distances(X, Q[qi], rows)
            hits = int(np.sum(d <= gt_dists[qi, k - 1] + tie_eps))
        else:
            hits = 0
        total += min(hits, k) / k
        imperfect += hits < k
    return total / max(len(returned), 1), imperfect
