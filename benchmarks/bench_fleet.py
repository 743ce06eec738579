"""Fleet audit at scale: a serial loop vs Dask with 1 and 2 worker processes, into the lake.

Builds N stores of mixed kinds and sizes (copies of the sample fleet's elfmem databases, Agent
Files, memfs repos and substrates: see memlab.lake.make_sample_fleet), then runs
``memlab.fleet`` on them, each mode in a fresh client process so its peak memory is its own
(workers are separate processes and not counted):

* serial: ``workers=0``, every store in the client process, no Dask (the anchor);
* dask-1 / dask-2: a LocalCluster with 1 or 2 worker processes (tasks are batches of stores
  sized by the per-store seconds measured during the run).

Prints wall time, the ratio to the serial anchor measured in the same run, seconds per store,
the client's peak RSS (taken when ``fleet`` returns), the lake's Parquet file count, and the
time DuckDB takes to aggregate the headline table (per store kind: count and mean of
``max_limit_ratio``, ``prompt_chars`` and ``llm_calls``). Every run writes a fresh lake
(``reuse`` cannot help). With ``--repeat R`` the modes run R rounds, interleaved, and the table
shows each mode's best time. ``--serial-sample K`` runs the serial anchor on a K-store fleet of the same mix
(its per-store cost is the anchor, as the table says), for N too large to run
serially in one sitting; ``--modes`` picks the modes.

    python benchmarks/bench_fleet.py --n 100 1000
    python benchmarks/bench_fleet.py --n 1000 --repeat 3
    python benchmarks/bench_fleet.py --n 10000 --modes serial dask-2 --serial-sample 500
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
from pathlib import Path
import memlab
started = time.perf_counter()
r = memlab.fleet([sys.argv[1]], out=sys.argv[2], workers=int(sys.argv[3]), as_of="2026-08-04",
                 progress=False)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
files = sum(1 for _ in Path(sys.argv[2]).rglob("*.parquet"))
import duckdb
t0 = time.perf_counter()
rows = duckdb.sql(
    f"SELECT store_kind, count(*), avg(max_limit_ratio), avg(prompt_chars), avg(llm_calls) "
    f"FROM read_parquet('{sys.argv[2]}/headline/**/*.parquet', hive_partitioning=true, "
    f"union_by_name=true) GROUP BY 1 ORDER BY 1").fetchall()
duck = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "counts": r.counts, "peak_mb": peak, "files": files,
                  "duckdb_s": duck, "kinds": len(rows), "batches": len(r.batches),
                  "max_batch": max(r.batches) if r.batches else 0}))
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
    import os

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeat", type=int, default=1, help="best of R rounds, interleaved")
    parser.add_argument("--modes", nargs="+", default=["serial", "dask-1", "dask-2"],
                        choices=["serial", "dask-1", "dask-2"])
    parser.add_argument("--serial-sample", type=int, default=None,
                        help="run the serial anchor on a K-store fleet of the same mix")
    args = parser.parse_args(argv)
    workers_of = {"serial": 0, "dask-1": 1, "dask-2": 2}
    modes = [(m, workers_of[m]) for m in args.modes]
    with tempfile.TemporaryDirectory(prefix="memlab-bench-fleet-") as tmp:
        root = Path(tmp)
        templates = memlab.lake.make_sample_fleet(root / "templates")
        load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
        print(f"load average at start {load}; best of {args.repeat}")
        print(f"{'N':>6} {'mode':<8} {'seconds':>9} {'× serial':>9} {'s/store':>8} "
              f"{'client MB':>10} {'files':>6} {'duckdb s':>9} {'tasks':>6}  ok/reused/failed")
        for n in args.n:
            fleet_root = build(n, root, templates)
            sample = args.serial_sample if args.serial_sample and args.serial_sample < n else None
            serial_root = build(sample, root, templates) if sample else fleet_root
            runs: dict[str, list[dict]] = {mode: [] for mode, _ in modes}
            for _ in range(max(1, args.repeat)):
                for mode, workers in modes:
                    lake = root / f"lake-{n}-{mode}"
                    where = serial_root if mode == "serial" else fleet_root
                    runs[mode].append(run(where, lake, workers))
                    shutil.rmtree(lake)
            per_store = {}
            for mode, _ in modes:
                stores = sample if (mode == "serial" and sample) else n
                per_store[mode] = min(r["seconds"] for r in runs[mode]) / stores
            anchor = per_store.get("serial")
            for mode, _ in modes:
                r = min(runs[mode], key=lambda r: r["seconds"])
                c = r["counts"]
                peak = max(x["peak_mb"] for x in runs[mode])
                ratio = f"{per_store[mode] / anchor:9.2f}" if anchor else f"{'-':>9}"
                label = f"{mode}" + (f" ({sample} stores)" if mode == "serial" and sample else "")
                print(f"{n:>6} {label:<8} {r['seconds']:>9.1f} {ratio} {per_store[mode]:>8.3f} "
                      f"{peak:>10.0f} {r['files']:>6} {r['duckdb_s']:>9.3f} {r['batches']:>6}  "
                      f"{c['ok']}/{c['reused']}/{c['failed']}", flush=True)
            if anchor and "dask-2" in per_store:
                how = (f"serial per-store cost measured on {sample} of the {n} stores"
                       if sample else "best of each")
                print(f"{n:>6} serial per store {anchor:.3f} s; speed-up of dask-2 over serial: "
                      f"{anchor / per_store['dask-2']:.2f}× ({how}); load average now "
                      f"{', '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
            shutil.rmtree(fleet_root)
            if sample:
                shutil.rmtree(serial_root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
