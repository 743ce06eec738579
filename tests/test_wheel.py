"""A wheel built from the checkout works outside it: `memlab report audit` renders the report from
the notebooks the wheel carries, with no checkout on the path (issue 25, item 6).

The wheel is built from a copy of the tracked files (so the build writes nothing into the
checkout) and installed with ``pip --no-deps --no-index`` into a fresh venv outside it; the
venv reads its dependencies from the test venv's site-packages through a ``.pth`` line (no
network), which adds that folder to ``sys.path`` without running its own ``.pth`` files, so the
checkout's editable install is not seen, and ``JUPYTER_PATH`` names the test venv's jupyter data
(nbconvert's templates, the kernelspec). The report runs from a third folder with that venv's
python, and its notebook kernel is that python too."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
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


def _fresh_venv(where: Path, wheel: Path) -> Path:
    """A new venv at ``where`` with the wheel installed and the test venv's packages readable."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True,
                   capture_output=True, timeout=300)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], check=True, capture_output=True, text=True).stdout
    (Path(purelib.strip()) / "memlab-test-deps.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                    "--no-index", "--ignore-installed", "-q", str(wheel)], check=True,
                   capture_output=True, timeout=600)
    return python


@pytest.mark.slow
def test_an_installed_wheel_renders_the_audit_report_outside_the_checkout(wheel, tmp_path, data_dir):
    venv = tmp_path / "venv"
    python = _fresh_venv(venv, wheel)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy2(data_dir / "demo" / "elfmem-demo.db", work / "mine.db")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MEMLAB_REPORTS_DIR", "PYTHONPATH", "VIRTUAL_ENV")}
    # the data files nbconvert and ipykernel install beside them (the report's HTML templates,
    # the python3 kernelspec, whose "python" jupyter_client runs as the venv's own python)
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    where = subprocess.run(
        [str(python), "-c", "import sys, memlab, memlab.report as r; print(memlab.__file__); "
                            "print(r.notebook_folder()); print(r.reports_root()); "
                            "print(any('__editable__' in str(f) for f in sys.meta_path))"],
        cwd=work, env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    assert Path(where[0]).is_relative_to(venv) and Path(where[1]).is_relative_to(venv)
    assert where[2] == "reports"  # outside a checkout: ./reports in the working folder
    assert where[3] == "False"  # the checkout's editable install is not on this venv's path
    run = subprocess.run([str(python), "-m", "memlab", "-q", "report", "audit", "mine.db",
                          "--as-of", "2026-08-04"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-2000:]
    # the default folder names the day and the store (a second store would not overwrite it)
    [html] = (work / "reports").glob("*/mine-audit")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", html.parent.name)
    pages = list(html.glob("*.html"))
    assert pages and pages[0].stat().st_size > 50_000, run.stdout
    metrics = json.loads((html / "metrics.json").read_text())["mine.db"]
    with sqlite3.connect(f"file:{work / 'mine.db'}?mode=ro", uri=True) as db:  # the oracle
        counts = dict(db.execute("SELECT status, count(*) FROM blocks GROUP BY status"))
    assert (metrics["blocks_active"], metrics["blocks_archived"]) == (counts["active"],
                                                                       counts["archived"])
