"""CLI start-up: `memlab audit` of the demo database next to `python -c "import pandas"`.

A short command is mostly start-up: the interpreter, then the imports the command needs. The
anchor is the cheapest thing any memlab command must do (start Python and import pandas); each
command is timed as a fresh process, interleaved with the anchor, best of N, so load swings on a
shared machine hit both alike. Also prints the heaviest imports of the audit (``-X importtime``).
Nothing about time is asserted.

Measured as a user's install runs: the children get the environment without
``PYTHONDONTWRITEBYTECODE`` (a development shell may set it; pandas in site-packages has its
``.pyc`` files either way, memlab's editable checkout would then be compiled from source on
every run), and each command runs once untimed first, which writes memlab's ``.pyc`` files
(into the git-ignored ``__pycache__`` folders) and warms the OS file cache for every command
alike. Nothing else differs from a plain run.

Each command's CPU time (user + system, from the child's resource usage) is printed beside its
wall time, with its own ratio: start-up is one thread, so on a quiet machine the two agree,
while on a loaded one the wall clock mostly measures waiting for a core and the CPU ratio is the
steadier figure (the median of the rounds' own ratios is printed too).

    .venv/bin/python benchmarks/bench_cli.py
    .venv/bin/python benchmarks/bench_cli.py --repeat 9
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "elfmem-demo.db"

COMMANDS = {
    "python -c 'import pandas' (anchor)": [sys.executable, "-c", "import pandas"],
    "memlab audit <demo>": [sys.executable, "-m", "memlab", "audit", str(DEMO),
                            "--as-of", "2026-08-04"],
    "memlab inspect <demo>": [sys.executable, "-m", "memlab", "inspect", str(DEMO)],
    "memlab --help": [sys.executable, "-m", "memlab", "--help"],
}


def _env() -> dict[str, str]:
    """The children's environment: a user's (bytecode written and read), offline."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def _run(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=_env())
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _heaviest_imports(argv: list[str], top: int = 8) -> list[tuple[int, str]]:
    out = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], capture_output=True,
                         text=True, cwd=REPO, env=_env())
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        try:
            rows.append((int(cumulative), name.rstrip()))
        except ValueError:
            continue
    top_level = [(us, n.strip()) for us, n in rows if n.startswith(" ") and not n.startswith("   ")]
    return sorted(top_level, reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="best of N, interleaved")
    args = ap.parse_args()
    for argv in COMMANDS.values():  # untimed warm-up: writes .pyc files, fills the file cache
        _run(argv)
    load_before = os.getloadavg()
    best = {name: float("inf") for name in COMMANDS}
    best_cpu = {name: float("inf") for name in COMMANDS}
    rounds: dict[str, list[float]] = {name: [] for name in COMMANDS}
    anchor_name = "python -c 'import pandas' (anchor)"
    for _ in range(args.repeat):
        cpu_round = {}
        for name, argv in COMMANDS.items():
            wall, cpu = _run(argv)
            best[name] = min(best[name], wall)
            best_cpu[name] = min(best_cpu[name], cpu)
            cpu_round[name] = cpu
        for name in COMMANDS:
            rounds[name].append(cpu_round[name] / max(cpu_round[anchor_name], 1e-9))
    anchor, anchor_cpu = best[anchor_name], best_cpu[anchor_name]
    print(f"{len(os.sched_getaffinity(0))} CPUs, load average {load_before[0]:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after; best of {args.repeat}, interleaved, after one "
          f"untimed warm-up run of each (bytecode written)")
    for name, wall in best.items():
        print(f"{name:38s} {wall:6.3f} s  {wall / anchor:5.2f}x the anchor;  CPU "
              f"{best_cpu[name]:6.3f} s  {best_cpu[name] / anchor_cpu:5.2f}x (median of the "
              f"rounds {statistics.median(rounds[name]):.2f}x)")
    print("heaviest top-level imports of `memlab audit` (cumulative, -X importtime):")
    for us, name in _heaviest_imports(COMMANDS["memlab audit <demo>"]):
        print(f"  {us / 1e3:7.0f} ms  {name}")


if __name__ == "__main__":
    main()
