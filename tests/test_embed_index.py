"""Which neighbour index memlab chooses, and why: exact (numpy for small sets, else faiss flat)
until a query measures that an approximate index costs less, IVF only where its recall measured
on the data reaches 0.999 (else exact again), and the answer says which was used. Correctness
against brute force, never time (the choices tested are counted in dot products at one
measured rate, so they do not depend on the machine's load)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from memlab.constants import NEIGHBOR_MIN_RECALL, NEIGHBOR_NUMPY_BELOW
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
    assert "exact (numpy)" in index.choice["reason"]
    sims, ids = index.search(x[:20], 7)
    truth = np.argsort(-(x[:20] @ x.T), axis=1, kind="stable")[:, :7]
    np.testing.assert_array_equal(ids, truth)
    np.testing.assert_allclose(sims, np.take_along_axis(x[:20] @ x.T, truth, axis=1), atol=1e-6)


def test_a_middle_set_is_the_exact_faiss_flat_index():
    x = _clustered(NEIGHBOR_NUMPY_BELOW + 500, centers=40, spread=0.4, seed=2)
    index = NeighborIndex(x)
    assert index.kind == "flat" and index.exact and "until a query measures" in index.reason
    _, ids = index.search(x[:50], 5)
    _, want = NeighborIndex(x, kind="numpy").search(x[:50], 5)
    np.testing.assert_array_equal(ids, want)
    got = index.pairs_above(0.8)
    # its threshold query measured a sample, and a partitioned build is not worth trying on
    # 2,500 vectors (counted in dot products, not timed): exact numpy answered, and says why
    meta = got.attrs["neighbor_index"]
    assert meta["kind"] == "numpy" and meta["exact"] and meta["pair_recall"] is None
    assert "measured on 512 sampled vectors" in meta["reason"]
    assert "not worth trying" in meta["reason"] and meta["measured"]["sample"] == 512
    assert _same_pairs(got, _exact_pairs(x, 0.8), x, 0.8)


def _try_partitions_at_any_speed(monkeypatch):
    # the time floor is the only timed part of the decision (both predictions use the rate
    # measured on the sample): off, the choice below does not depend on the machine's load
    import memlab.embed._index as index_module

    monkeypatch.setattr(index_module, "_TRY_MIN_SECONDS", 0.0)


def test_pairs_by_a_partitioned_search_where_it_measures_the_bar_and_no_invented_pair(monkeypatch):
    _try_partitions_at_any_speed(monkeypatch)
    x = _clustered(6_000, centers=150, spread=0.15, seed=6)
    got = NeighborIndex(x).pairs_above(0.95)
    meta = got.attrs["neighbor_index"]
    assert meta["kind"] == "ivf-numpy" and not meta["exact"], meta["reason"]
    assert meta["pair_recall"] >= NEIGHBOR_MIN_RECALL
    assert meta["nprobe"] <= meta["nlist"] // 4 and "partitioned (pair recall" in meta["reason"]
    truth = _exact_pairs(x, 0.95)
    found = _pairs(got, 0.95)
    assert len(truth) > 20_000
    assert found <= truth  # may miss a pair, never invents one
    assert len(found) / len(truth) >= NEIGHBOR_MIN_RECALL  # the bar holds on every pair
    assert (got["i"] < got["j"]).all() and got["similarity"].is_monotonic_decreasing
    np.testing.assert_allclose(got["similarity"], np.einsum(
        "ij,ij->i", x[got["i"].to_numpy()], x[got["j"].to_numpy()]), atol=1e-5)


def test_a_partitioned_search_short_of_the_bar_leaves_the_answer_to_exact_numpy(monkeypatch):
    # negative control: wide clusters, more than the lists: pairs straddle the partitions
    _try_partitions_at_any_speed(monkeypatch)
    x = _clustered(8_000, centers=400, spread=1.5, seed=7, dim=32)
    got = NeighborIndex(x).pairs_above(0.6)
    meta = got.attrs["neighbor_index"]
    assert meta["kind"] == "numpy" and meta["exact"] and "exact numpy" in meta["reason"]
    assert "partitioned search" in meta["reason"]  # it was tried, and measured short
    assert "< 0.999 at its widest" in meta["reason"]
    assert len(got) > 1000 and _same_pairs(got, _exact_pairs(x, 0.6), x, 0.6)


def test_search_builds_ivf_only_where_measured_cheaper_and_its_recall_is_one():
    # tight clusters, about one per IVF list: a vector's true neighbours share its cell
    x = _clustered(24_000, centers=600, spread=0.1, seed=3)
    index = NeighborIndex(x)
    assert index.kind == "flat" and index.exact  # no size cut: nothing built yet
    # negative control: 300 queries, the first 256 timed exactly; IVF's build alone (counted
    # in dot products) costs more than exact search of the other 44: exact, and says so
    few = x[np.random.default_rng(8).choice(len(x), 300, replace=False)]
    _, got = index.search(few, 10)
    assert index.kind == "flat" and index.exact and index.choice["reason"].endswith(": exact")
    assert index.choice["measured"]["search_sample"] == 256
    _, want = NeighborIndex(x, kind="numpy").search(few, 10)
    assert all(set(a) == set(b) for a, b in zip(got.tolist(), want.tolist()))
    # every vector as a query: IVF predicts less work, is built, tuned and measured at 1.0
    _, every = index.search(x, 10)
    choice = index.choice
    assert choice["kind"] == "ivf" and not choice["exact"], choice["reason"]
    assert choice["recall"] == 1.0 and f">= {NEIGHBOR_MIN_RECALL}: IVF" in choice["reason"]
    assert choice["nprobe"] <= choice["nlist"] // 4 and "search_ivf_s" in choice["measured"]
    # it claims recall 1.0: its neighbours are exact search's, on queries it did not sample
    rows = np.random.default_rng(9).choice(len(x), 300, replace=False)
    _, want = NeighborIndex(x, kind="numpy").search(x[rows], 10)
    assert all(set(a) == set(b) for a, b in zip(every[rows].tolist(), want.tolist()))
    pairs = index.pairs_above(0.99)
    meta = pairs.attrs["neighbor_index"]
    assert meta["kind"] == "ivf" and meta["pair_recall"] == 1.0
    assert len(pairs) > 10_000
    assert _same_pairs(pairs, _pairs(brute_force_pairs(x, 0.99), 0.99), x, 0.99)


def test_pairs_above_measures_at_every_size(monkeypatch):
    # 24,000 vectors (once past a size cut to IVF): the threshold query measures a sample and
    # chooses between numpy's exact product and its partitioned search, and holds the bar
    _try_partitions_at_any_speed(monkeypatch)
    x = _clustered(24_000, centers=600, spread=0.1, seed=3)
    got = NeighborIndex(x).pairs_above(0.99)
    meta = got.attrs["neighbor_index"]
    assert meta["measured"]["sample"] == 512 and meta["kind"] in ("numpy", "ivf-numpy")
    truth = _pairs(brute_force_pairs(x, 0.99), 0.99)  # numpy's blocked exact product
    found = _pairs(got, 0.99)
    # never an invented pair (but for float rounding at the threshold), the bar on all pairs
    assert all(abs(float(x[a] @ x[b]) - 0.99) < 1e-4 for a, b in found - truth)
    assert len(found & truth) / len(truth) >= NEIGHBOR_MIN_RECALL and len(truth) > 10_000
    if meta["exact"]:
        assert _same_pairs(got, truth, x, 0.99)


def test_ivf_short_of_the_bar_is_replaced_by_exact_search_and_says_so():
    # wide clusters in few dimensions: neighbours straddle cells; a quarter of the lists is
    # not enough for recall 0.999, so memlab answers exactly
    x = _clustered(21_000, centers=400, spread=1.5, seed=4, dim=32)
    index = NeighborIndex(x)
    _, got = index.search(x, 5)  # IVF predicts less work than exact: tried, and measured short
    assert index.kind == "flat" and index.exact and index.recall == 1.0
    assert "< 0.999" in index.reason and "exact instead" in index.reason
    rows = np.random.default_rng(10).choice(len(x), 300, replace=False)
    _, want = NeighborIndex(x, kind="numpy").search(x[rows], 5)
    assert all(set(a) == set(b) for a, b in zip(got[rows].tolist(), want.tolist()))
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
