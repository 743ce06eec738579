"""Near-duplicate search: faiss next to numpy brute force, on 10k and 100k vectors.

The vectors are 384-dimensional and unit-length like MiniLM's, built with a fixed seed:
topic centres, members spread around them (cosine ~0.3-0.7 to each other, as blocks on one
topic are), and 2% of them copied with a small perturbation as planted near-duplicates
(cosine >= 0.9). For each size, in the same run, it times every pair at or above the
threshold found by:

- ``numpy``: blocked matrix products (``brute_force_pairs``), the reference answer, and what
  ``NeighborIndex.pairs_above`` runs for its exact (flat) index;
- ``faiss flat``: faiss's own exact ``range_search`` on ``IndexFlatIP``;
- ``faiss ivf``: ``NeighborIndex(kind="ivf")``, build + recall tuning + ``range_search``;
- ``faiss hnsw``: ``NeighborIndex(kind="hnsw")`` (no range search: growing-k fallback);

and prints the time, pairs found and recall of the true pairs. Nothing about time is asserted.

    .venv/bin/python benchmarks/bench_neardup.py                  # 10k and 100k
    .venv/bin/python benchmarks/bench_neardup.py --sizes 10000    # quick
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from memlab.embed import NeighborIndex, brute_force_pairs
from memlab.embed._index import _canonical_pairs

DIM = 384


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    topics = max(10, n // 50)
    centres = rng.standard_normal((topics, DIM)).astype(np.float32)
    x = centres[rng.integers(0, topics, n)] + 1.0 * rng.standard_normal((n, DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    dup = rng.choice(n, size=n // 50, replace=False)
    src = rng.choice(n, size=len(dup), replace=True)
    x[dup] = x[src] + 0.02 * rng.standard_normal((len(dup), DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def _pairs(frame) -> set[tuple[int, int]]:
    return set(zip(frame["i"].tolist(), frame["j"].tolist()))


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--threshold", type=float, default=0.90)
    ap.add_argument("--methods", nargs="+", default=["flat", "ivf", "hnsw"],
                    choices=["flat", "ivf", "hnsw"], help="faiss indexes to run beside numpy")
    args = ap.parse_args()
    import faiss

    print(f"faiss {faiss.__version__}, {faiss.omp_get_max_threads()} threads; threshold "
          f"{args.threshold}", flush=True)
    for n in args.sizes:
        x = _vectors(n)
        truth, numpy_s = _timed(lambda: brute_force_pairs(x, args.threshold))
        truth_set = _pairs(truth)
        print(f"\nn = {n:,}: {len(truth_set):,} pairs >= {args.threshold}", flush=True)
        print(f"  {'method':<12} {'seconds':>9} {'speed-up':>9} {'pairs':>8} {'recall':>7}  notes "
              "(seconds = build + tuning + pairs)")
        print(f"  {'numpy':<12} {numpy_s:9.2f} {1.0:9.1f} {len(truth_set):8,} {1.0:7.3f}  brute force, "
              "blocked (= NeighborIndex exact)", flush=True)
        for kind in args.methods:
            index, build_s = _timed(lambda kind=kind: NeighborIndex(x, kind=kind))
            if kind == "flat":
                # NeighborIndex answers exact pair queries with numpy (the row above); time
                # faiss's own exact range_search here, for the comparison.
                found, search_s = _timed(lambda: _canonical_pairs(
                    *index._pairs_by_range(args.threshold), args.threshold))
            else:
                found, search_s = _timed(lambda: index.pairs_above(args.threshold))
            secs = build_s + search_s
            got = _pairs(found)
            recall = len(got & truth_set) / max(1, len(truth_set))
            extra = ""
            if index.nprobe:
                extra = f"nlist {index.index.nlist}, nprobe {index.nprobe}, "
            if index.ef_search:
                extra = f"efSearch {index.ef_search}, "
            extra += f"recall@10 {index.recall:.3f} (measured); build {build_s:.1f} s + pairs {search_s:.1f} s"
            print(f"  {'faiss ' + kind:<12} {secs:9.2f} {numpy_s / secs:9.1f} {len(got):8,} "
                  f"{recall:7.3f}  {extra}", flush=True)


if __name__ == "__main__":
    main()
