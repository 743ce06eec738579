"""Embedding throughput on this CPU: fp32 (the anchor) vs the precision the gate chooses, and the cache.

Embeds N distinct memory-like sentences (default 2,000, 8-30 words each, built from a fixed
vocabulary with a fixed seed) into fresh cache folders: once with ``precision="fp32"`` (the
anchor) and once with the gated precision (``auto``: bf16 where the gate allows it here), and
prints texts/s for each, their ratio, and the min / mean cosine between the two sets of vectors
over all N texts (the gate itself only sees its 48 probe texts). Then it embeds the texts again
through a *new* Embedder on the gated folder (as a second process would) to show what the cache
saves. Asserts nothing about time.

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
    with tempfile.TemporaryDirectory(prefix="memlab-bench-embed-") as tmp:
        anchor = Embedder(cache_dir=f"{tmp}/fp32", precision="fp32", shipped=False)
        t0 = time.perf_counter()
        anchor.model  # the model load, timed on its own
        load_s = time.perf_counter() - t0

        gated = Embedder(cache_dir=f"{tmp}/auto", shipped=False)
        t0 = time.perf_counter()
        choice = gated.precision_choice  # measured here unless a record exists (fresh folder)
        gate_s = time.perf_counter() - t0

        # Interleaved halves, so a load swing on a shared machine hits both precisions.
        half = len(texts) // 2
        secs = {"fp32": 0.0, "gated": 0.0}
        vecs = {"fp32": [], "gated": []}
        for part in (texts[:half], texts[half:]):
            for name, emb in (("fp32", anchor), ("gated", gated)):
                t0 = time.perf_counter()
                vecs[name].append(emb.encode(part, progress=False))
                secs[name] += time.perf_counter() - t0
        a, b = np.concatenate(vecs["fp32"]), np.concatenate(vecs["gated"])
        cos = np.einsum("ij,ij->i", a, b)

        warm = Embedder(cache_dir=f"{tmp}/auto", shipped=False)  # a new instance, same folder
        t0 = time.perf_counter()
        second = warm.encode(texts, progress=False)
        warm_s = time.perf_counter() - t0
        assert np.array_equal(b, second)
        assert (warm.stats.hits, warm.stats.misses) == (len(texts), 0)
        size = sum(os.path.getsize(p) for p in (warm.cache.path, f"{warm.cache.path}-wal")
                   if os.path.exists(p))

    rate = {k: len(texts) / v for k, v in secs.items()}
    print(f"texts: {len(texts)} distinct, {chars / len(texts):.0f} chars on average; "
          f"torch threads: {__import__('torch').get_num_threads()}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"model load (fp32):      {load_s:8.2f} s")
    print(f"precision gate:         {gate_s:8.2f} s -> {choice.describe()}")
    print(f"fp32 (anchor):          {secs['fp32']:8.2f} s   {rate['fp32']:8.1f} texts/s")
    print(f"gated ({gated.precision}):          {secs['gated']:8.2f} s   {rate['gated']:8.1f} texts/s"
          f"   {rate['gated'] / rate['fp32']:.2f}x the anchor's texts/s")
    print(f"cosine gated vs fp32 over all {len(texts)} texts: min {cos.min():.6f}, "
          f"mean {cos.mean():.6f}")
    print(f"cached (new instance):  {warm_s:8.3f} s   {len(texts) / warm_s:8.1f} texts/s   "
          f"{secs['gated'] / warm_s:.0f}x faster than embedding")
    print(f"cache file: {size / 1e6:.1f} MB for {len(texts)} vectors")


if __name__ == "__main__":
    main()
