"""benchmarks/bench_neardup.py runs end to end on tiny input and prints memlab's row with the
index it chose and why (issue 40, items 4 and 5). Figures are not checked (the machine is shared)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMLAB_QUIET": "1"}
    out = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_bench_neardup_prints_memlab_beside_faiss_with_the_choice_and_its_basis():
    pytest.importorskip("faiss")
    text = _bench("benchmarks/bench_neardup.py", "--sizes", "3000", "--methods", "flat",
                  "--repeat", "1")
    memlab_row = next(line for line in text.splitlines() if line.strip().startswith("memlab"))
    # exact numpy answered (a partitioned build is not worth trying on 3,000), recall 1.000
    assert re.search(r"\s1\.000\s+chose numpy: measured on 512 sampled vectors", memlab_row)
    assert "anchor: the fastest faiss row" in text and "load average" in text

