"""The review notebook runs through memlab.report on the schema-9 sample and writes a proposal;
run again into the same folder it replaces its own untouched proposal, never a ticked one."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from memlab.errors import ReportError
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


PARAMS = {"store": SCHEMA9, "as_of": "2026-11-30", "near_duplicate": 0.9}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """One run of the report; tests that run it again do so into a copy of its folder."""
    out = tmp_path_factory.mktemp("review") / "out"
    return execute_notebook("review", PARAMS, out), out


@pytest.mark.slow
def test_review_notebook_writes_the_proposal_and_figures(first_run):
    result, out = first_run
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


def _again(first_run, folder: Path) -> Path:
    """A copy of the first run's folder (the same report folder, run again): its proposal."""
    shutil.copytree(first_run[1], folder)
    (md,) = sorted(folder.glob("review-*.md"))
    return md


@pytest.mark.slow
def test_a_second_run_replaces_an_untouched_proposal(first_run, tmp_path):
    md = _again(first_run, tmp_path / "out")
    before = read_proposal(md).to_dict()["digest"]
    result = execute_notebook("review", PARAMS, tmp_path / "out")
    written = {p.name for p in (tmp_path / "out").glob("review-*")}
    assert written == {md.name, md.with_suffix(".json").name}  # replaced, nothing beside it
    again = read_proposal(md)  # another run: another made_at, so another proposal, written
    assert again.to_dict()["digest"] != before and again.ticked == set()
    assert result.metrics["digest"] == again.to_dict()["digest"][:16]


@pytest.mark.slow
def test_a_second_run_fails_naming_the_proposal_a_person_ticked(first_run, tmp_path):
    md = _again(first_run, tmp_path / "out")
    item = read_proposal(md).choices[0].options[0]
    text = md.read_text(encoding="utf-8")
    md.write_text(text.replace(f"- [ ] `{item}`", f"- [x] `{item}`"), encoding="utf-8")
    ticked, twin = md.read_bytes(), md.with_suffix(".json").read_bytes()
    with pytest.raises(ReportError) as err:
        execute_notebook("review", PARAMS, tmp_path / "out")
    assert "OutputExists" in err.value.message and str(md) in err.value.message
    assert item in err.value.message and "erase" in err.value.message
    assert md.read_bytes() == ticked and md.with_suffix(".json").read_bytes() == twin
    assert read_proposal(md).ticked == {item}  # what `memlab apply` will still see
