"""CLI start-up: `memlab audit` of the demo database next to `python -c "import pandas"`.

A short command is mostly start-up: the interpreter, then the imports the command needs. The
anchor is the cheapest thing any memlab command must do (start Python and import pandas); each
command is timed as a fresh process, interleaved with the anchor, best of N, so load swings on a
shared machine hit both alike. Also prints the heaviest imports of the audit (``-X importtime``).
Nothing about time is asserted.

    .venv/bin/python benchmarks/bench_cli.py
    .venv/bin/python benchmarks/bench_cli.py --repeat 9
"""

from __future__ import annotations

import argparse
import os
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


def _run(argv: list[str]) -> float:
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr[-500:]}")
    return wall


def _heaviest_imports(argv: list[str], top: int = 8) -> list[tuple[int, str]]:
    out = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], capture_output=True,
                         text=True, cwd=REPO)
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
    best = {name: float("inf") for name in COMMANDS}
    for _ in range(args.repeat):
        for name, argv in COMMANDS.items():
            best[name] = min(best[name], _run(argv))
    anchor = best["python -c 'import pandas' (anchor)"]
    print(f"{len(os.sched_getaffinity(0))} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"best of {args.repeat}, interleaved")
    for name, wall in best.items():
        print(f"{name:38s} {wall:6.3f} s  {wall / anchor:5.2f}x the anchor")
    print("heaviest top-level imports of `memlab audit` (cumulative, -X importtime):")
    for us, name in _heaviest_imports(COMMANDS["memlab audit <demo>"]):
        print(f"  {us / 1e3:7.0f} ms  {name}")


if __name__ == "__main__":
    main()
