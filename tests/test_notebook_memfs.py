"""The memfs notebook runs through memlab.report on a built repo and reports what the audit found."""

from __future__ import annotations

import nbformat
import pytest

from memfs_repos import build_letta_v1
from memlab.audit.memfs import audit_memfs
from memlab.report import execute_notebook, notebook_path
from memlab.sources.memfs import load_memfs


def test_notebook_is_committed_without_outputs():
    nb = nbformat.read(notebook_path("memfs"), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    assert all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.slow
def test_memfs_notebook_reports_the_seeded_breaches(tmp_path):
    built = build_letta_v1(tmp_path / "repo")
    result = execute_notebook("memfs", {"repo": built.path, "ref": "HEAD", "as_of": None},
                              tmp_path / "out")
    expected = audit_memfs(load_memfs(built.path)).headline
    assert result.metrics["no_verify_commits"] == expected["no_verify_commits"] == 4
    assert result.metrics["over_limit_files"] == 1
    assert result.metrics["prompt_chars"] == expected["prompt_chars"]
    html = result.html.read_text()
    assert html.count("data:image/png;base64") >= 4  # size, prompt, authors, churn figures
    assert built.shas["edit_read_only"][:10] in html
