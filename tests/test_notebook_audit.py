"""01-audit runs through the same papermill path as `memlab report`, on the demo data."""

from __future__ import annotations

import json

import nbformat
import pytest

from memlab.report import execute_notebook, notebook_path, report

pytestmark = pytest.mark.slow


def test_committed_without_outputs():
    nb = nbformat.read(notebook_path("audit"), as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in nb.cells if c.cell_type == "code")
    assert "parameters" in nb.cells[1].metadata.get("tags", [])


def test_audit_report_on_the_demo_instance(tmp_path, data_dir):
    result = report("audit", [data_dir / "demo/elfmem-demo.db"], out=tmp_path, as_of="2026-08-04")
    metrics = result.metrics["elfmem-demo.db"]
    assert metrics["llm_calls"] == 2903
    assert round(metrics["calls_per_surviving_block"], 1) == 20.7
    assert round(metrics["input_per_corpus_token"], 1) == 52.1
    assert json.loads((tmp_path / "metrics.json").read_text()) == result.metrics
    html = result.html.read_text()
    assert html.count("data:image/png;base64") >= 4  # archival, recency, Lorenz, token spend
    assert "20.7" in html


def test_several_stores_share_one_report(tmp_path, data_dir):
    stores = [data_dir / "demo/elfmem-demo.db", data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db"]
    result = execute_notebook("audit", {"stores": stores, "as_of": "2026-11-30"}, tmp_path)
    assert set(result.metrics) == {"elfmem-demo.db", "elfmem-0.20.0-schema9.db"}
