"""Exact and partitioned pair search with numpy alone: the work under
:class:`memlab.embed.NeighborIndex` (blocked products over the upper triangle, top-k by brute
force, spherical k-means and the per-list products of a partitioned search), and the
canonical pairs frame every threshold query returns."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from memlab.embed._embedder import unit_rows


def as_unit_matrix(vectors: Any) -> np.ndarray:
    """``vectors`` as a C-contiguous float32 (n, d) matrix of unit rows."""
    x = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if x.ndim != 2:
        raise ValueError(f"expected an (n, d) matrix of vectors, got shape {x.shape}")
    return np.ascontiguousarray(unit_rows(x), dtype=np.float32)


def brute_search(vectors: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k by inner product with numpy: (similarities, indices), best first."""
    sims_out = np.empty((len(queries), k), dtype=np.float32)
    ids_out = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), 512):
        sims = queries[start : start + 512] @ vectors.T
        part = (
            np.argpartition(-sims, k - 1, axis=1)[:, :k]
            if k < sims.shape[1]
            else np.broadcast_to(np.arange(sims.shape[1]), sims.shape).copy()
        )
        vals = np.take_along_axis(sims, part, axis=1)
        order = np.argsort(-vals, axis=1, kind="stable")
        ids_out[start : start + len(part)] = np.take_along_axis(part, order, axis=1)
        sims_out[start : start + len(part)] = np.take_along_axis(vals, order, axis=1)
    return sims_out, ids_out


def brute_topk(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    out = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), 512):
        sims = queries[start : start + 512] @ vectors.T
        part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        order = np.take_along_axis(sims, part, axis=1).argsort(axis=1)[:, ::-1]
        out[start : start + len(part)] = np.take_along_axis(part, order, axis=1)
    return out


def spherical_kmeans(x: np.ndarray, k: int, train_n: int, iters: int, seed: int) -> np.ndarray:
    """k unit centres from ``iters`` rounds of spherical k-means on ``train_n`` sampled rows."""
    rng = np.random.default_rng(seed)
    train = x[np.sort(rng.choice(len(x), size=train_n, replace=False))]
    centres = train[rng.choice(train_n, size=k, replace=False)].copy()
    for _ in range(iters):
        assign = np.argmax(centres @ train.T, axis=0)  # this orientation: ~10x faster BLAS
        onehot = np.zeros((k, train_n), np.float32)
        onehot[assign, np.arange(train_n)] = 1.0
        sums = onehot @ train
        norms = np.linalg.norm(sums, axis=1)
        filled = norms > 0  # an emptied list keeps its old centre
        centres[filled] = sums[filled] / norms[filled, None]
    return np.ascontiguousarray(centres, dtype=np.float32)


def nearest_lists(x: np.ndarray, centres: np.ndarray, count: int) -> np.ndarray:
    """Each row's ``count`` closest centres, closest first: (n, count), in blocks of rows (a
    partial sort, not a full one: the widest probe count is a quarter of the lists)."""
    out = np.empty((len(x), count), np.int64)
    for start in range(0, len(x), 8192):
        close = x[start : start + 8192] @ centres.T
        part = (
            np.argpartition(-close, count - 1, axis=1)[:, :count]
            if count < close.shape[1]
            else np.broadcast_to(np.arange(close.shape[1]), close.shape)
        )
        by = np.argsort(-np.take_along_axis(close, part, axis=1), axis=1, kind="stable")
        out[start : start + len(close)] = np.take_along_axis(part, by, axis=1)
    return out


