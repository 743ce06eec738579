"""Embedding throughput on this CPU, and what the on-disk cache saves.

Embeds N distinct memory-like sentences (default 2,000, 8-30 words each, built from a fixed
vocabulary with a fixed seed) into a fresh cache folder, then embeds the same texts again
through a *new* Embedder on the same folder (as a second process would). Prints the model load
time, cold throughput, the cached re-run time and the ratio; asserts nothing about time.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_embed.py
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_embed.py --n 500
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from memlab.embed import Embedder  # noqa: E402

_WORDS = ("deploy main branch ci green sqlite wal reader writer commit budget alert monthly llm "
          "spend retrieval fusion rank vector bm25 token prompt context agent memory block pinned "
          "archive review proposal git hook frontmatter limit persona human policy rollback "
          "release hotfix prod staging key rotate python asyncio task await dataclass frozen hash "
          "evidence assertion test failing bug user spelling british documentation peer mira alv "
          "summary change latency spike disk usage build box server restart local model").split()


def _texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = set()
    while len(out) < n:
        k = rng.randint(8, 30)
        out.add(" ".join(rng.choice(_WORDS) for _ in range(k)).capitalize() + ".")
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="distinct texts to embed")
    args = ap.parse_args()
    texts = _texts(args.n)
    chars = sum(map(len, texts))
    with tempfile.TemporaryDirectory(prefix="memlab-bench-embed-") as cache:
        cold = Embedder(cache_dir=cache)
        t0 = time.perf_counter()
        cold.model  # the model load, timed on its own
        load_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        first = cold.encode(texts, progress=False)
        cold_s = time.perf_counter() - t0

        warm = Embedder(cache_dir=cache)  # a new instance: only the disk cache is shared
        t0 = time.perf_counter()
        second = warm.encode(texts, progress=False)
        warm_s = time.perf_counter() - t0
        assert np.array_equal(first, second)
        assert (warm.stats.hits, warm.stats.misses) == (len(texts), 0)
        # Fresh rows may still sit in the write-ahead log: count both files.
        size = sum(os.path.getsize(p) for p in (warm.cache.path, f"{warm.cache.path}-wal")
                   if os.path.exists(p))

    print(f"texts: {len(texts)} distinct, {chars / len(texts):.0f} chars on average; "
          f"torch threads: {__import__('torch').get_num_threads()}")
    print(f"model load:            {load_s:8.2f} s")
    print(f"cold (model):          {cold_s:8.2f} s   {len(texts) / cold_s:8.1f} texts/s   "
          f"misses {cold.stats.misses}")
    print(f"cached (new instance): {warm_s:8.3f} s   {len(texts) / warm_s:8.1f} texts/s   "
          f"hits {warm.stats.hits}")
    print(f"cached / cold time:    {warm_s / cold_s:8.4f}   (cache is {cold_s / warm_s:.0f}x faster)")
    print(f"cache file: {size / 1e6:.1f} MB for {len(texts)} vectors")


if __name__ == "__main__":
    main()
