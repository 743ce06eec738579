"""Which neighbour index memlab chooses, and why: exact numpy for small sets, faiss flat up to
the approximate size, IVF only where its recall measured on the data reaches 0.999 (else exact
again), and the answer says which was used. Correctness against brute force, never time."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from memlab.constants import NEIGHBOR_APPROX_FROM, NEIGHBOR_MIN_RECALL, NEIGHBOR_NUMPY_BELOW
from memlab.embed import NeighborIndex, brute_force_pairs


def _clustered(n: int, *, centers: int, spread: float, seed: int = 0, dim: int = 48) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((centers, dim)).astype(np.float32)
    x = c[rng.integers(0, centers, n)] + spread * rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _exact_pairs(x: np.ndarray, threshold: float) -> set[tuple[int, int]]:
    """Brute force with the full product (not memlab's blocks), pairs away from the border."""
    sims = x @ x.T
    r, c = np.nonzero(np.triu(sims >= threshold, k=1))
    return {(a, b) for a, b in zip(r.tolist(), c.tolist()) if abs(sims[a, b] - threshold) > 1e-5}


def _pairs(frame, threshold: float) -> set[tuple[int, int]]:
    frame = frame[(frame["similarity"] - threshold).abs() > 1e-5]
    return set(zip(frame["i"].tolist(), frame["j"].tolist()))


def _same_pairs(got, want: set[tuple[int, int]], x: np.ndarray, threshold: float) -> bool:
    """Equal but for pairs within float rounding of the threshold (by a plain dot product)."""
    odd = _pairs(got, threshold) ^ want
    return all(abs(float(x[a] @ x[b]) - threshold) < 1e-4 for a, b in odd)


def test_a_small_set_is_exact_numpy_and_never_imports_faiss():
    code = ("import sys, numpy as np\n"
            "from memlab.embed import NeighborIndex\n"
            "x = np.random.default_rng(0).standard_normal((300, 16)).astype(np.float32)\n"
            "i = NeighborIndex(x)\n"
            "p = i.pairs_above(0.5)\n"
            "print(i.kind, p.attrs['neighbor_index']['kind'], 'faiss' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["numpy", "numpy", "False"]


def test_numpy_search_equals_brute_force_and_says_why():
    x = _clustered(NEIGHBOR_NUMPY_BELOW - 1, centers=40, spread=0.4, seed=1)
    index = NeighborIndex(x)
    assert index.choice["kind"] == "numpy" and index.choice["exact"] and index.recall == 1.0
    assert f"< {NEIGHBOR_NUMPY_BELOW:,}" in index.choice["reason"]
    sims, ids = index.search(x[:20], 7)
    truth = np.argsort(-(x[:20] @ x.T), axis=1, kind="stable")[:, :7]
    np.testing.assert_array_equal(ids, truth)
    np.testing.assert_allclose(sims, np.take_along_axis(x[:20] @ x.T, truth, axis=1), atol=1e-6)


def test_a_middle_set_is_the_exact_faiss_flat_index():
    x = _clustered(NEIGHBOR_NUMPY_BELOW + 500, centers=40, spread=0.4, seed=2)
    index = NeighborIndex(x)
    assert index.kind == "flat" and index.exact and f"< {NEIGHBOR_APPROX_FROM:,}" in index.reason
    _, ids = index.search(x[:50], 5)
    _, want = NeighborIndex(x, kind="numpy").search(x[:50], 5)
    np.testing.assert_array_equal(ids, want)
    got = index.pairs_above(0.8)
    assert got.attrs["neighbor_index"]["kind"] == "flat"
    assert _same_pairs(got, _exact_pairs(x, 0.8), x, 0.8)


def test_ivf_is_used_where_its_measured_recall_is_one_and_then_equals_exact_search():
    # tight clusters, about one per IVF list: a vector's true neighbours share its cell
    x = _clustered(24_000, centers=600, spread=0.1, seed=3)
    index = NeighborIndex(x)
    choice = index.choice
    assert choice["kind"] == "ivf" and not choice["exact"]
    assert choice["recall"] == 1.0 and f">= {NEIGHBOR_MIN_RECALL}" in choice["reason"]
    assert choice["nprobe"] <= choice["nlist"] // 4
    # it claims recall 1.0: its neighbours are exact search's, on queries it did not sample
    queries = x[np.random.default_rng(9).choice(len(x), 300, replace=False)]
    _, got = index.search(queries, 10)
    _, want = NeighborIndex(x, kind="numpy").search(queries, 10)
    assert all(set(a) == set(b) for a, b in zip(got.tolist(), want.tolist()))
    pairs = index.pairs_above(0.99)
    meta = pairs.attrs["neighbor_index"]
    assert meta["kind"] == "ivf" and meta["pair_recall"] == 1.0
    assert len(pairs) > 10_000
    assert _same_pairs(pairs, _pairs(brute_force_pairs(x, 0.99), 0.99), x, 0.99)


def test_ivf_short_of_the_bar_is_replaced_by_exact_search_and_says_so():
    # wide clusters in few dimensions: neighbours straddle cells; a quarter of the lists is
    # not enough for recall 0.999, so memlab answers exactly
    x = _clustered(21_000, centers=400, spread=1.5, seed=4, dim=32)
    index = NeighborIndex(x)
    assert index.kind == "flat" and index.exact and index.recall == 1.0
    assert "< 0.999" in index.reason and "exact faiss flat index instead" in index.reason
    # forced, IVF is kept and widened past a quarter of its lists until it measures the bar
    forced = NeighborIndex(x, kind="ivf")
    assert forced.kind == "ivf" and forced.recall >= NEIGHBOR_MIN_RECALL
    assert forced.nprobe > forced.index.nlist // 4


@pytest.mark.parametrize("kind", ["numpy", "flat", "ivf"])
def test_every_kind_finds_the_same_pairs_where_it_claims_recall_one(kind):
    x = _clustered(6_000, centers=30, spread=0.2, seed=5)
    index = NeighborIndex(x, kind=kind)
    got = index.pairs_above(0.95)
    meta = got.attrs["neighbor_index"]
    assert meta["kind"] == kind
    if meta["exact"] or meta["pair_recall"] == 1.0:
        assert _same_pairs(got, _exact_pairs(x, 0.95), x, 0.95)
