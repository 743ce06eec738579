"""A report folder run again: after a failed run nothing in it passes for that run's result.

A failed run keeps its executed notebook and renders no page; the earlier run's page and
metrics.json used to stay beside it under their usual names, so `01-audit.html` in the folder
was the earlier, successful run's. Now they are renamed `*.earlier-run.*` before the notebook
runs and removed when it succeeds. Runs through the real CLI; the failures are real ones (a
store that is not there fails the notebook's paths cell; a folder where the audit report writes
its metrics.json fails its last cell; a store truncated between two runs fails to load).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memlab.report._stale import drop_error_page

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data/demo/elfmem-demo.db"
OUTPUTS = {"01-audit.html", "01-audit.ipynb", "metrics.json"}


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "memlab", "-q", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=900)


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def _report(out: Path, store: Path | str, as_of: str) -> subprocess.CompletedProcess:
    return _cli("report", "audit", str(store), "--as-of", as_of, "--out", str(out))


@pytest.mark.slow
def test_a_failed_report_leaves_no_earlier_page_under_its_own_name(tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "notes.html").write_text("<p>my notes</p>")  # a person's own file: never touched
    (out / "error.html").write_text("<p>my page, named like memlab's</p>")

    # success, then success: the second run's page and metrics, nothing else (negative control)
    assert _report(out, DEMO, "2026-08-04").returncode == 0
    done = _report(out, DEMO, "2026-08-05")
    assert done.returncode == 0, done.stderr
    assert _names(out) == OUTPUTS | {"notes.html", "error.html"}
    good_page = (out / "01-audit.html").read_bytes()
    good_metrics = (out / "metrics.json").read_bytes()
    assert b"<th>as_of</th><td>'2026-08-05'</td>" in good_page
    assert json.loads(good_metrics)["elfmem-demo.db"]["as_of"].startswith("2026-08-05")

    # a run whose notebook fails: its executed notebook, and the earlier page under a name
    # saying so; the error line says where it is
    done = _report(out, tmp_path / "not-there.db", "2026-08-05")
    assert done.returncode == 2 and done.stdout == ""
    [line] = [t for t in done.stderr.splitlines() if t.startswith("memlab: error: ")]
    assert "01-audit.ipynb: cell 4 failed with StoreNotFound" in line
    assert line.endswith("the earlier run's report is kept as 01-audit.earlier-run.html)")
    assert _names(out) == {"01-audit.ipynb", "01-audit.earlier-run.html",
                           "01-audit.earlier-run.ipynb", "metrics.earlier-run.json",
                           "notes.html", "error.html"}
    assert (out / "01-audit.earlier-run.html").read_bytes() == good_page
    assert (out / "metrics.earlier-run.json").read_bytes() == good_metrics
    failed = json.loads((out / "01-audit.ipynb").read_text())
    assert any(o.get("ename") == "StoreNotFound" for c in failed["cells"]
               for o in c.get("outputs", []))  # the folder's notebook is the failed run's

    # failing again keeps the last good page (it is not lost to the failure before)
    assert _report(out, tmp_path / "not-there.db", "2026-08-05").returncode == 2
    assert (out / "01-audit.earlier-run.html").read_bytes() == good_page
    assert not (out / "01-audit.html").exists() and not (out / "metrics.json").exists()

    # success after failure: clean, as after any success; the person's files as they were
    assert _report(out, DEMO, "2026-08-06").returncode == 0
    assert _names(out) == OUTPUTS | {"notes.html", "error.html"}
    assert b"<th>as_of</th><td>'2026-08-06'</td>" in (out / "01-audit.html").read_bytes()
    assert (out / "notes.html").read_text() == "<p>my notes</p>"
    assert (out / "error.html").read_text() == "<p>my page, named like memlab's</p>"


def _run_all(config: Path, out: Path) -> subprocess.CompletedProcess:
    return _cli("report", "all", "--config", str(config), "--out", str(out))


@pytest.mark.slow
def test_report_all_run_again_the_same_day(tmp_path):
    store = tmp_path / "demo.db"
    shutil.copy(DEMO, store)
    config = tmp_path / "stores.yaml"
    config.write_text("as_of: 2026-08-04\nsimulation: false\nreports: [audit, review]\n"
                      "stores:\n  demo: demo.db\n")
    run = tmp_path / "reports" / "2026-12-06"
    audit, review = run / "demo" / "audit", run / "demo" / "review"
    assert _run_all(config, run).returncode == 0
    page = (audit / "01-audit.html").read_bytes()
    assert "choices" in json.loads((run / "runs.json").read_text())["stores"]["demo"]

    # the store truncated: it fails to load, and its reports of the earlier run are set aside
    store.write_bytes(DEMO.read_bytes()[:40000])
    done = _run_all(config, run)
    assert done.returncode == 4 and "FAILED demo · load" in done.stderr
    assert not (audit / "01-audit.html").exists() and not (review / "05-review.html").exists()
    assert (audit / "01-audit.earlier-run.html").read_bytes() == page
    assert (review / "05-review.earlier-run.html").is_file()
    assert not (audit / "metrics.json").exists() and not (review / "metrics.json").exists()
    record = json.loads((run / "runs.json").read_text())
    assert [r.get("html") for r in record["reports"]] == [None]
    assert "01-audit" not in (run / "index.html").read_text()  # the run page links the error
    assert '<a href="demo/error.html">load</a>' in (run / "index.html").read_text()

    # the store back: clean again, the failure page of the run before gone with its failure
    shutil.copy(DEMO, store)
    assert _run_all(config, run).returncode == 0
    assert not (run / "demo" / "error.html").exists()
    assert _names(audit) == OUTPUTS
    assert {"05-review.html", "05-review.ipynb", "metrics.json"} <= _names(review)
    assert not [p for p in run.rglob("*earlier-run*")]

    # a report that fails at a cell (its metrics.json is a folder): the earlier page set aside,
    # the failure page links it as the last good one and the executed notebook as the failed
    page = (audit / "01-audit.html").read_bytes()
    (audit / "metrics.json").unlink()
    (audit / "metrics.json").mkdir()
    done = _run_all(config, run)
    assert done.returncode == 4 and "FAILED demo · audit report, cell" in done.stderr
    assert (audit / "01-audit.earlier-run.html").read_bytes() == page
    assert not (audit / "01-audit.html").exists()
    error = (audit / "error.html").read_text()
    assert '<a href="01-audit.earlier-run.html">2026-12-06, an earlier run into this folder</a>' \
        in error
    assert '<a href="01-audit.ipynb">01-audit.ipynb</a>' in error
    state = json.loads((run / "runs.json").read_text())["stores"]["demo"]
    assert state["choices"]  # the review ran, and its choices are this run's
    (audit / "metrics.json").rmdir()

    # and the review failing: its earlier proposal is not read as this run's choices
    (review / "metrics.json").unlink()
    (review / "metrics.json").mkdir()
    assert _run_all(config, run).returncode == 4
    assert json.loads((run / "runs.json").read_text())["stores"]["demo"]["choices"] is None
    assert not (audit / "error.html").exists() and (audit / "01-audit.html").is_file()


def test_only_memlabs_failure_page_is_removed(tmp_path):
    from memlab.report._index import error_page

    mine = tmp_path / "a" / "error.html"
    mine.parent.mkdir()
    mine.write_text(error_page({"store": "demo", "report": "audit", "error": "boom",
                                "error_page": "a/error.html"}, {"date": "2026-12-06"},
                               last_good=None, notebook=None))
    theirs = tmp_path / "b" / "error.html"
    theirs.parent.mkdir()
    theirs.write_text("<!doctype html><title>my error notes</title>")
    drop_error_page(mine)
    drop_error_page(theirs)
    drop_error_page(tmp_path / "absent.html")
    assert not mine.exists() and theirs.read_text().startswith("<!doctype html><title>my")
