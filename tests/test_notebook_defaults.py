"""Every notebook's defaults run under plain papermill from the repo root and from notebooks/.

This is what a person types (`papermill notebooks/01-audit.ipynb out.ipynb`): no parameters,
no memlab runner making paths absolute. Outputs must land under the reports folder
(``$MEMLAB_REPORTS_DIR`` here, so the test leaves the checkout alone), not in the working
directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlab.report import NOTEBOOKS, find_input, output_folder

REPO = Path(__file__).resolve().parents[1]


def _papermill(notebook: str, out: Path, cwd: Path, reports: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, MEMLAB_REPORTS_DIR=str(reports),
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "papermill", notebook, str(out), "--no-progress-bar"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)


def _listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(NOTEBOOKS))
def test_defaults_run_from_the_repo_root_and_from_notebooks(kind, tmp_path):
    name = NOTEBOOKS[kind]
    before_root, before_nb = _listing(REPO), _listing(REPO / "notebooks")
    for where, cwd, notebook in (("root", REPO, f"notebooks/{name}"),
                                 ("notebooks", REPO / "notebooks", name)):
        reports = tmp_path / where / "reports"
        reports.parent.mkdir()
        run = _papermill(notebook, tmp_path / where / name, cwd, reports)
        assert run.returncode == 0, f"from {where}: {run.stderr[-3000:]}"
        metrics = reports / kind / "metrics.json"
        assert metrics.exists(), f"from {where}: no metrics.json under {reports}"
        assert json.loads(metrics.read_text()), f"from {where}: empty metrics"
    # nothing was written beside the user: not in the root, not in notebooks/
    assert _listing(REPO) == before_root
    assert _listing(REPO / "notebooks") == before_nb


def test_relative_inputs_are_found_from_the_cwd_first_then_the_checkout(tmp_path, monkeypatch):
    demo = REPO / "data" / "demo" / "elfmem-demo.db"
    monkeypatch.chdir(tmp_path)
    assert find_input("data/demo/elfmem-demo.db") == str(demo)  # from the checkout
    (tmp_path / "data" / "demo").mkdir(parents=True)
    (tmp_path / "data" / "demo" / "elfmem-demo.db").write_bytes(b"mine")
    mine = str(tmp_path / "data" / "demo" / "elfmem-demo.db")
    assert find_input(["data/demo/elfmem-demo.db"]) == [mine]  # the user's own file wins
    assert find_input(None) is None and find_input(3) == 3
    assert find_input("no/such.db") == "no/such.db"  # left for the loader to name as missing


def test_outputs_default_to_the_reports_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMLAB_REPORTS_DIR", raising=False)
    monkeypatch.chdir(REPO / "notebooks")  # inside the checkout: its reports/
    assert output_folder(None, "audit") == str(REPO / "reports" / "audit")
    monkeypatch.chdir(tmp_path)  # outside it: ./reports, never the checkout the user left
    assert output_folder(None, "audit") == str(tmp_path / "reports" / "audit")
    assert output_folder("mine", "audit") == str(tmp_path / "mine")
    monkeypatch.setenv("MEMLAB_REPORTS_DIR", str(tmp_path / "elsewhere"))
    assert output_folder(None, "review") == str(tmp_path / "elsewhere" / "review")
    assert (tmp_path / "elsewhere" / "review").is_dir()


def test_gitignore_covers_what_notebooks_write(repo_root):
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "reports/audit/metrics.json",
         "reports/review/review-2026-08-04.md", "reports/migration/migrated/x.md",
         "metrics.json", "notebooks/metrics.json", "review-2026-08-04.md",
         "notebooks/review-2026-08-04.json", "migrated/MEMORY.md", "notebooks/migrated/a.md",
         "reports/browser/audit.png"],
        cwd=repo_root, capture_output=True, text=True)
    assert len(ignored.stdout.split()) == 10, ignored.stdout


def test_every_relative_link_in_the_notebooks_and_readme_resolves(repo_root):
    import re

    import nbformat

    broken = []
    sources = [(p.parent, c.source) for p in sorted((repo_root / "notebooks").glob("*.ipynb"))
               for c in nbformat.read(p, as_version=4).cells if c.cell_type == "markdown"]
    sources.append((repo_root, (repo_root / "README.md").read_text()))
    for folder, text in sources:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if not re.match(r"[a-z]+:", target) and not (folder / target).exists():
                broken.append(f"{folder.name}: {target}")
    assert broken == []
    cited = (repo_root / "docs" / "elfmem-v2-substrate-reevaluation.md").read_text()
    assert "MIT" in cited.splitlines()[0] and "52x amplification ratio" in cited
    assert "Permission is hereby granted" in (repo_root / "docs/third-party/elfmem-LICENSE").read_text()


@pytest.mark.slow
def test_papermill_cwd_elsewhere_still_finds_the_defaults(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, MEMLAB_REPORTS_DIR=str(tmp_path / "reports"),
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-m", "papermill", "notebooks/01-audit.ipynb",
                          str(tmp_path / "out.ipynb"), "--cwd", str(elsewhere),
                          "--no-progress-bar"], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    metrics = json.loads((tmp_path / "reports" / "audit" / "metrics.json").read_text())
    assert metrics["elfmem-demo.db"]["llm_calls"] == 2903
    assert list(elsewhere.iterdir()) == []  # nothing written in the kernel's directory


def test_the_cli_and_the_notebooks_share_one_default_output_folder(tmp_path, monkeypatch):
    """`memlab report KIND` without --out writes under the folder a notebook run without
    output_dir writes under: both ask memlab.report.reports_root() ($MEMLAB_REPORTS_DIR, else
    the checkout's reports/ from inside it, else ./reports); the CLI's folder names the day
    and the store (reports/<date>/elfmem-demo-review), the notebook's the kind."""
    import memlab.report as report_module
    from memlab.cli import main
    from memlab.report import ExecutedReport, report_folder, reports_root

    used = []

    def fake_execute(kind, params, out_dir, **_):
        used.append(Path(out_dir).resolve())
        return ExecutedReport(kind, Path(out_dir) / "x.ipynb", Path(out_dir) / "x.html", {})

    monkeypatch.setattr(report_module, "execute_notebook", fake_execute)
    monkeypatch.chdir(tmp_path)
    demo = str(REPO / "data" / "demo" / "elfmem-demo.db")
    monkeypatch.setenv("MEMLAB_REPORTS_DIR", str(tmp_path / "elsewhere"))
    assert main(["-q", "report", "audit", demo]) == 0
    assert used[-1] == report_folder("audit", [demo])
    assert used[-1].parent.parent == Path(output_folder(None, "audit")).parent \
        == tmp_path / "elsewhere"
    assert used[-1].name == "elfmem-demo-audit"
    monkeypatch.delenv("MEMLAB_REPORTS_DIR")
    monkeypatch.chdir(REPO)
    assert main(["-q", "report", "review", demo]) == 0
    assert used[-1] == report_folder("review", [demo])
    assert used[-1].parent.parent == Path(output_folder(None, "review")).parent \
        == REPO / "reports"
    assert reports_root() == REPO / "reports"
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "report", "review", demo, "--out", "mine"]) == 0
    assert used[-1] == tmp_path / "mine"  # a named folder is the user's, relative to the cwd
