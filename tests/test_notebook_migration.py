"""notebooks/03-migration.ipynb: committed clean, and it runs end to end through the report runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks/03-migration.ipynb"


def test_notebook_is_committed_without_outputs_and_with_parameters_first():
    nb = json.loads(NOTEBOOK.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert "parameters" in code[0]["metadata"].get("tags", [])
    params = "".join(code[0]["source"])
    for name in ("source", "destination", "target", "output_dir"):
        assert f"{name} =" in params
    assert all(c.get("outputs") == [] and c.get("execution_count") is None for c in code)


@pytest.mark.slow
def test_migration_report_runs_on_a_real_sample(tmp_path):
    from memlab.report import execute_notebook

    src = REPO / "data/samples/elfmem/elfmem-0.20.0-schema9.db"
    report = execute_notebook("migration", {"source": src, "destination": tmp_path / "substrate",
                                            "target": "substrate", "retrieval": False},
                              tmp_path / "report")
    assert report.metrics["parity_differences"] == 0
    assert report.metrics["blocks_moved"] == 47 and report.metrics["commits"] == 2
    assert (tmp_path / "substrate/.elfmem/memory/self.md").exists()
    html = report.html.read_text()
    assert "migrate(elfmem): 47 blocks" in html and "Parity" in html
