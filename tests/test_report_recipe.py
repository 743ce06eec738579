"""docs/DESIGN.md, "How to add a report kind", followed step by step with a toy report: a
notebook of its own, one line in NOTEBOOKS, rendered by `memlab.report.report`, and rendered
by `memlab report all` for every store of a kind that lists it in its ``reports``."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from memlab import kinds
from memlab.audits import Audit
from memlab.report import NOTEBOOKS, report
from memlab.report.schedule import run_all
from memlab.store import Store

pytestmark = pytest.mark.slow

PARAMETERS = 'store = "data/demo/elfmem-demo.db"\noutput_dir = None'
PATHS = ('from memlab.report import find_input, output_folder\n\n'
         'store = find_input(store)\noutput_dir = output_folder(output_dir, "lines")')
BODY = ('from pathlib import Path\n\nfrom memlab.report import write_metrics\n\n'
        'lines = Path(store).read_bytes().count(b"\\n")\n'
        'print(f"{lines} lines")\n'
        'write_metrics(output_dir, {"lines": lines})')


def _notebook(path: Path) -> Path:
    """Step 1: the notebook: a `parameters` cell, a `paths` cell, then the work."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Lines\n\nHow many lines the store has."),
                nbformat.v4.new_code_cell(PARAMETERS, metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(PATHS, metadata={"tags": ["paths"]}),
                nbformat.v4.new_code_cell(BODY)]
    nbformat.write(nb, path)
    return path


@pytest.fixture
def lines_report(tmp_path, monkeypatch):
    # Step 2: one line in NOTEBOOKS (a shipped notebook is a file name in notebooks/; an
    # absolute path serves a notebook kept elsewhere, as here).
    nb = _notebook(tmp_path / "07-lines.ipynb")
    monkeypatch.setitem(NOTEBOOKS, "lines", str(nb))
    return nb


def test_step_3_memlab_report_renders_it(lines_report, tmp_path):
    store = tmp_path / "notes.txt"
    store.write_bytes(b"one\ntwo\nthree\n")
    result = report("lines", [store], out=tmp_path / "out")
    assert result.metrics == {"lines": 3}
    assert json.loads((tmp_path / "out" / "metrics.json").read_text()) == {"lines": 3}
    html = result.html.read_text(encoding="utf-8")
    assert "3 lines" in html and "How many lines the store has." in html


def test_step_4_report_all_renders_it_for_every_store_of_a_kind_that_lists_it(lines_report,
                                                                             tmp_path):
    def load_notes(path: Path) -> Store:
        return Store("notes", path, {})

    def audit_notes(store: Store, *, as_of=None) -> Audit:
        return Audit("notes", store.name, {}, {}, "nothing to audit")

    kinds.register("notes", display="notes file", load=load_notes, audit=audit_notes,
                   priority=50, reports=("lines",),
                   detect=lambda p: "ends in .notes" if p.path.suffix == ".notes" else None)
    try:
        (tmp_path / "a.notes").write_bytes(b"x\n" * 5)
        (tmp_path / "b.notes").write_bytes(b"y\n" * 2)
        config = tmp_path / "memlab.yaml"
        config.write_text("simulation: false\nstores:\n  a: a.notes\n  b: b.notes\n",
                          encoding="utf-8")
        run = run_all(config, out=tmp_path / "run")
    finally:
        kinds.unregister("notes")
    assert run.failures == []
    done = {(r["store"], r["report"]) for r in run.record["reports"]}
    assert done == {("a", "lines"), ("b", "lines")}
    for name, n in (("a", 5), ("b", 2)):
        metrics = json.loads((tmp_path / "run" / name / "lines" / "metrics.json").read_text())
        assert metrics == {"lines": n}