def partitioned_pairs(
    x: np.ndarray, rest: np.ndarray, probes: np.ndarray, home: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs >= threshold among ``rest`` whose one end's home list is among the other's probes:
    per list, the product of the rows probing it with the rows living in it."""
    members: dict[int, list[int]] = {}
    probing: dict[int, list[int]] = {}
    for row in rest.tolist():
        members.setdefault(int(home[row]), []).append(row)
    rest_probes = probes[rest]
    for col in range(rest_probes.shape[1]):
        lists = rest_probes[:, col]
        by_list = np.argsort(lists, kind="stable")
        bounds = np.searchsorted(lists[by_list], np.arange(int(home.max()) + 2))
        for lst in range(len(bounds) - 1):
            chunk = rest[by_list[bounds[lst] : bounds[lst + 1]]]
            if len(chunk):
                probing.setdefault(lst, []).extend(chunk.tolist())
    parts_a = [np.empty(0, np.int64)]
    parts_b = [np.empty(0, np.int64)]
    parts_s = [np.empty(0, np.float32)]
    for lst, mem in members.items():
        q = np.asarray(probing.get(lst, ()), np.int64)
        if len(q) == 0:
            continue
        mem_rows = np.asarray(mem, np.int64)
        sims = x[q] @ x[mem_rows].T
        r, c = np.nonzero(sims >= threshold)
        parts_a.append(q[r])
        parts_b.append(mem_rows[c])
        parts_s.append(sims[r, c])
    return np.concatenate(parts_a), np.concatenate(parts_b), np.concatenate(parts_s)


def canonical_pairs(a: np.ndarray, b: np.ndarray, s: np.ndarray, threshold: float) -> pd.DataFrame:
    mask = (a != b) & (b >= 0) & (s >= threshold)
    a, b, s = a[mask], b[mask], s[mask]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    frame = pd.DataFrame({"i": lo, "j": hi, "similarity": s})
    # Each pair is usually found from both ends; an approximate index may find it from one.
    frame = frame.sort_values("similarity", ascending=False, kind="stable")
    frame = frame.drop_duplicates(["i", "j"], keep="first")
    frame = frame.sort_values(
        ["similarity", "i", "j"], ascending=[False, True, True], kind="stable"
    )
    return pairs_frame(frame["i"].to_numpy(), frame["j"].to_numpy(), frame["similarity"].to_numpy())


def pairs_frame(i: np.ndarray, j: np.ndarray, s: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "i": np.asarray(i, dtype=np.int64),
            "j": np.asarray(j, dtype=np.int64),
            "similarity": np.asarray(s, dtype=np.float32),
        }
    ).reset_index(drop=True)


def brute_force_pairs(vectors: Any, threshold: float, *, block: int | None = None) -> pd.DataFrame:
    """Every pair (i < j) with cosine >= threshold, exactly, with numpy alone: blocked matrix
    products of each block of rows with the rows from it on (the upper triangle: half the
    products of the full square; a block of similarities stays under ~256 MB)."""
    x = as_unit_matrix(vectors)
    if len(x) == 0:
        return pairs_frame(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float32))
    return canonical_pairs(*upper_pairs(x, threshold, block), threshold)


def upper_pairs(
    x: np.ndarray, threshold: float, block: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, similarity) of every i < j with x[i] . x[j] >= threshold: blocked products."""
    if block is None:
        block = max(16, min(2048, (64 << 20) // max(1, len(x))))
    parts_a = [np.empty(0, np.int64)]
    parts_b = [np.empty(0, np.int64)]
    parts_s = [np.empty(0, np.float32)]
    for start in range(0, len(x), block):
        sims = x[start : start + block] @ x[start:].T
        r, c = np.nonzero(sims >= threshold)
        keep = r < c  # both local to the block's start: j > i
        parts_a.append(r[keep] + start)
        parts_b.append(c[keep] + start)
        parts_s.append(sims[r[keep], c[keep]])
    return np.concatenate(parts_a), np.concatenate(parts_b), np.concatenate(parts_s)


__all__ = [
    "as_unit_matrix",
    "brute_force_pairs",
    "brute_search",
    "brute_topk",
    "canonical_pairs",
    "nearest_lists",
    "pairs_frame",
    "partitioned_pairs",
    "spherical_kmeans",
    "upper_pairs",
]
