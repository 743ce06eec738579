"""Where reports go when no folder is named: under the checkout only from inside it, never into
an installed package, and in a folder naming the day and the store, so `memlab report audit
a.db` and then `b.db` do not overwrite each other. And `--as-of` before a store's data is one
warning line on stderr, as the HTML says in its notes."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from memlab.errors import ReportError
from memlab.report import report_folder, reports_root
from memlab.report._paths import store_label
from memlab.report._runs import as_of_warnings

REPO = Path(__file__).resolve().parents[1]


def _today() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def test_the_checkout_is_written_only_from_inside_it(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMLAB_REPORTS_DIR", raising=False)
    monkeypatch.chdir(REPO / "memlab")
    assert reports_root() == REPO / "reports"
    monkeypatch.chdir(tmp_path)
    assert reports_root() == Path("reports") and reports_root().resolve() == tmp_path / "reports"
    monkeypatch.setenv("MEMLAB_REPORTS_DIR", str(tmp_path / "mine"))
    monkeypatch.chdir(REPO)
    assert reports_root() == tmp_path / "mine"  # the variable wins everywhere


def test_an_installed_package_is_never_written(monkeypatch):
    import memlab

    monkeypatch.delenv("MEMLAB_REPORTS_DIR", raising=False)
    # as an installed wheel: no checkout, and the user's shell in the package's folder
    monkeypatch.setattr("memlab.report._paths.checkout_root", lambda: None)
    monkeypatch.chdir(Path(memlab.__file__).parent / "report")
    with pytest.raises(ReportError, match="inside the installed memlab package") as info:
        reports_root()
    assert "MEMLAB_REPORTS_DIR" in str(info.value)
    monkeypatch.chdir(REPO.parent)  # beside it is fine: ./reports
    assert reports_root() == Path("reports")


@pytest.mark.parametrize("path, label", [
    ("data/demo/elfmem-demo.db", "elfmem-demo"),
    ("/x/customer_service.af", "customer_service"),
    ("~/.letta/agents/agent-123/memory", "agent-123-memory"),
    ("/tmp/../../a b;$(id).db", "a_b_id"),
    ("postgresql://memlab_ro:secret@db.example:5432/letta", "db.example-letta"),
    ("/", "store"),
])
def test_a_store_is_named_by_its_file_or_folder_and_nothing_else(path, label):
    assert store_label(path) == label


def test_the_default_folder_names_the_day_and_the_stores(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLAB_REPORTS_DIR", str(tmp_path))
    day = _today()
    assert report_folder("audit", ["a.db"]) == tmp_path / day / "a-audit"
    assert report_folder("audit", ["b.db"]) != report_folder("audit", ["a.db"])
    assert report_folder("audit", ["a.db"], day="2026-08-04") == tmp_path / "2026-08-04/a-audit"
    assert report_folder("audit", list("abcde")).name == "a+b+c+2more-audit"
    assert report_folder("simulation") == tmp_path / day / "simulation"


def test_as_of_warnings_read_the_metrics_the_html_is_made_from():
    elfmem = {"a.db": {"kind": "elfmem_db", "last_activity_at": "2026-08-04T09:32:43+00:00"},
              "b.db": {"kind": "elfmem_db", "last_activity_at": None}}
    [line] = as_of_warnings(elfmem, "2026-01-01")
    assert line.startswith("a.db: --as-of 2026-01-01 is before the store's last activity "
                           "(2026-08-04)")
    assert as_of_warnings(elfmem, "2026-08-04") == []  # the same day: nothing negative
    assert as_of_warnings(elfmem, None) == []
    memfs = {"kind": "memfs_repo", "as_of": "2020-01-01T00:00:00+00:00", "commits": 0}
    assert as_of_warnings(memfs, "2020-01-01") == [
        "the store: --as-of 2020-01-01 is before the repo's first commit; no commit was read "
        "(0 commits)"]
    assert as_of_warnings({**memfs, "commits": 3}, "2020-01-01") == []


@pytest.mark.slow
def test_two_stores_reported_from_outside_the_checkout_do_not_collide(
        tmp_path, monkeypatch, data_dir, capsys):
    from memlab.cli import main

    monkeypatch.delenv("MEMLAB_REPORTS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    shutil.copy(data_dir / "demo/elfmem-demo.db", tmp_path / "a.db")
    shutil.copy(data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db", tmp_path / "b.db")
    before = sorted(p.name for p in (REPO / "reports").glob("*")) \
        if (REPO / "reports").is_dir() else []

    # before the demo's data: negative ages, which the CLI now says in one line
    assert main(["-q", "report", "audit", "a.db", "--as-of", "2020-01-01"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "memlab: warning: a.db: --as-of 2020-01-01 is before the store's last activity (2026-08-")
    assert main(["-q", "report", "audit", "b.db", "--as-of", "2026-12-31"]) == 0
    assert capsys.readouterr().err == ""  # after its data: no warning

    day = tmp_path / "reports" / _today()
    assert sorted(p.name for p in day.iterdir()) == ["a-audit", "b-audit"]
    for name in ("a", "b"):
        html = (day / f"{name}-audit" / "01-audit.html").read_text()
        assert f"<th>stores</th><td>{name}.db</td>" in html  # each its own store's report
    after = sorted(p.name for p in (REPO / "reports").glob("*")) \
        if (REPO / "reports").is_dir() else []
    assert after == before  # nothing written into the checkout the user is not in
