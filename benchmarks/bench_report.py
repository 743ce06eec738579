"""Warm `memlab report all` on the bundled config: total, and per notebook cells / kernel / render.

Runs ``report_all(data/reports.yaml)`` once to warm the embedding cache and the simulation's
result cache (``memlab.sim.cache``; both under ``$MEMLAB_CACHE_DIR``) (not timed), then times
a warm run with reports one at a time (``jobs=1``, the anchor) and a warm run with the default
concurrency (one report per core), in the same process, into temp folders. For every notebook
of the concurrent run it prints:

- ``cells``: the sum of papermill's per-cell durations (the work the notebook does);
- ``kernel``: papermill's wall time minus the cells (kernel start-up, connection, shutdown);
- ``render``: the HTML export of the executed notebook.

It then names the critical path: the longest report (cells + kernel + render) or, when all
reports' own time shared by the jobs is longer, the queue; and says whether the simulation report
is on it. Nothing about time is asserted.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_report.py
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_report.py --no-sequential
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MEMLAB_QUIET", "1")

import papermill  # noqa: E402

import memlab.report as report_module  # noqa: E402
from memlab.report.schedule import report_all  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "data" / "reports.yaml"

_lock = threading.Lock()
_timings: dict[str, dict[str, float]] = {}


def _instrument() -> None:
    execute, render = papermill.execute_notebook, report_module._render_html

    def timed_execute(source, output, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return execute(source, output, *args, **kwargs)
        finally:
            with _lock:
                _timings.setdefault(str(output), {})["execute"] = time.perf_counter() - t0

    def timed_render(executed, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return render(executed, *args, **kwargs)
        finally:
            with _lock:
                _timings.setdefault(str(executed), {})["render"] = time.perf_counter() - t0

    papermill.execute_notebook = timed_execute
    report_module._render_html = timed_render


def _cells(executed: Path) -> float:
    nb = json.loads(executed.read_text())
    return sum((c.get("metadata", {}).get("papermill", {}).get("duration") or 0.0)
               for c in nb["cells"])


def _run(out: Path, jobs: int | None) -> float:
    _timings.clear()
    t0 = time.perf_counter()
    report_all(CONFIG, out=out, jobs=jobs)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-sequential", action="store_true", help="skip the jobs=1 anchor run")
    args = ap.parse_args()
    _instrument()
    with tempfile.TemporaryDirectory(prefix="memlab-bench-report-") as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        report_all(CONFIG, out=tmp / "warm-up")
        warm_up = time.perf_counter() - t0
        sequential = None if args.no_sequential else _run(tmp / "sequential", jobs=1)
        concurrent = _run(tmp / "concurrent", jobs=None)
        rows = []
        for executed, t in sorted(_timings.items()):
            path = Path(executed)
            cells = _cells(path)
            rows.append((str(path.relative_to(tmp / "concurrent")), cells,
                         t.get("execute", 0.0) - cells, t.get("render", 0.0)))
    print(f"{len(os.sched_getaffinity(0))} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"config {CONFIG.relative_to(REPO)}; warm-up run (not compared) {warm_up:.1f} s")
    print(f"{'notebook (concurrent run)':52s} {'cells s':>8s} {'kernel s':>9s} {'render s':>9s}")
    for name, cells, kernel, render in rows:
        print(f"{name:52s} {cells:8.1f} {kernel:9.1f} {render:9.2f}")
    total = [sum(r[i] for r in rows) for i in (1, 2, 3)]
    print(f"{'sum over notebooks':52s} {total[0]:8.1f} {total[1]:9.1f} {total[2]:9.2f}")
    if sequential is not None:
        print(f"warm report all, one report at a time (anchor): {sequential:6.1f} s")
    print(f"warm report all, concurrent (default):          {concurrent:6.1f} s"
          + (f"   {concurrent / sequential:.2f}x the anchor" if sequential else ""))
    # A report's own time is its notebook's papermill run plus its HTML export. The concurrent
    # run cannot be shorter than its longest report, nor than all reports' own time shared by
    # the jobs; the larger of the two bounds is its critical path.
    own = {name: cells + kernel + render for name, cells, kernel, render in rows}
    if own:
        jobs = min(len(own), len(os.sched_getaffinity(0)))
        longest = max(own, key=own.get)
        shared = sum(own.values()) / jobs
        print(f"longest report: {longest} {own[longest]:.1f} s = "
              f"{own[longest] / concurrent:.0%} of the concurrent run; all reports' own time "
              f"over {jobs} jobs: {shared:.1f} s")
        path = (f"the longest report ({longest})" if own[longest] >= shared
                else "the queue of reports sharing the jobs, not one report")
        print(f"critical path: {path}")
        for name, t in own.items():
            if name.startswith("simulation"):
                print(f"simulation report: {name} {t:.1f} s = {t / concurrent:.0%} of the "
                      f"concurrent run; {'the' if name == longest else 'not the'} longest "
                      f"report; {'on' if name == longest and t >= shared else 'not on'} the "
                      "critical path")


if __name__ == "__main__":
    main()
