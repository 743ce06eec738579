"""Nearest-neighbour search over unit vectors: exact where it must be, approximate only where
measured to lose nothing.

Vectors are L2-normalised on the way in, so inner product is cosine. With ``kind=None`` no size
cut chooses an approximate index: the index starts exact (``numpy`` below
:data:`~memlab.constants.NEIGHBOR_NUMPY_BELOW` vectors, faiss not imported; else faiss
``IndexFlatIP``, built when a search first needs it), and each query chooses by measuring,
at any size, with an approximate method kept only where its recall, measured on the data
itself, reaches :data:`~memlab.constants.NEIGHBOR_MIN_RECALL` (0.999):

* :meth:`NeighborIndex.search` with more than 256 queries answers the first 256 exactly and
  times them; that rate predicts exact search of the rest, and a lower bound on IVF-Flat's
  work (faiss's 25 k-means rounds, adding every vector, the recall sample, at least 4 lists
  per query), counted in dot products at the same rate. Only where IVF predicts less is it
  built, its ``nprobe`` doubled until recall@10 of a 256-vector sample against brute force
  reaches the bar, up to a quarter of its lists (wider, it scans as much as it saves); short
  of the bar, exact again. Exact where exact wins; the measuring is part of the answer.
* :meth:`NeighborIndex.pairs_above` (a threshold query) multiplies 512 sampled vectors with
  all of them (timed; also the exact answer for their pairs and the truth for measuring
  recall), which predicts what numpy's blocked product costs for the rest. Where a
  partitioned search's build is a small share of that work (counted in dot products, so
  small sets never try it), memlab clusters the vectors (spherical k-means in numpy, about
  sqrt(n) lists: the IVF idea without faiss's training cost), finds the narrowest ``nprobe`` at
  which the sample's true pairs are found at the bar (by list membership: exact), doubles it as
  a margin (quadruples it where the sample holds fewer than 64 pairs), and answers the rest that
  way if the dot products it counts, at the measured rate, beat numpy's; else exactly with
  numpy. faiss flat's range search is not a
  candidate (measured slower than numpy's product) nor faiss IVF as trained by default (its
  training alone costs more than the whole partitioned search: ``benchmarks/bench_neardup.py``).
  On an IVF index a search built, the query measures that index's recall on its own pairs
  (the pairs of 512 sampled vectors, by brute force), widens it short of the bar, and
  failing that answers as above.

What was used and why is in :attr:`NeighborIndex.choice` (``kind``, ``exact``, ``recall``,
``reason``, and ``measured`` once a search measured) and in the ``attrs["neighbor_index"]``
of every frame ``pairs_above`` returns (there ``kind``/``reason`` name what answered that query,
with the measured figures in ``measured``). ``kind="numpy"``, ``"flat"``, ``"ivf"`` or
``"hnsw"`` forces one (a forced approximate index is tuned to ``target_recall`` and kept even if
it falls short; its measured recall says so).
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any

import numpy as np
import pandas as pd

from memlab.constants import NEIGHBOR_MIN_RECALL, NEIGHBOR_NUMPY_BELOW
from memlab.embed._pairs import (
    as_unit_matrix,
    brute_force_pairs,
    brute_search,
    brute_topk,
    canonical_pairs,
    nearest_lists,
    pairs_frame,
    partitioned_pairs,
    spherical_kmeans,
    upper_pairs,
)
from memlab.errors import require

_KINDS = ("numpy", "flat", "ivf", "hnsw")
_RECALL_K = 10
_RECALL_SAMPLE = 256
_PAIR_SAMPLE = 512
# Queries search() answers exactly and times before it predicts the rest (module docstring).
_SEARCH_SAMPLE = 256
#: Similarities this close above a threshold count as on its border when recall is measured.
_BORDER = 1e-5
# Queries per range_search / search call: bounds the memory of one result batch.
_QUERY_BATCH = 2048
# The measured choice of pairs_above on an exact index memlab chose (see the module docstring):
# a partitioned search (about sqrt(n) lists from spherical k-means, _LEAN_NITER rounds on
# _LEAN_TRAIN points per list: its recall is measured, so its clustering need not be faiss's
# default 25 rounds on 256 points per list) is tried only where its build, counted in dot
# products times _BUILD_OVERHEAD, is at most _TRY_SHARE of the dot products numpy's product
# would still do, and numpy's predicted time for the rest is at least _TRY_MIN_SECONDS.
_LEAN_TRAIN = 32
_LEAN_NITER = 10
_BUILD_OVERHEAD = 2.0
# Small per-list products run below the big product's measured rate; counted at this factor.
_PARTITION_OVERHEAD = 2.0
_TRY_SHARE = 0.5
# The probe margin: twice the narrowest nprobe that finds the sample's pairs at the bar, four
# times where the sample holds fewer than _FEW_PAIRS pairs (100k vectors, 14 sampled pairs all
# found at nprobe 4: at 8, 1,947 of 1,948 true pairs; bench_neardup.py).
_FEW_PAIRS = 64
_FEW_MARGIN = 4
_TRY_MIN_SECONDS = 0.15


def _one_blas_thread() -> Any:
    """A context with BLAS on one thread, where threadpoolctl is installed (it comes with the
    embeddings extra). Many small products (k-means rounds, one per list) each pay the
    threads' hand-over; on a loaded 2-core machine that made them ~8x slower than one thread
    (measured: clustering 10,000 vectors 1.5 s on two threads, 0.16 s on one)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without it: BLAS's own threads; same answer, maybe slower
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def _faiss() -> Any:
    return require("faiss", "embeddings", feature="neighbour search", package="faiss-cpu")


