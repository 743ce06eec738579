"""A wheel built from the checkout works outside it: `memlab report audit` renders the report from
the notebooks the wheel carries, with no checkout on the path (issue 25, item 6).

The wheel is built from a copy of the tracked files (so the build writes nothing into the
checkout), installed with ``pip --target`` into a temporary folder, and run from another one with
that folder first on ``PYTHONPATH`` (the test venv's own dependencies serve it)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from memlab.report import NOTEBOOKS

REPO = Path(__file__).resolve().parents[1]


def _tracked_copy(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, files):
        src = REPO / os.fsdecode(name)
        if src.is_file() and not os.fsdecode(name).startswith("data/"):
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / os.fsdecode(name))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    _tracked_copy(src)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out), str(src)], check=True, capture_output=True, timeout=600)
    (built,) = out.glob("memlab-*.whl")
    return built


def test_the_wheel_carries_every_report_notebook_and_template(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for nb in NOTEBOOKS.values():
        assert f"memlab/notebooks/{nb}" in names
    assert any(n.startswith("memlab/report/templates/memlab_offline/") for n in names)
    assert not any(n.startswith(("tests/", "data/", "notebooks/")) for n in names)


@pytest.mark.slow
def test_an_installed_wheel_renders_the_audit_report_outside_the_checkout(wheel, tmp_path, data_dir):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, timeout=600)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy2(data_dir / "demo" / "elfmem-demo.db", work / "mine.db")
    env = {k: v for k, v in os.environ.items() if k != "MEMLAB_REPORTS_DIR"}
    env["PYTHONPATH"] = str(target)
    where = subprocess.run(
        [sys.executable, "-c", "import memlab, memlab.report as r; print(memlab.__file__); "
                               "print(r.notebook_folder()); print(r.reports_root())"],
        cwd=work, env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    assert Path(where[0]).is_relative_to(target) and Path(where[1]).is_relative_to(target)
    assert where[2] == "reports"  # outside a checkout: ./reports in the working folder
    run = subprocess.run([sys.executable, "-m", "memlab", "-q", "report", "audit", "mine.db",
                          "--as-of", "2026-08-04"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-2000:]
    html = work / "reports" / "audit"
    pages = list(html.glob("*.html"))
    assert pages and pages[0].stat().st_size > 50_000, run.stdout
    metrics = json.loads((html / "metrics.json").read_text())["mine.db"]
    with sqlite3.connect(f"file:{work / 'mine.db'}?mode=ro", uri=True) as db:  # the oracle
        counts = dict(db.execute("SELECT status, count(*) FROM blocks GROUP BY status"))
    assert (metrics["blocks_active"], metrics["blocks_archived"]) == (counts["active"],
                                                                       counts["archived"])
