"""Nearest-neighbour search over unit vectors with faiss: exact when small, measured when not.

Vectors are L2-normalised on the way in, so inner product is cosine. Below ``exact_below``
vectors the index is ``IndexFlatIP`` (exact, recall 1 by construction). Above it, an
approximate index is built (IVF-Flat by default, HNSW on request) and its search breadth
(``nprobe`` / ``efSearch``) is raised until recall@10 measured against brute force on a sample
reaches ``target_recall``; the measured value is kept in ``.recall`` so a caller can report it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from memlab.embed._embedder import _normalise
from memlab.errors import require

_KINDS = ("flat", "ivf", "hnsw")
_RECALL_K = 10
_RECALL_SAMPLE = 256
# Queries per range_search / search call: bounds the memory of one result batch.
_QUERY_BATCH = 2048


def _faiss() -> Any:
    return require("faiss", "embeddings", feature="neighbour search", package="faiss-cpu")


def _as_unit_matrix(vectors: Any) -> np.ndarray:
    x = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if x.ndim != 2:
        raise ValueError(f"expected an (n, d) matrix of vectors, got shape {x.shape}")
    return np.ascontiguousarray(_normalise(x), dtype=np.float32)


class NeighborIndex:
    """k-nearest-neighbour and similarity-threshold search over a fixed set of vectors.

    ``kind``: None picks ``flat`` below ``exact_below`` vectors and ``ivf`` at or above it;
    ``"flat"``, ``"ivf"`` or ``"hnsw"`` force one.
    """

    def __init__(self, vectors: Any, *, exact_below: int = 50_000, kind: str | None = None,
                 target_recall: float = 0.95, seed: int = 0) -> None:
        faiss = _faiss()
        self.vectors = _as_unit_matrix(vectors)
        self.n, self.dim = self.vectors.shape
        if kind is None:
            kind = "flat" if self.n < exact_below else "ivf"
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, not {kind!r}")
        if kind != "flat" and self.n < 2 * _RECALL_K:
            kind = "flat"  # too few points to train or to measure anything approximate
        self.kind = kind
        self.exact = kind == "flat"
        self.target_recall = float(target_recall)
        self.seed = seed
        self.nprobe: int | None = None
        self.ef_search: int | None = None
        self.index = self._build(faiss)
        self._range_ok: bool | None = None
        #: recall@10 against brute force on a sample; 1.0 for the exact index.
        self.recall: float = 1.0 if self.exact else self._tune()

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        breadth = f" nprobe={self.nprobe}" if self.nprobe else ""
        breadth += f" efSearch={self.ef_search}" if self.ef_search else ""
        return f"<NeighborIndex {self.kind} n={self.n} d={self.dim}{breadth} recall@10={self.recall:.3f}>"

    # ---- building -------------------------------------------------------------------------
    def _build(self, faiss: Any) -> Any:
        if self.kind == "flat":
            index = faiss.IndexFlatIP(self.dim)
            index.add(self.vectors)
            return index
        if self.kind == "hnsw":
            index = faiss.IndexHNSWFlat(self.dim, 32, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = 80
            index.add(self.vectors)
            self.ef_search = 16
            index.hnsw.efSearch = self.ef_search
            return index
        # faiss warns below ~39 training points per centroid; keep well above that.
        nlist = max(1, min(int(4 * math.sqrt(self.n)), self.n // 40))
        quantizer = faiss.IndexFlatIP(self.dim)
        index = faiss.IndexIVFFlat(quantizer, self.dim, nlist, faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(self.seed)
        train_n = min(self.n, nlist * 64)
        train = self.vectors[np.sort(rng.choice(self.n, size=train_n, replace=False))]
        index.cp.seed = self.seed
        index.train(train)
        index.add(self.vectors)
        self._quantizer = quantizer  # faiss keeps a raw pointer; hold the Python object
        self.nprobe = min(nlist, 4)
        index.nprobe = self.nprobe
        return index

    def _tune(self) -> float:
        """Widen the search until recall@10 on a sample reaches target_recall (or is exhaustive)."""
        while True:
            recall = self.recall_at(_RECALL_K, _RECALL_SAMPLE)
            if recall >= self.target_recall:
                return recall
            if self.kind == "ivf":
                if self.nprobe >= self.index.nlist:
                    return recall
                self.nprobe = min(self.index.nlist, self.nprobe * 2)
                self.index.nprobe = self.nprobe
            else:
                if self.ef_search >= max(1024, self.n):
                    return recall
                self.ef_search *= 2
                self.index.hnsw.efSearch = self.ef_search

    # ---- queries --------------------------------------------------------------------------
    def search(self, queries: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k by cosine: (similarities, indices), each (n_queries, k), best first.

        When k exceeds the index size the tail is padded with similarity -inf and index -1.
        """
        q = _as_unit_matrix(np.atleast_2d(queries))
        k = int(k)
        if k <= 0:
            raise ValueError("k must be positive")
        sims = np.full((len(q), k), -np.inf, dtype=np.float32)
        ids = np.full((len(q), k), -1, dtype=np.int64)
        kk = min(k, self.n)
        if kk == 0 or len(q) == 0:
            return sims, ids
        for start in range(0, len(q), _QUERY_BATCH):
            d, i = self.index.search(q[start:start + _QUERY_BATCH], kk)
            d = np.where(i < 0, -np.inf, d)
            sims[start:start + len(d), :kk] = d
            ids[start:start + len(d), :kk] = i
        return sims, ids

    def recall_at(self, k: int = 10, sample: int | float = 256) -> float:
        """Mean fraction of the true top-k (brute force) that ``search`` returns, over ``sample``
        indexed vectors used as queries (an int count, or a fraction of the index)."""
        if self.n == 0:
            return 1.0
        count = int(round(sample * self.n)) if isinstance(sample, float) and sample <= 1 else int(sample)
        count = max(1, min(count, self.n))
        k = max(1, min(int(k), self.n))
        rng = np.random.default_rng(self.seed + 1)
        rows = np.sort(rng.choice(self.n, size=count, replace=False))
        queries = self.vectors[rows]
        truth = _brute_topk(self.vectors, queries, k)
        _, found = self.search(queries, k)
        hits = sum(len(set(t.tolist()) & set(f.tolist())) for t, f in zip(truth, found))
        return hits / (count * k)

    def _supports_range_search(self) -> bool:
        if self._range_ok is None:
            if self.kind == "hnsw":
                # faiss runs HNSW range search inside the efSearch beam, so a dense cluster
                # larger than the beam silently loses pairs; use the growing-k path instead.
                self._range_ok = False
            else:
                try:
                    self.index.range_search(self.vectors[:1], 0.99)
                    self._range_ok = True
                except RuntimeError:
                    self._range_ok = False
        return self._range_ok

    def pairs_above(self, threshold: float) -> pd.DataFrame:
        """Every pair (i < j) with cosine >= threshold: columns i, j, similarity (best first)."""
        threshold = float(threshold)
        if self.n < 2:
            return _pairs_frame(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float32))
        if self.exact:
            # Same exact answer as range_search on IndexFlatIP, but numpy's blocked BLAS product
            # measured ~3x faster on this 2-core CPU (benchmarks/bench_neardup.py).
            return brute_force_pairs(self.vectors, threshold)
        if self._supports_range_search():
            a, b, s = self._pairs_by_range(threshold)
        else:
            a, b, s = self._pairs_by_growing_k(threshold)
        return _canonical_pairs(a, b, s, threshold)

    def _pairs_by_range(self, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts_a, parts_b, parts_s = [], [], []
        for start in range(0, self.n, _QUERY_BATCH):
            lims, d, i = self.index.range_search(self.vectors[start:start + _QUERY_BATCH], threshold)
            rows = np.repeat(np.arange(start, start + len(lims) - 1, dtype=np.int64), np.diff(lims).astype(np.int64))
            parts_a.append(rows)
            parts_b.append(i.astype(np.int64))
            parts_s.append(d.astype(np.float32))
        return np.concatenate(parts_a), np.concatenate(parts_b), np.concatenate(parts_s)

    def _pairs_by_growing_k(self, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts_a, parts_b, parts_s = [], [], []
        pending = np.arange(self.n)
        k = min(16, self.n)
        while len(pending):
            sims, ids = self.search(self.vectors[pending], k)
            keep = (sims >= threshold) & (ids >= 0)
            rows = np.repeat(pending, keep.sum(axis=1))
            parts_a.append(rows)
            parts_b.append(ids[keep])
            parts_s.append(sims[keep])
            # A row whose k-th neighbour still clears the threshold may have more beyond k.
            full = keep[:, -1] if k < self.n else np.zeros(len(pending), bool)
            if not full.any():
                break
            # Re-query only the saturated rows; their first k are re-found and deduplicated.
            pending = pending[full]
            k = min(self.n, k * 4)
        return np.concatenate(parts_a), np.concatenate(parts_b), np.concatenate(parts_s)


def _brute_topk(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    out = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), 512):
        sims = queries[start:start + 512] @ vectors.T
        part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        order = np.take_along_axis(sims, part, axis=1).argsort(axis=1)[:, ::-1]
        out[start:start + len(part)] = np.take_along_axis(part, order, axis=1)
    return out


def _canonical_pairs(a: np.ndarray, b: np.ndarray, s: np.ndarray, threshold: float) -> pd.DataFrame:
    mask = (a != b) & (b >= 0) & (s >= threshold)
    a, b, s = a[mask], b[mask], s[mask]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    frame = pd.DataFrame({"i": lo, "j": hi, "similarity": s})
    # Each pair is usually found from both ends; an approximate index may find it from one.
    frame = frame.sort_values("similarity", ascending=False, kind="stable")
    frame = frame.drop_duplicates(["i", "j"], keep="first")
    frame = frame.sort_values(["similarity", "i", "j"], ascending=[False, True, True], kind="stable")
    return _pairs_frame(frame["i"].to_numpy(), frame["j"].to_numpy(), frame["similarity"].to_numpy())


def _pairs_frame(i: np.ndarray, j: np.ndarray, s: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"i": np.asarray(i, dtype=np.int64), "j": np.asarray(j, dtype=np.int64),
                         "similarity": np.asarray(s, dtype=np.float32)}).reset_index(drop=True)


def brute_force_pairs(vectors: Any, threshold: float, *, block: int | None = None) -> pd.DataFrame:
    """Every pair (i < j) with cosine >= threshold, exactly, with numpy alone: blocked matrix
    products (a block of similarities stays under ~256 MB)."""
    x = _as_unit_matrix(vectors)
    if block is None:
        block = max(16, min(2048, (64 << 20) // max(1, len(x))))
    parts_a, parts_b, parts_s = [], [], []
    for start in range(0, len(x), block):
        sims = x[start:start + block] @ x.T
        r, c = np.nonzero(sims >= threshold)
        r = r + start
        keep = r < c
        parts_a.append(r[keep])
        parts_b.append(c[keep])
        parts_s.append(sims[r[keep] - start, c[keep]])
    if not parts_a:
        return _pairs_frame(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float32))
    return _canonical_pairs(np.concatenate(parts_a), np.concatenate(parts_b),
                            np.concatenate(parts_s), threshold)


__all__ = ["NeighborIndex", "brute_force_pairs"]
