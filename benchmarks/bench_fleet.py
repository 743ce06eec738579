"""Fleet audit at scale: a serial loop vs Dask with 1 and 2 worker processes.

Builds N stores of mixed kinds and sizes (copies of the sample fleet's elfmem databases, Agent
Files, memfs repos and substrates: see memlab.lake.make_sample_fleet), then runs
``memlab.fleet`` on them three ways, each in a fresh client process so its peak memory is its
own (workers are separate processes and not counted):

* serial: ``workers=0``, every store in the client process, no Dask (the anchor);
* dask-1 / dask-2: a LocalCluster with 1 or 2 worker processes.

Prints wall time, the ratio to the serial anchor measured in the same run, seconds per store,
and the client's peak RSS. Every run writes a fresh lake (``reuse`` cannot help). With
``--repeat R`` the three modes run R rounds, interleaved (serial, dask-1, dask-2, serial, ...),
so a noisy minute on a shared machine hits every mode alike; the table shows each mode's best
time, and the last line each round's own dask-2 speed-up as well as the best-of-R one.

    python benchmarks/bench_fleet.py --n 100 1000
    python benchmarks/bench_fleet.py --n 1000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import memlab.lake

_CLIENT = r"""
import json, resource, sys, time
import memlab
started = time.perf_counter()
r = memlab.fleet([sys.argv[1]], out=sys.argv[2], workers=int(sys.argv[3]), as_of="2026-08-04",
                 progress=False)
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "counts": r.counts,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def build(n: int, root: Path, templates: Path) -> Path:
    """N stores: 40% elfmem databases, 30% Agent Files, 20% memfs repos, 10% substrates."""
    out = root / f"fleet-{n}"
    kinds = {"elfmem": 0.4, "letta-af": 0.3, "memfs": 0.2, "substrate": 0.1}
    for sub, share in kinds.items():
        sources = sorted((templates / sub).iterdir())
        sources = [s for s in sources if s.name != "corrupt.db"]
        (out / sub).mkdir(parents=True)
        for i in range(round(n * share)):
            src = sources[i % len(sources)]
            dest = out / sub / f"{i:05d}-{src.name}"
            if src.is_dir():
                shutil.copytree(src, dest, symlinks=True)
            else:
                shutil.copy2(src, dest)
    return out


def run(fleet_root: Path, lake: Path, workers: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CLIENT, str(fleet_root), str(lake),
                           str(workers)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeat", type=int, default=1, help="best of R rounds, interleaved")
    args = parser.parse_args(argv)
    modes = (("serial", 0), ("dask-1", 1), ("dask-2", 2))
    with tempfile.TemporaryDirectory(prefix="memlab-bench-fleet-") as tmp:
        root = Path(tmp)
        templates = memlab.lake.make_sample_fleet(root / "templates")
        print(f"{'N':>6} {'mode':<8} {'seconds':>9} {'× serial':>9} {'s/store':>8} "
              f"{'client MB':>10}  stores ok/reused/failed  (best of {args.repeat})")
        for n in args.n:
            fleet_root = build(n, root, templates)
            runs: dict[str, list[dict]] = {mode: [] for mode, _ in modes}
            for _ in range(max(1, args.repeat)):
                for mode, workers in modes:
                    lake = root / f"lake-{n}-{mode}"
                    runs[mode].append(run(fleet_root, lake, workers))
                    shutil.rmtree(lake)
            anchor = min(r["seconds"] for r in runs["serial"])
            for mode, _ in modes:
                r = min(runs[mode], key=lambda r: r["seconds"])
                c = r["counts"]
                peak = max(x["peak_mb"] for x in runs[mode])
                print(f"{n:>6} {mode:<8} {r['seconds']:>9.1f} {r['seconds'] / anchor:>9.2f} "
                      f"{r['seconds'] / n:>8.3f} {peak:>10.0f}  "
                      f"{c['ok']}/{c['reused']}/{c['failed']}", flush=True)
            best = min(r["seconds"] for r in runs["dask-2"])
            rounds = ", ".join(f"{s['seconds'] / d['seconds']:.2f}×"
                               for s, d in zip(runs["serial"], runs["dask-2"]))
            print(f"{n:>6} speed-up of dask-2 over serial: {anchor / best:.2f}× (best of "
                  f"{len(runs['serial'])}); by round: {rounds}", flush=True)
            shutil.rmtree(fleet_root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
