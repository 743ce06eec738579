"""A Claude Code memory folder keeps no history; memlab keeps one: two scheduled `memlab report
all` runs over a folder that changed between them, the run index listing the files added,
changed and removed, the audit report's metrics and an alert on them; and the fleet lake row."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

import memlab
from memlab import kinds
from memlab.cli import main

sys.path.insert(0, str(Path(__file__).parent))
import claude_memory_folders as cm  # noqa: E402

CONFIG = """as_of: 2026-12-01
simulation: false
reports: [audit]
alerts:
  - metric: n_orphan_files
    above: 0
stores:
  mem: memory
"""


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cm-runs")
    mem = cm.build(folder / "memory")
    (folder / "reports.yaml").write_text(CONFIG)
    root = folder / "reports"
    codes = []
    for n, date in enumerate(("2026-12-01", "2026-12-02")):
        if n == 1:
            (mem / "project_new.md").write_text(cm.topic("new", "no index line", "project", "x"))
            with open(mem / "user_role.md", "a") as fh:
                fh.write("They moved to the payments team.\n")
            (mem / "reference_dashboards.md").unlink()
        with contextlib.redirect_stdout(io.StringIO()):
            codes.append(main(["-q", "report", "all", "--config", str(folder / "reports.yaml"),
                               "--out", str(root / date), "--fail-on-alert"]))
    return root, codes


def test_the_run_index_shows_files_added_changed_and_removed(two_runs):
    root, codes = two_runs
    first = json.loads((root / "2026-12-01" / "runs.json").read_text())
    second = json.loads((root / "2026-12-02" / "runs.json").read_text())
    files_1, files_2 = first["stores"]["mem"]["files"], second["stores"]["mem"]["files"]
    assert set(files_1) == {"MEMORY.md", *cm.TOPICS}
    assert set(files_2) - set(files_1) == {"project_new.md"}
    assert set(files_1) - set(files_2) == {"reference_dashboards.md"}
    assert files_1["user_role.md"] != files_2["user_role.md"]
    assert files_1["MEMORY.md"] == files_2["MEMORY.md"]  # the index itself did not change
    page = (root / "index.html").read_text()
    since = page[page.index('id="since"'):]
    assert "memory files added: 1" in since and "project_new.md" in since
    assert "memory files changed: 1" in since and "user_role.md" in since
    assert "memory files removed: 1" in since and "reference_dashboards.md" in since
    # the new file is an orphan and the removed one leaves a dangling line: findings appeared
    assert "orphan_files: project_new.md" in since
    assert "dangling_index_lines: " in since and "reference_dashboards.md" in since


def test_the_audit_metrics_and_an_alert_on_them(two_runs):
    root, codes = two_runs
    assert codes == [0, 3]  # --fail-on-alert: exit 3 when the second run's orphan fires
    second = json.loads((root / "2026-12-02" / "runs.json").read_text())
    fired = [a for a in second["alerts"] if a.get("fired")]
    assert [a["metric"] for a in fired] == ["n_orphan_files"]
    metrics = json.loads((root / "2026-12-02" / "mem" / "audit" / "metrics.json").read_text())
    (headline,) = metrics.values() if "mem" not in metrics else [metrics["mem"]]
    assert headline["n_orphan_files"] == 1 and headline["n_dangling_index_lines"] == 1


def test_the_recorded_state_and_its_negative_controls(tmp_path):
    from memlab.report._index import _files_since

    mem = cm.build(tmp_path / "memory")
    kind = kinds.get("claude_memory")
    state = kind.state(memlab.load(mem))
    assert set(state) == {"MEMORY.md", *cm.TOPICS}
    assert state == kind.state(memlab.load(mem))  # same folder, same record
    # an mtime alone is no change; one byte is
    (mem / "user_role.md").touch()
    assert kind.state(memlab.load(mem)) == state
    assert "memory files: no change (5 now)" in _files_since(state, state)
    assert "not recorded in the previous run" in _files_since(None, state)
    assert _files_since(state, None) == ""  # a kind that records nothing shows nothing
    # kinds with their own history record nothing
    assert kinds.get("letta_memfs").state(None) is None


def test_the_fleet_lake_has_a_row_per_memory_folder(tmp_path):
    fleet = tmp_path / "fleet"
    cm.build(fleet / "a" / "memory")
    cm.build(fleet / "b" / "memory", index_extra=["- [gone](feedback_gone.md)"])
    result = memlab.fleet([fleet], out=tmp_path / "lake", workers=0, progress=False)
    rows = result.headline()
    rows = rows[rows["store_kind"].astype(str) == "claude_memory"].sort_values("store_path")
    assert list(rows["n_dangling_index_lines"]) == [0, 1]
    assert list(rows["n_topic_files"]) == [4, 4]
