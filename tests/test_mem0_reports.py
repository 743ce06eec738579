"""The mem0 kind in the fleet lake and in `memlab report all` (its alerts and findings), through
the kind's own attributes: the stores mem0ai 0.1.90 and 2.2.1 wrote (data/samples/mem0/)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import memlab
from memlab import kinds


def _fleet_root(data_dir: Path, root: Path) -> Path:
    for v in ("0.1.90", "2.2.1"):
        shutil.copytree(data_dir / "samples" / "mem0" / v, root / f"mem0-{v}")
    return root


def test_a_folder_with_history_db_and_qdrant_is_one_store_and_others_are_not(data_dir, tmp_path):
    root = _fleet_root(data_dir, tmp_path / "root")
    ev = kinds.detect(root / "mem0-2.2.1")
    assert ev.kind == "mem0" and "qdrant/" in ev.reason
    store = memlab.load(root / "mem0-2.2.1")
    assert store.path == root / "mem0-2.2.1" / "history.db" and len(store.payloads) == 7
    # negative controls: Qdrant alone, or an elfmem database beside a qdrant/ folder
    only = tmp_path / "only-qdrant"
    shutil.copytree(data_dir / "samples/mem0/2.2.1/qdrant", only / "qdrant")
    elf = tmp_path / "elf"
    (elf / "qdrant").mkdir(parents=True)
    shutil.copy2(data_dir / "demo" / "elfmem-demo.db", elf / "history.db")
    for folder in (only, elf):
        with pytest.raises(memlab.errors.MemlabError):
            kinds.detect(folder)  # no kind claims it
    assert kinds.detect(elf / "history.db").kind == "elfmem_db"


@pytest.mark.slow  # audits with the embedding model
def test_the_fleet_lake_has_one_row_per_mem0_store_with_the_audits_values(data_dir, tmp_path):
    root = _fleet_root(data_dir, tmp_path / "root")
    with sqlite3.connect(tmp_path / "root" / "mem0-2.2.1" / "qdrant" / "x.db") as c:
        c.execute("CREATE TABLE t (x)")  # inside a claimed folder: never offered on its own
    result = memlab.fleet([root], out=tmp_path / "lake", workers=0, as_of="2026-10-10",
                          progress=False)
    assert (result.stores["status"] == "ok").all() and len(result.stores) == 2
    head = result.headline().set_index("store_path")
    for v, untimed in (("0.1.90", 3), ("2.2.1", 0)):
        path = str(root / f"mem0-{v}")
        row = head.loc[path] if path in head.index else head.loc[f"{path}/history.db"]
        audit = json.loads(memlab.audit(root / f"mem0-{v}", as_of="2026-10-10").to_json())
        assert row["store_kind"] == "mem0"
        for name in kinds.get("mem0").headline:
            assert row[name] == pytest.approx(audit["headline"][name]), (v, name)
        assert row["deletions_without_time"] == untimed


@pytest.mark.slow  # renders the audit notebook
def test_report_all_alerts_on_untimed_deletions_and_records_findings(data_dir, tmp_path):
    from memlab.cli import main

    shutil.copytree(data_dir / "samples/mem0/0.1.90", tmp_path / "old")
    shutil.copytree(data_dir / "samples/mem0/2.2.1", tmp_path / "new")
    config = tmp_path / "reports.yaml"
    config.write_text("as_of: 2026-10-10\nsimulation: false\nalerts:\n"
                      "  - metric: deletions_without_time\n    above: 0\n"
                      "stores:\n  old: old/history.db\n  new: new/history.db\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["-q", "report", "all", "--config", str(config), "--out",
                     str(tmp_path / "reports" / "2026-10-10"), "--fail-on-alert"])
    assert code == 3  # an alert fired
    run = json.loads((tmp_path / "reports/2026-10-10/runs.json").read_text())
    fired = {a["store"]: a["fired"] for a in run["alerts"]}
    assert fired == {"old": True, "new": False}
    old = run["stores"]["old"]
    assert old["kind"] == "mem0" and list(old["headline"]) == list(kinds.get("mem0").headline)
    assert sum(f.startswith("untimed_deletions: ") for f in old["findings"]) == 3
    assert not any(f.startswith("untimed_deletions") for f in run["stores"]["new"]["findings"])


def test_the_churn_figure_stacks_each_weeks_events_and_leaves_out_untimed_ones(data_dir):
    from memlab import plots

    # mem0 0.1.90 writes DELETE rows without a time: the audit counts them in a null week
    audit = kinds.get("mem0").audit(memlab.load(data_dir / "samples/mem0/0.1.90/history.db"),
                                    near_duplicates=False)
    churn = audit.tables["churn"]
    assert churn["week"].isna().sum() == 1
    ax = plots.event_churn(audit).axes[0]
    timed = churn.dropna(subset=["week"])
    weeks = [t.get_text() for t in ax.get_xticklabels()]
    assert weeks == [str(w)[:10] for w in timed["week"]]
    for container, event in zip(ax.containers, ("ADD", "UPDATE", "DELETE")):
        assert [round(b.get_height()) for b in container] == list(timed[event]), event
    assert sum(b.get_height() for c in ax.containers for b in c) == timed["events"].sum()
    # an audit with no timed event draws a note, not an empty chart
    untimed = kinds.get("mem0").audit(memlab.load(data_dir / "samples/mem0/0.1.90/history.db"),
                                      near_duplicates=False)
    untimed.tables["churn"] = churn[churn["week"].isna()]
    fig = plots.event_churn(untimed)
    assert not fig.axes[0].containers and fig.axes[0].texts[0].get_text() == "no timed events"