class NeighborIndex:
    """k-nearest-neighbour and similarity-threshold search over a fixed set of vectors.

    ``kind``: None chooses (see the module docstring); ``"numpy"``, ``"flat"``, ``"ivf"`` or
    ``"hnsw"`` force one. ``exact_below``: below this size search() never tries an approximate
    index (default None: it measures at any size). ``target_recall``: the recall an
    approximate index must measure (default 0.999).
    """

    def __init__(
        self,
        vectors: Any,
        *,
        exact_below: int | None = None,
        kind: str | None = None,
        target_recall: float = NEIGHBOR_MIN_RECALL,
        seed: int = 0,
    ) -> None:
        self.vectors = as_unit_matrix(vectors)
        self.n, self.dim = self.vectors.shape
        if kind is not None and kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, not {kind!r}")
        self.forced = kind is not None
        self.target_recall = float(target_recall)
        self.seed = seed
        self.nprobe: int | None = None
        self.ef_search: int | None = None
        self.index: Any = None
        self._range_ok: bool | None = None
        self._pair_recall: dict[float, float | None] = {}
        self._exact_below = None if exact_below is None else int(exact_below)
        #: figures behind a measured choice (search's; pairs_above's are in its frame's attrs)
        self.measured: dict[str, Any] = {}
        if kind is None:
            # exact until a measurement says otherwise: search() and pairs_above() each time
            # exact work on a sample of their own queries (part of the answer) and try an
            # approximate index only where it predicts less work (module docstring)
            kind = "numpy" if self.n < NEIGHBOR_NUMPY_BELOW else "flat"
            engine = "numpy" if kind == "numpy" else "faiss flat index"
            reason = (
                f"{self.n:,} vectors: exact ({engine}) until a query measures that an "
                "approximate index costs less at recall >= "
                f"{self.target_recall}"
            )
        else:
            reason = f"kind={kind!r} asked for"
        if kind in ("ivf", "hnsw") and self.n < 2 * _RECALL_K:
            kind, reason = (
                "flat",
                f"{self.n} vectors: too few to train or measure an approximate index",
            )
        self.kind = kind
        # faiss flat memlab chose is built when a search needs it (pairs_above answers with
        # numpy); asked for, it is built now
        lazy = kind == "numpy" or (kind == "flat" and not self.forced)
        self.index = None if lazy else self._build(_faiss())
        #: recall@10 against brute force on a sample; 1.0 for an exact index.
        self.recall: float = 1.0 if self.exact else self._tune()
        if not self.exact:
            reason += f"; recall@10 {self.recall:.4f} measured"
        self.reason = reason

    def __len__(self) -> int:
        return self.n

    @property
    def exact(self) -> bool:
        return self.kind in ("numpy", "flat")

    @property
    def choice(self) -> dict[str, Any]:
        """Which index answers, and why: ``kind``, ``exact``, ``recall`` (recall@10 measured;
        1.0 exact), ``reason``, ``n``, ``nlist``/``nprobe`` or ``efSearch`` where they apply."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "exact": self.exact,
            "recall": self.recall,
            "reason": self.reason,
            "n": self.n,
        }
        if self.measured:
            out["measured"] = dict(self.measured)
        if self.kind == "ivf":
            out.update(nlist=int(self.index.nlist), nprobe=self.nprobe)
        if self.kind == "hnsw":
            out["efSearch"] = self.ef_search
        return out

    def __repr__(self) -> str:
        breadth = f" nprobe={self.nprobe}" if self.nprobe else ""
        breadth += f" efSearch={self.ef_search}" if self.ef_search else ""
        return (
            f"<NeighborIndex {self.kind} n={self.n} d={self.dim}{breadth} "
            f"recall@10={self.recall:.3f}>"
        )

    # ---- building -------------------------------------------------------------------------
    def _exact_instead(self) -> None:
        self.kind, self.nprobe, self.ef_search = "flat", None, None
        self.index = None  # built when a search needs it
        self.recall = 1.0

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

    def _widest_nprobe(self) -> int:
        # Chosen by memlab: up to a quarter of the lists (wider scans about as much as flat).
        # Forced: every list, if that is what the target takes.
        nlist = int(self.index.nlist)
        return nlist if self.forced else max(1, nlist // 4)

    def _widen(self) -> bool:
        """One step wider search; False when already at the widest. The breadth is read from the
        built index (``_build`` set it there and in ``nprobe``/``ef_search`` alike)."""
        if self.kind == "ivf":
            widest, nprobe = self._widest_nprobe(), int(self.index.nprobe)
            if nprobe >= widest:
                return False
            self.nprobe = self.index.nprobe = min(widest, nprobe * 2)
            return True
        ef_search = int(self.index.hnsw.efSearch)
        if ef_search >= max(1024, self.n):
            return False
        self.ef_search = self.index.hnsw.efSearch = ef_search * 2
        return True

    def _tune(self) -> float:
        """Widen the search until recall@10 on a sample reaches target_recall (or the widest)."""
        while True:
            recall = self.recall_at(_RECALL_K, _RECALL_SAMPLE)
            if recall >= self.target_recall or not self._widen():
                return recall

    # ---- queries --------------------------------------------------------------------------
    def search(self, queries: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k by cosine: (similarities, indices), each (n_queries, k), best first.

        When k exceeds the index size the tail is padded with similarity -inf and index -1.
        On an index memlab chose (``kind=None``) and still exact, each call measures first: its
        first queries are answered exactly and timed, and an IVF index is built only where its
        work (counted in dot products at that measured rate, a lower bound) is less than exact
        search's for the rest; it is kept only where its recall@10 reaches ``target_recall``.
        """
        q = as_unit_matrix(np.atleast_2d(queries))
        k = int(k)
        if k <= 0:
            raise ValueError("k must be positive")
        if (
            self.exact
            and not self.forced
            and min(k, self.n) > 0
            and len(q) > _SEARCH_SAMPLE
            and self.n >= 2 * _RECALL_K
            and (self._exact_below is None or self.n >= self._exact_below)
        ):
            return self._search_measured(q, k)
        return self._search(q, k)

    def _search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        sims = np.full((len(q), k), -np.inf, dtype=np.float32)
        ids = np.full((len(q), k), -1, dtype=np.int64)
        kk = min(k, self.n)
        if kk == 0 or len(q) == 0:
            return sims, ids
        if self.kind == "flat" and self.index is None:
            self.index = self._build(_faiss())
        for start in range(0, len(q), _QUERY_BATCH):
            if self.kind == "numpy":
                d, i = brute_search(self.vectors, q[start : start + _QUERY_BATCH], kk)
            else:
                d, i = self.index.search(q[start : start + _QUERY_BATCH], kk)
            d = np.where(i < 0, -np.inf, d)
            sims[start : start + len(d), :kk] = d
            ids[start : start + len(d), :kk] = i
        return sims, ids

    def _search_measured(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """search() on an exact index memlab chose: time exact search of the first queries
        (their answer), predict the rest, and build IVF only where it predicts less work."""
        n, head = self.n, _SEARCH_SAMPLE
        if self.kind == "flat" and self.index is None:
            self.index = self._build(_faiss())  # built before timing: exact's cost is search
        t0 = time.perf_counter()
        first = self._search(q[:head], k)
        sample_s = time.perf_counter() - t0
        rate = head * n / max(sample_s, 1e-9)  # dot products per second, measured
        rest = len(q) - head
        exact_s = rest * n / rate
        nlist = max(1, min(int(4 * math.sqrt(n)), n // 40))
        train_n = min(n, nlist * 64)
        # faiss trains 25 k-means rounds, adds every vector, measures recall on 256 queries by
        # brute force, then scans at least 4 lists per query: a lower bound on IVF's work
        ivf_dots = (
            25 * train_n * nlist
            + n * nlist
            + _RECALL_SAMPLE * n
            + rest * (nlist + min(nlist, 4) * n / nlist)
        )
        ivf_s = ivf_dots / rate
        self.measured = {
            "search_sample": head,
            "search_sample_s": round(sample_s, 4),
            "search_exact_rest_s": round(exact_s, 4),
            "search_ivf_at_least_s": round(ivf_s, 4),
        }
        basis = (
            f"search measured on its first {head} of {len(q):,} queries ({sample_s:.3f} s "
            f"exact over {n:,} vectors): exact predicts {exact_s:.2f} s for the rest, IVF "
            f"({nlist} lists) at least {ivf_s:.2f} s to build, tune and search"
        )
        if ivf_s >= exact_s:
            self.reason = f"{basis}: exact"
            return self._search_more(first, q[head:], k)
        exact_kind = self.kind
        self.kind = "ivf"
        t0 = time.perf_counter()
        self.index = self._build(_faiss())
        self.recall = self._tune()
        self.measured["search_ivf_s"] = round(time.perf_counter() - t0, 4)
        where = (
            f"{basis}; IVF built and tuned in {self.measured['search_ivf_s']:.2f} s: "
            f"nprobe {self.nprobe}, recall@10 {self.recall:.4f} measured on "
            f"{min(_RECALL_SAMPLE, n)} of the {n:,} vectors"
        )
        if self.recall < self.target_recall:
            self.reason = (
                f"{where} < {self.target_recall} at the widest nprobe tried: exact instead"
            )
            self._exact_instead()
            self.kind = exact_kind
            return self._search_more(first, q[head:], k)
        self.reason = f"{where} >= {self.target_recall}: IVF"
        return self._search_more(first, q[head:], k)

    def _search_more(
        self, first: tuple[np.ndarray, np.ndarray], q: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        more = self._search(q, k)
        return np.concatenate([first[0], more[0]]), np.concatenate([first[1], more[1]])

    def recall_at(self, k: int = 10, sample: int | float = 256) -> float:
        """Mean fraction of the true top-k (brute force) that ``search`` returns, over ``sample``
        indexed vectors used as queries (an int count, or a fraction of the index)."""
        if self.n == 0:
            return 1.0
        count = (
            int(round(sample * self.n))
            if isinstance(sample, float) and sample <= 1
            else int(sample)
        )
        count = max(1, min(count, self.n))
        k = max(1, min(int(k), self.n))
        rng = np.random.default_rng(self.seed + 1)
        rows = np.sort(rng.choice(self.n, size=count, replace=False))
        queries = self.vectors[rows]
        truth = brute_topk(self.vectors, queries, k)
        _, found = self._search(queries, k)
        hits = sum(len(set(t.tolist()) & set(f.tolist())) for t, f in zip(truth, found))
        return hits / (count * k)

    def _supports_range_search(self) -> bool:
        if self.index is None:
            return False
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
        """Every pair (i < j) with cosine >= threshold: columns i, j, similarity (best first).

        An approximate index first measures its recall on this query's own pairs (the share of
        the pairs of 512 sampled vectors it finds, against brute force); short of
        ``target_recall`` it widens its search, and failing that answers as an exact one. An
        exact index memlab chose (any size) chooses by measuring between numpy's product and
        a partitioned search (module docstring). The frame's ``attrs["neighbor_index"]`` says
        which answered and why (``kind``, ``reason``, ``pair_recall``; ``measured`` holds the
        sample's figures where the choice was measured).
        """
        threshold = float(threshold)
        if self.n < 2:
            frame = pairs_frame(
                np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float32)
            )
            frame.attrs["neighbor_index"] = {**self.choice, "pair_recall": None}
            return frame
        pair_recall: float | None = None
        if not self.exact:
            pair_recall = self._measure_pairs(threshold)
            while (
                pair_recall is not None
                and pair_recall < self.target_recall
                and not self.forced
                and self._widen()
            ):
                self.recall = self.recall_at(_RECALL_K, _RECALL_SAMPLE)
                pair_recall = self._measure_pairs(threshold)
            if pair_recall is not None and pair_recall < self.target_recall and not self.forced:
                self.reason = (
                    f"IVF reached pair recall {pair_recall:.4f} < "
                    f"{self.target_recall} at threshold {threshold} on "
                    f"{min(_PAIR_SAMPLE, self.n)} sampled vectors, at its widest "
                    f"nprobe: exact faiss flat index instead"
                )
                self._exact_instead()
        if self.exact and not self.forced:
            # numpy's exact product or a lean IVF, chosen by measuring at any size
            frame, answered = self._pairs_measured(threshold)
            frame.attrs["neighbor_index"] = {**self.choice, **answered}
            return frame
        if self.exact:
            # Same exact answer as range_search on IndexFlatIP, but numpy's blocked BLAS product
            # measured ~3x faster on this 2-core CPU (benchmarks/bench_neardup.py).
            frame = brute_force_pairs(self.vectors, threshold)
        else:
            if self._supports_range_search():
                a, b, s = self._pairs_by_range(threshold)
            else:
                a, b, s = self._pairs_by_growing_k(threshold)
            frame = canonical_pairs(a, b, s, threshold)
        frame.attrs["neighbor_index"] = {**self.choice, "pair_recall": pair_recall}
        return frame

    def _pairs_measured(self, threshold: float) -> tuple[pd.DataFrame, dict[str, Any]]:
        """Pairs >= threshold by numpy's exact product or a partitioned (IVF) search, whichever
        measures faster on a sample, the partitioned one only where it finds the sample's pairs
        at the bar. Returns the frame and what answered: kind, exact, pair_recall, reason,
        measured."""
        n, x = self.n, self.vectors
        count = min(_PAIR_SAMPLE, n)
        rng = np.random.default_rng(self.seed + 2)
        rows = np.sort(rng.choice(n, size=count, replace=False))
        sampled = np.zeros(n, bool)
        sampled[rows] = True
        rest = np.flatnonzero(~sampled)
        m = len(rest)
        t0 = time.perf_counter()
        sims = x[rows] @ x.T
        r, c = np.nonzero(sims >= threshold)
        sample_s = time.perf_counter() - t0
        rate = count * n / max(sample_s, 1e-9)  # dot products per second, measured
        keep = rows[r] != c
        # every pair with a sampled end, exactly: part of the answer whichever answers the rest
        sample_pairs = (rows[r[keep]], c[keep].astype(np.int64), sims[r[keep], c[keep]])
        numpy_s = (m * m / 2) / rate  # numpy's blocked product for the rest
        measured: dict[str, Any] = {
            "sample": count,
            "sample_s": round(sample_s, 4),
            "numpy_rest_s": round(numpy_s, 4),
        }
        nlist = max(1, min(int(math.sqrt(n)), n // 40))
        train_n = min(n, nlist * _LEAN_TRAIN)
        build_dots = (_LEAN_NITER * train_n + n) * nlist * _BUILD_OVERHEAD
        basis = (
            f"measured on {count} sampled vectors ({sample_s:.3f} s, their pairs exact): "
            f"numpy's product predicts {numpy_s:.2f} s for the other {m:,}"
        )
        answered: dict[str, Any] = {"kind": "numpy", "exact": True, "pair_recall": None}
        if m == 0 or build_dots > _TRY_SHARE * m * m / 2 or numpy_s < _TRY_MIN_SECONDS:
            why = (
                f"{basis}; a partitioned index ({build_dots / 1e6:.1f}M dot products "
                f"weighted to build) is not worth trying against {m * m / 2e6:.1f}M: exact "
                "numpy"
            )
        else:
            why, part = self._try_partitions(
                threshold, rows, sims, nlist, train_n, rate, numpy_s, rest, measured, basis
            )
            if part is not None:
                a, b, s, recall, nprobe = part
                frame = canonical_pairs(
                    np.concatenate([sample_pairs[0], a]),
                    np.concatenate([sample_pairs[1], b]),
                    np.concatenate([sample_pairs[2], s]),
                    threshold,
                )
                answered = {
                    "kind": "ivf-numpy",
                    "exact": False,
                    "pair_recall": recall,
                    "nlist": nlist,
                    "nprobe": nprobe,
                }
                return frame, {**answered, "reason": why, "measured": measured}
        a, b, s = upper_pairs(x[rest], threshold)
        frame = canonical_pairs(
            np.concatenate([sample_pairs[0], rest[a]]),
            np.concatenate([sample_pairs[1], rest[b]]),
            np.concatenate([sample_pairs[2], s]),
            threshold,
        )
        return frame, {**answered, "reason": why, "measured": measured}

    def _try_partitions(
        self,
        threshold: float,
        rows: np.ndarray,
        sims: np.ndarray,
        nlist: int,
        train_n: int,
        rate: float,
        numpy_s: float,
        rest: np.ndarray,
        measured: dict[str, Any],
        basis: str,
    ) -> tuple[str, tuple | None]:
        """Cluster (spherical k-means on a sample), find the narrowest probe count at which the
        sample's true pairs are all but found (by list membership: exact, no product), double
        it as a margin (a sample holds few pairs), and search the rest that way if the dot
        products it counts, at the measured rate, beat numpy's: (reason, (i, j, sim, recall,
        nprobe) or None)."""
        x = self.vectors
        r, c = np.nonzero(sims >= threshold + _BORDER)  # border pairs: rounding, not misses
        keep = rows[r] != c
        pu, pv = rows[r[keep]], c[keep]
        if len(pu) == 0:
            return (
                f"{basis}; the sample has no pair at {threshold} to measure a partitioned "
                "search's recall on: exact numpy"
            ), None
        t0 = time.perf_counter()
        widest = max(1, nlist // 4)
        with _one_blas_thread():
            centres = spherical_kmeans(x, nlist, train_n, _LEAN_NITER, self.seed)
        order = nearest_lists(x, centres, widest)  # lists by closeness
        home = order[:, 0]
        build_s = time.perf_counter() - t0
        measured["partition_build_s"] = round(build_s, 4)
        sizes = np.bincount(home[rest], minlength=nlist)
        nprobe, recall = 1, 0.0
        while True:
            probes = order[:, :nprobe]
            found = (probes[pu] == home[pv, None]).any(1) | (probes[pv] == home[pu, None]).any(1)
            recall = float(found.mean())
            measured[f"nprobe_{nprobe}_recall"] = round(recall, 4)
            if recall >= self.target_recall or nprobe >= widest:
                break
            nprobe = min(widest, nprobe * 2)
        where = (
            f"{basis}; partitioned search ({nlist} lists, clustered in {build_s:.2f} s) at "
            f"nprobe {nprobe} finds {recall:.4f} of the sample's {len(pu)} pairs"
        )
        if recall < self.target_recall:
            return f"{where} < {self.target_recall} at its widest worth trying: exact numpy", None
        # margin: a sample of fewer than _FEW_PAIRS pairs cannot tell 0.999 from ~0.98
        margin = _FEW_MARGIN if len(pu) < _FEW_PAIRS else 2
        nprobe = min(widest, margin * nprobe)
        dots = float(sizes[order[rest, :nprobe]].sum())
        part_s = _PARTITION_OVERHEAD * dots / rate
        measured.update(nprobe=nprobe, partition_dots=dots, partition_rest_s=round(part_s, 4))
        where += (
            f"; at {margin}x that, nprobe {nprobe} (margin: the sample holds "
            f"{'fewer than ' + str(_FEW_PAIRS) if margin > 2 else 'few'} pairs), it "
            f"predicts {part_s:.2f} s"
        )
        if part_s >= numpy_s:
            return f"{where}: exact numpy (faster)", None
        with _one_blas_thread():
            a, b, s = partitioned_pairs(x, rest, order[:, :nprobe], home, threshold)
        return (
            f"{where}: partitioned (pair recall >= {self.target_recall} on the sample, faster)"
        ), (a, b, s, recall, nprobe)

    def _measure_pairs(self, threshold: float) -> float | None:
        """Share of the true pairs (>= threshold, brute force) of a sample of vectors that this
        index finds (pairs within 1e-5 of the threshold, where float rounding decides, not
        counted); None when the sample has no such pair (nothing to measure)."""
        count = min(_PAIR_SAMPLE, self.n)
        rng = np.random.default_rng(self.seed + 2)
        rows = np.sort(rng.choice(self.n, size=count, replace=False))
        sims = self.vectors[rows] @ self.vectors.T
        r, c = np.nonzero(sims >= threshold)
        # a pair within float rounding of the threshold is not a miss: BLAS paths differ there
        keep = (rows[r] != c) & (sims[r, c] >= threshold + _BORDER)
        truth = set(zip(rows[r[keep]].tolist(), c[keep].tolist()))
        if not truth:
            self._pair_recall[threshold] = None
            return None
        if self._supports_range_search():
            lims, d, i = self.index.range_search(self.vectors[rows], threshold)
            a = np.repeat(rows, np.diff(lims).astype(np.int64))
            found = set(zip(a.tolist(), i.astype(np.int64).tolist()))
        else:
            found = set()
            k = min(self.n, 16)
            while True:
                s, i = self._search(self.vectors[rows], k)
                hit = (s >= threshold) & (i >= 0)
                found = {(int(rows[x]), int(i[x, y])) for x, y in zip(*np.nonzero(hit))}
                if k >= self.n or not hit[:, -1].any():
                    break
                k = min(self.n, k * 4)
        recall = len(found & truth) / len(truth)
        self._pair_recall[threshold] = recall
        return recall

    def _pairs_by_range(self, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts_a, parts_b, parts_s = [], [], []
        for start in range(0, self.n, _QUERY_BATCH):
            lims, d, i = self.index.range_search(
                self.vectors[start : start + _QUERY_BATCH], threshold
            )
            rows = np.repeat(
                np.arange(start, start + len(lims) - 1, dtype=np.int64),
                np.diff(lims).astype(np.int64),
            )
            parts_a.append(rows)
            parts_b.append(i.astype(np.int64))
            parts_s.append(d.astype(np.float32))
        return np.concatenate(parts_a), np.concatenate(parts_b), np.concatenate(parts_s)

    def _pairs_by_growing_k(self, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts_a, parts_b, parts_s = [], [], []
        pending = np.arange(self.n)
        k = min(16, self.n)
        while len(pending):
            sims, ids = self._search(self.vectors[pending], k)
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


__all__ = ["NeighborIndex", "brute_force_pairs"]
