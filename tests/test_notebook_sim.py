"""The simulation notebook runs headless through memlab.report with tiny parameters."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from memlab.report import execute_notebook, notebook_path

DATA = Path(__file__).resolve().parents[1] / "data"
DEMO = DATA / "demo" / "elfmem-demo.db"
LONG = DATA / "samples" / "elfmem" / "elfmem-0.19.2-schema5.db"


def test_notebook_is_committed_without_outputs():
    nb = nbformat.read(notebook_path("simulation"), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    for name in ("iterations", "scenarios", "instance", "seed", "releases", "scale"):
        assert f"{name} =" in code[0].source
    assert all(not c.outputs and c.execution_count is None for c in code)
    # Thin cells: the logic lives in memlab.sim (tested in test_sim.py).
    assert all(len(c.source.splitlines()) <= 12 for c in code)
    assert any("ITERATIONS[5].with_(" in c.source for c in code)  # Iteration 7 defined in a cell
    assert any("threshold_explorer" in c.source for c in code)


@pytest.mark.slow
def test_simulation_notebook_executes_with_tiny_parameters(tmp_path):
    result = execute_notebook("simulation", {
        "iterations": [1, 4], "scenarios": ["S1", "S3", "S8", "S10"], "instance": DEMO,
        "long_instance": LONG, "growth": 2, "seed": 0, "releases": ["0.20.0"], "scale": 100},
        tmp_path / "out")
    metrics = result.metrics
    assert metrics["instance"] == "elfmem-demo.db"
    # What the run measured on the demo: Iteration 1 fails S1, S3 and S10; files pass them.
    # S8: uncoordinated read-modify-write edits are lost on SQLite too (partial).
    assert metrics["iteration_1_fail"] == 3 and metrics["iteration_1_partial"] == 1
    # The shipped 0.20.0 measured: S1, S3, S10 pass; S8 loses edits when writers race (partial).
    assert metrics["release_0_20_0_pass"] == 3 and metrics["release_0_20_0_partial"] == 1
    assert metrics["iteration_4_pass"] == 3 and metrics["iteration_4_partial"] == 1  # S8
    html = result.html.read_text()
    assert "7: cluster-first review" in html  # the Iteration 7 cell ran
    assert "elfmem-0.19.2-schema5.db" in html  # the long-session comparison ran
    assert "near_dup_threshold" in html  # the static threshold sweep
    # The shipped release ran next to the modelled rows, and its claims were checked.
    assert "elfmem 0.20.0 (real)" in html
    assert "confirms" in html and "contradicts" in html
