"""How long the simulation takes: the real rows (shipped elfmem releases) cold and warm, and the
modelled iterations, with the cold path's largest cost named.

Real rows: ``run_real`` (both releases, S1-S11, seed 0, ``--scale`` blocks for S7/S11) twice in
one process against one embedding cache: first cold (a fresh cache folder; the sentence model
loads inside the run; release venvs are built if missing), then warm (every vector from the cache,
the model in memory). Each run is split into phases from ``memlab.sim.releases.TIMINGS``:
building/finding venvs, starting driver processes, embedding for the drivers, and the rest, which
is the releases' own work (learn, consolidate, recall). The cold phase that costs most is named.
Then the modelled iterations (``simulate(..., releases=())``) once, for comparison. Prints
figures; asserts nothing about time.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_simulate.py
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_simulate.py --scale 2000 --no-modelled
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _real(label: str, params, seed: int) -> dict[str, float]:
    from memlab.sim.real import run_real
    from memlab.sim.releases import TIMINGS

    before = dict(TIMINGS)
    t0 = time.perf_counter()
    results = run_real(None, None, seed=seed, params=params)
    total = time.perf_counter() - t0
    d = {k: TIMINGS[k] - before[k] for k in TIMINGS}
    phases = {"release venvs": d["env_s"], "driver starts": d["start_s"],
              "embedding (model load + encode)": d["embed_s"]}
    phases["releases' own work"] = total - sum(phases.values())
    slow = sorted(((r.metrics.get("seconds", 0.0), f"{row.split()[1]} {code}")
                   for (row, code), r in results.items()), reverse=True)[:4]
    print(f"{label:<5} {total:8.1f} s  " + "  ".join(f"{k} {v:.1f}s" for k, v in phases.items())
          + f"  ({int(d['starts'])} drivers, {int(d['embed_texts']):,} texts embedded in "
          f"{int(d['embed_calls'])} calls)", flush=True)
    print("      slowest cells: " + ", ".join(f"{name} {s:.1f}s" for s, name in slow), flush=True)
    return {"total": total, **phases}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=300, help="S7/S11 corpus size (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-modelled", action="store_true", help="skip the modelled iterations")
    ap.add_argument("--cache-dir", help="embedding cache to use (default: a fresh temporary one, "
                                        "so the first run is cold)")
    args = ap.parse_args()
    cache = args.cache_dir or tempfile.mkdtemp(prefix="memlab-bench-sim-")
    # Must be set before memlab.embed builds its embedder: the cache folder is part of its key.
    os.environ["MEMLAB_CACHE_DIR"] = cache
    from memlab.sim.real import RealParams

    params = RealParams(scale=args.scale)
    print(f"real rows: elfmem 0.19.2 + 0.20.0, S1-S11, scale {args.scale}, cache {cache}")
    try:
        cold = _real("cold", params, args.seed)
        warm = _real("warm", params, args.seed)
        costs = {k: v for k, v in cold.items() if k != "total"}
        top = max(costs, key=costs.get)
        print(f"cold/warm {cold['total'] / max(warm['total'], 1e-9):.2f}x; the cold path's "
              f"largest cost: {top} ({costs[top]:.1f} s of {cold['total']:.1f} s; warm "
              f"{warm[top]:.1f} s)")
        if not args.no_modelled:
            from memlab.sim import DOC_INSTANCE, simulate

            t0 = time.perf_counter()
            simulate(instance=DOC_INSTANCE.with_(growth=10), seed=args.seed, releases=())
            print(f"modelled iterations 1-6 x S1-S11 (growth 10): "
                  f"{time.perf_counter() - t0:.1f} s", flush=True)
    finally:
        if not args.cache_dir:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
