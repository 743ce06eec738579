"""How long the default simulation takes, and what the embedding cache saves on a second run.

Runs ``simulate()`` (the doc's six iterations x S1-S11, seed 0) twice in one process against one
cache folder: first cold (a fresh folder unless ``--cache-dir`` names one), then again, when every
text's vector comes from the disk cache. Prints wall time, embeddings computed vs reused, and the
slowest scenarios of each run; asserts nothing about time.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_simulate.py
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_simulate.py --growth 10
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_simulate.py --instance data/demo/elfmem-demo.db
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _once(label: str, instance, seed: int) -> float:
    from memlab.sim import simulate

    t0 = time.perf_counter()
    run = simulate(instance=instance, seed=seed)
    seconds = time.perf_counter() - t0
    stats = run.meta["embedder"]
    slow = run.timings.groupby("scenario")["seconds"].sum().sort_values(ascending=False).head(4)
    print(f"{label:<6} {seconds:8.1f} s   embedded {stats['misses']:>6,}  from cache "
          f"{stats['hits']:>6,}   slowest: " + ", ".join(f"{k} {v:.1f}s" for k, v in slow.items()),
          flush=True)
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instance", help="an elfmem database (default: the doc's own figures)")
    ap.add_argument("--growth", type=int, default=None,
                    help="S7/S11 scale step (default: the instance's, 100 = 140 -> 14,000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache-dir", help="embedding cache to use (default: a fresh temporary one, "
                                        "so the first run is cold)")
    args = ap.parse_args()
    cache = args.cache_dir or tempfile.mkdtemp(prefix="memlab-bench-sim-")
    # Must be set before memlab.embed builds its embedder: the cache folder is part of its key.
    os.environ["MEMLAB_CACHE_DIR"] = cache
    from memlab.sim import load_instance

    instance, _ = load_instance(args.instance)
    if args.growth is not None:
        instance = instance.with_(growth=args.growth)
    print(f"simulate(): {instance.name}, {instance.active_blocks} -> "
          f"{instance.active_blocks * instance.growth:,} blocks for S7/S11, cache {cache}")
    try:
        t0 = time.perf_counter()
        import memlab.embed

        memlab.embed.get_embedder().model  # the model load, timed on its own
        load_s = time.perf_counter() - t0
        print(f"model load {load_s:.1f} s", flush=True)
        first = _once("first", instance, args.seed)
        second = _once("second", instance, args.seed)
        print(f"cache saved {first - second:.1f} s ({first / max(second, 1e-9):.1f}x faster); "
              "(model load not included in either run)")
    finally:
        if not args.cache_dir:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
