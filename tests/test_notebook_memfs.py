"""The memfs notebook runs through memlab.report on a built repo and reports what the audit found."""

from __future__ import annotations

import nbformat
import pytest

from memfs_repos import build_letta_v1
from memlab.kinds._memfs._audit import audit_memfs
from memlab.report import execute_notebook, notebook_path
from memlab.kinds._memfs._load import load_memfs


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


@pytest.mark.slow
def test_memfs_notebook_runs_with_its_defaults_on_the_bundled_sample(tmp_path):
    """No arguments: the notebook unpacks the bundled sample and its charts span its history."""
    import nbformat as nbf

    result = execute_notebook("memfs", {}, tmp_path / "out")
    m = result.metrics
    assert m["layout"] == "letta_v1" and m["commits"] == 26
    assert m["first_commit"].startswith("2026-04-06") and m["last_commit"].startswith("2026-05-14")
    assert m["no_verify_commits"] == 1 and m["readers_disagree_files"] == 1
    executed = nbf.read(tmp_path / "out" / "02-memfs-audit.ipynb", as_version=4)
    figures = [o for c in executed.cells for o in c.get("outputs", [])
               if "image/png" in o.get("data", {})]
    assert len(figures) >= 5  # memory size, other files, prompt, authors, churn
    html = result.html.read_text()
    assert "2026-05-1" in html and "2026-04-0" in html  # the axes reach both ends of the history


@pytest.mark.slow
def test_a_file_name_with_dollar_signs_is_drawn_as_text_not_mathtext(tmp_path):
    """A file an agent named ``$\\bogus{x}$`` stopped every memfs report of its repo (matplotlib
    read the name as mathtext: "Unknown symbol: \\bogus"), even after the file was renamed."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent / "security"))
    from hostile import fm, git, memory_repo

    repo = tmp_path / "repo"
    memory_repo(repo)
    hostile = "system/$\\bogus{x}$ <b>.md"
    (repo / hostile).write_text(fm("d", "churned\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "a file named like mathtext")
    git(repo, "mv", hostile, "system/renamed.md")
    git(repo, "commit", "-q", "--no-verify", "-m", "renamed; the name stays in history")
    result = execute_notebook("memfs", {"repo": str(repo), "ref": "HEAD", "as_of": None},
                              tmp_path / "out")
    assert result.metrics["commits"] == 3
    assert result.html.read_text().count("data:image/png;base64") >= 3


@pytest.mark.slow
def test_memfs_notebook_shows_letta_code_constraints_on_the_v2_sample(tmp_path):
    """On the bundled v2 sample the report names Letta Code's open constraint error and the
    commit that broke the limits (checked against Letta Code in test_memfs_v2_sample.py)."""
    result = execute_notebook("memfs", {"repo": "data/samples/memfs/letta-code-v2.bundle"},
                              tmp_path / "out")
    assert result.metrics["layout_policy"] == "root-marker"
    assert result.metrics["constraint_errors"] == 1
    html = result.html.read_text()
    assert "scratch/todo.md: missing required index scratch/MEMORY.md" in html
    assert "7b3a1873c6" in html  # the bypass that first broke three rules
