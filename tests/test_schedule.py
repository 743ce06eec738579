"""`memlab report all`: every fitting report per store, an index, trends across dated runs."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from memlab.errors import ReportError, StoreNotFound
from memlab.report.schedule import load_config, report_all


def _config(folder, text):
    path = folder / "stores.yaml"
    path.write_text(text)
    return path


def test_paths_resolve_against_the_config_file(tmp_path, data_dir):
    shutil.copy(data_dir / "demo/elfmem-demo.db", tmp_path / "demo.db")
    config = load_config(_config(tmp_path, "stores:\n  demo: demo.db\n"))
    assert config["stores"]["demo"] == (tmp_path / "demo.db").resolve()


@pytest.mark.parametrize("text, message", [
    ("as_of: 2026-08-04\n", "stores"),
    ("stores:\n  ../escape: x.db\n", "store name"),
    ("stores: [unclosed\n", "YAML"),
])
def test_bad_configs_are_refused_by_name(tmp_path, text, message):
    with pytest.raises(ReportError, match=message) as info:
        load_config(_config(tmp_path, text))
    assert "stores.yaml" in str(info.value)


def test_missing_config(tmp_path):
    with pytest.raises(StoreNotFound):
        load_config(tmp_path / "absent.yaml")


@pytest.mark.slow
def test_two_dated_runs_show_what_changed_the_alert_and_the_trends():
    from report_runs import FIRST, SECOND, active_blocks, shared_two_runs

    from memlab.report._runs import HEADLINE_METRICS

    runs = shared_two_runs()
    assert active_blocks(runs.db) == 37  # 43 before the change, counted by SQLite
    # The first run has nothing to compare with: no alert fires, exit 0. The second: the
    # database lost 6 active blocks (> 2) and the agent file has a block over its limit.
    assert runs.codes == (0, 3)
    assert "ALERT" not in runs.outputs[0]
    assert "ALERT db: blocks_active changed by more than 2: 43 -> 37 (-6)" in runs.outputs[1]
    assert "ALERT cs: n_blocks_over_limit above 0: 1" in runs.outputs[1]
    assert "input_per_corpus_token" not in runs.outputs[1]  # checked, did not fire: not printed

    index = (runs.root / "index.html").read_text()
    top = index[:index.index('id="runs"')]  # everything above the list of runs
    assert "Alerts · " + SECOND in top
    assert "ALERT db: blocks_active changed by more than 2: 43 -&gt; 37 (-6)" in top
    # since the last run: the metric, then and now, and the change
    assert re.search(r"<td[^>]*>blocks_active</td><td class=\"n\">43</td><td class=\"n\">37"
                     r"</td><td class=\"n\"><span class=\"down\">-6</span>", top)
    # 1 block archived before (forgotten), 7 after of which 6 superseded: 0 -> 6/7
    assert re.search(r">supersession_share</td><td class=\"n\">0</td><td class=\"n\">0.8571<", top)
    # the agent file's limit ratio, from its JSON: every block within its limit before, the
    # human block over the limit of 100 it was given after
    from report_runs import DATA

    ratios = [_raw_limit_ratio(f) for f in (DATA / "samples/letta-af/customer_service.af", runs.af)]
    assert ratios[0] < 1 < ratios[1]
    row = re.search(r">max_limit_ratio</td>(.*?)</tr>", top).group(1)
    assert re.findall(r'<td class="n">(.*?)</td>', row)[:2] == [f"{r:,.4g}" for r in ratios]
    assert "audit findings appeared: 1" in top and "blocks_over_limit: block-2 · human" in top
    assert "store changed (new digest)" in top
    assert top.count("review choices") >= 2  # each store says what its review choices did

    # every run listed, the latest marked, and the same in runs.json
    listing = json.loads((runs.root / "runs.json").read_text())
    assert [r["date"] for r in listing["runs"]] == [FIRST, SECOND] and listing["latest"] == SECOND
    assert listing["runs"][1]["alerts_fired"] == 2 and listing["runs"][0]["alerts_fired"] == 0
    assert listing["runs"][0]["stores"]["db"]["digest"] != listing["runs"][1]["stores"]["db"]["digest"]
    assert f'href="{FIRST}/index.html"' in index and f'href="{SECOND}/index.html"' in index
    assert "latest</strong>" in index

    # the trend chart and table show the default headline metrics the store has
    trends = index[index.index('id="trends"'):]
    record = json.loads((runs.root / SECOND / "runs.json").read_text())
    expected = [m for m in HEADLINE_METRICS["elfmem_db"] if m in _metric_names(record, "db")]
    assert len(expected) >= 8  # all but a metric this schema lacks
    header = re.search(r"<h3>db</h3><img alt=\"db: trend of ([^\"]+)\"", trends)
    assert header and header.group(1).split(", ") == expected
    assert trends.count("data:image/png;base64") == 2  # one chart per store

    # the run's own page links its reports, which exist
    page = (runs.root / SECOND / "index.html").read_text()
    for link in ("db/audit/01-audit.html", "db/review/05-review.html", "cs/audit/01-audit.html"):
        assert f'href="{link}"' in page and (runs.root / SECOND / link).exists()
    where = str(runs.root.parent)
    assert where not in index and where not in page  # no machine paths


def _raw_limit_ratio(path) -> float:
    """The largest len(value) / limit of a double-encoded Agent File's blocks (stdlib only)."""
    doc = json.loads(json.loads(path.read_text()))
    return max(len(b["value"]) / b["limit"] for b in doc["blocks"] if (b.get("limit") or 0) > 0)


def _metric_names(record, store):
    from memlab.report._runs import reports_of, store_metrics

    return store_metrics(reports_of(record, store))


@pytest.mark.slow
def test_a_failing_store_is_shown_and_the_run_fails(tmp_path, data_dir):
    (tmp_path / "broken.db").write_text("not a database")
    config = _config(tmp_path, "simulation: false\nstores:\n  broken: broken.db\n")
    with pytest.raises(ReportError, match="1 of 1"):
        report_all(config, out=tmp_path / "out")
    page = (tmp_path / "out" / "index.html").read_text()
    assert "broken.db" in page and str(tmp_path) not in page
