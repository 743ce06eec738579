"""Every committed notebook: no outputs, a `parameters` cell papermill can find, thin cells."""

from __future__ import annotations

import nbformat
import pytest

from memlab.report import NOTEBOOKS, notebook_path

# A cell longer than this is logic that belongs in the package, with a unit test.
MAX_CODE_LINES = 25


@pytest.mark.parametrize("kind", sorted(NOTEBOOKS))
def test_notebook_is_committed_clean_and_parameterised(kind):
    nb = nbformat.read(notebook_path(kind), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, kind
    assert all(not c.outputs and c.execution_count is None for c in code), f"{kind} has outputs"
    assert "parameters" in code[0].metadata.get("tags", []), f"{kind}: first code cell untagged"
    assert "output_dir" in code[0].source
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    too_long = [c.source.splitlines()[0] for c in code
                if len([ln for ln in c.source.splitlines() if ln.strip()]) > MAX_CODE_LINES]
    assert too_long == [], f"{kind}: cells over {MAX_CODE_LINES} lines: {too_long}"
    assert any(c.cell_type == "markdown" for c in nb.cells), f"{kind} explains nothing"


def test_every_notebook_in_the_folder_is_a_report_kind(repo_root):
    on_disk = {p.name for p in (repo_root / "notebooks").glob("*.ipynb")}
    assert on_disk == set(NOTEBOOKS.values())
