"""The review notebook runs through memlab.report on the schema-9 sample and writes a proposal."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from memlab.report import execute_notebook, notebook_path
from memlab.reviews import read_proposal

SCHEMA9 = Path(__file__).resolve().parents[1] / "data" / "samples" / "elfmem" / "elfmem-0.20.0-schema9.db"


def test_notebook_is_committed_without_outputs():
    nb = nbformat.read(notebook_path("review"), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    assert all(not c.outputs and c.execution_count is None for c in code)
    # Thin cells: the logic lives in memlab.review (tested in test_review.py).
    assert all(len(c.source.splitlines()) <= 15 for c in code)


@pytest.mark.slow
def test_review_notebook_writes_the_proposal_and_figures(tmp_path):
    out = tmp_path / "out"
    result = execute_notebook("review", {"store": SCHEMA9, "as_of": "2026-11-30",
                                         "near_duplicate": 0.9}, out)
    assert result.metrics["duplicate_clusters"] == 4
    assert result.metrics["duplicate_units"] == 8
    assert result.metrics["drift_choices"] == 1  # the curiosity role's text differs from its seed
    proposals = sorted(out.glob("review-*.md"))
    assert len(proposals) == 1
    proposal = read_proposal(proposals[0])  # the file the notebook wrote passes apply's check
    assert proposal.store["kind"] == "elfmem_db"
    assert result.metrics["digest"] == proposal.to_dict()["digest"][:16]
    html = result.html.read_text()
    assert html.count("data:image/png;base64") >= 2  # cluster map and histogram
    for item in proposal.items:
        assert item.id in html
