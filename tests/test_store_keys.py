"""Stores that share a name keep their own figures (memlab.audits.store_keys): the audit
report's metrics.json once kept one ``history.db`` of two (the last one written), and every
reader of that file (the headline panel, the run metrics, the alerts) showed that one alone.

The data: mem0's own 0.1.90 and 2.2.1 samples, copied under folders of our choosing. They log
the same 18 events, but 0.1.90 writes no time for its 3 deletions and 2.2.1 does: whichever
store is lost, ``deletions_without_time`` says which one is left."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import memlab
from memlab.audits import store_keys
from memlab.cli import main
from memlab.report._present import headline_panel
from memlab.report._runs import as_of_warnings, evaluate_alerts, parse_alerts, store_metrics

AS_OF = "2026-08-04"
OLD, NEW = "samples/mem0/0.1.90", "samples/mem0/2.2.1"  # 3 untimed deletions; 0
CLAUDE = "samples/claude-memory/openai-anthropic-bridge"


def _copy(data_dir: Path, sample: str, folder: Path) -> Path:
    """The sample's folder (history.db and its vector store) copied to ``folder``."""
    shutil.copytree(data_dir / sample, folder)
    return folder / "history.db"


@pytest.fixture
def same_named(data_dir, tmp_path):
    return _copy(data_dir, OLD, tmp_path / "old"), _copy(data_dir, NEW, tmp_path / "new")


def test_stores_sharing_a_name_get_their_folders_whatever_the_order(same_named, data_dir,
                                                                    tmp_path):
    old, new = (memlab.load(p) for p in same_named)
    assert store_keys([old, new]) == ["old/history.db", "new/history.db"]
    assert store_keys([new, old]) == ["new/history.db", "old/history.db"]  # each keeps its key
    # the folders above tell them apart only higher up: as many as it takes, each store its own
    deep = [memlab.load(_copy(data_dir, OLD, tmp_path / top / "a")) for top in ("x", "y")]
    assert store_keys([*deep, new]) == ["x/a/history.db", "y/a/history.db", "new/history.db"]
    # the same store twice: nothing in its path tells them apart; the second is counted
    again = memlab.load(same_named[0])
    assert store_keys([old, again]) == ["history.db", "history.db (2)"]
    assert store_keys([old, again, new]) == ["old/history.db", "old/history.db (2)",
                                             "new/history.db"]


def test_a_store_named_other_than_its_file_gets_its_path_after_its_name(data_dir, tmp_path):
    stores = [memlab.load(_copy(data_dir, OLD, tmp_path / top)) for top in ("a", "b")]
    for store in stores:
        store.meta["name"] = "ezra"  # what a memfs repo gets from its agent's metadata
    assert store_keys(stores) == ["ezra (a/history.db)", "ezra (b/history.db)"]


def test_negative_controls_keep_todays_keys(same_named, data_dir):
    """One store, or stores with different names: the keys are their names, as before."""
    old = memlab.load(same_named[0])
    claude = memlab.load(data_dir / CLAUDE)
    assert store_keys([old]) == ["history.db"]
    assert store_keys([old, claude]) == ["history.db", claude.name]
    assert store_keys([claude, old]) == [claude.name, "history.db"]
    assert store_keys([]) == []


# An audit report's metrics.json as e161d13 wrote it for the two stores: one key, one store.
OLD_FORMAT = {"history.db": {"deletions": 3, "deletions_without_time": 0, "history_events": 18,
                             "kind": "mem0", "last_activity_at": "2026-09-01T00:00:00+00:00",
                             "memories_current": 7}}


def test_an_old_metrics_json_still_reads():
    ran = store_metrics([{"report": "audit", "metrics": OLD_FORMAT}])
    assert {k: ran[k] for k in OLD_FORMAT["history.db"] if k not in ("kind", "last_activity_at")} \
        == {"deletions": 3, "deletions_without_time": 0, "history_events": 18,
            "memories_current": 7}  # plain names: the one store of its report
    assert ran["untimed_deletion_share"] == 0  # a ratio it did not record, derived
    panel = headline_panel("audit", OLD_FORMAT)
    assert "<th>history.db</th>" in panel and "memories_current" in panel
    assert as_of_warnings(OLD_FORMAT, AS_OF) == [
        "history.db: --as-of 2026-08-04 is before the store's last activity (2026-09-01); "
        "its later events have negative ages"]
    flat = {"commits": 4, "files": 2}  # the memfs report's: one store, no key
    assert store_metrics([{"report": "memfs", "metrics": flat}]) == flat


@pytest.mark.slow
def test_the_audit_report_keeps_both_stores_and_its_readers_see_both(same_named, data_dir,
                                                                     tmp_path, capsys):
    out = tmp_path / "report"
    code = main(["report", "audit", *map(str, same_named), str(data_dir / CLAUDE),
                 "--as-of", AS_OF, "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    metrics = json.loads((out / "metrics.json").read_text())
    claude = memlab.load(data_dir / CLAUDE).name
    assert set(metrics) == {"old/history.db", "new/history.db", claude}  # the other: its name
    assert metrics["old/history.db"]["deletions_without_time"] == 3
    assert metrics["new/history.db"]["deletions_without_time"] == 0
    assert metrics["old/history.db"]["kind"] == metrics["new/history.db"]["kind"] == "mem0"
    html = (out / "01-audit.html").read_text()
    assert "<th>new/history.db</th><th>old/history.db</th>" in html  # the headline's columns
    # the side-by-side table (memlab.compare, in the stores' order) names them the same: one rule
    assert re.search(r"<th>store</th>\s*<th>old/history.db</th>\s*<th>new/history.db</th>", html)
    # the run metrics and the alerts read both stores' figures
    ran = store_metrics([{"report": "audit", "metrics": metrics}])
    assert ran["old/history.db.deletions_without_time"] == 3
    assert ran["new/history.db.deletions_without_time"] == 0
    rules = parse_alerts([{"metric": f"{key}.deletions_without_time", "above": 1}
                          for key in ("old/history.db", "new/history.db")])
    assert not isinstance(rules, str)
    alerts = evaluate_alerts(rules, {"both": ran}, {"both": None})
    assert [(a.value, a.fired, a.reason) for a in alerts] == [(3, True, None), (0, False, None)]


@pytest.mark.slow
def test_report_all_keeps_same_named_stores_apart_in_the_run_index_and_alerts(same_named,
                                                                              tmp_path):
    """`report all` renders one audit report per configured store, under the config's name:
    two stores whose files share a name are two rows of the run index and two alerts."""
    config = tmp_path / "reports.yaml"
    config.write_text(f"as_of: {AS_OF}\nsimulation: false\nreports: [audit]\n"
                      "alerts:\n  - metric: deletions_without_time\n    above: 1\n"
                      f"stores:\n  old: {same_named[0]}\n  new: {same_named[1]}\n")
    root = tmp_path / "reports"
    code = main(["-q", "report", "all", "--config", str(config), "--out", str(root / AS_OF)])
    assert code == 0
    record = json.loads((root / AS_OF / "runs.json").read_text())
    assert set(record["stores"]) == {"old", "new"}
    assert [(a["store"], a["value"], a["fired"]) for a in record["alerts"]] == [
        ("old", 3, True), ("new", 0, False)]
    for name in ("old", "new"):  # each report's metrics.json: its one store, under its name
        assert set(json.loads((root / AS_OF / name / "audit" / "metrics.json").read_text())) \
            == {"history.db"}
    page = (root / "index.html").read_text()
    assert "ALERT old: deletions_without_time above 1: 3" in page
    assert "<h3>old " in page and "<h3>new " in page
