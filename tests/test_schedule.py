"""`memlab report all`: every fitting report per store, an index, trends across dated runs."""

from __future__ import annotations

import json
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
def test_report_all_writes_every_report_and_a_trend_index(tmp_path, data_dir):
    shutil.copy(data_dir / "demo/elfmem-demo.db", tmp_path / "demo.db")
    config = _config(tmp_path, "as_of: 2026-08-04\nsimulation: false\nstores:\n  demo: demo.db\n")
    # Yesterday's run, as a cron job would have left it.
    earlier = tmp_path / "reports" / "2026-08-03"
    earlier.mkdir(parents=True)
    (earlier / "runs.json").write_text(json.dumps([{
        "store": "demo", "kind": "audit", "report": "audit", "html": "demo/audit/01-audit.html",
        "metrics": {"demo.db": {"llm_calls": 2800, "blocks_active": 138}}}]))

    index = report_all(config, out=tmp_path / "reports" / "2026-08-04")

    html = index.read_text()
    assert 'href="demo/audit/01-audit.html"' in html and 'href="demo/review/05-review.html"' in html
    assert (index.parent / "demo/audit/01-audit.html").exists()
    assert (index.parent / "demo/review/05-review.html").exists()
    assert "2026-08-03" in html and "2026-08-04" in html  # both runs in the trend table
    assert "data:image/png;base64" in html  # the trend chart, from the second dated run on
    runs = json.loads((index.parent / "runs.json").read_text())
    assert {r["report"] for r in runs} == {"audit", "review"}
    assert runs[0]["metrics"]["demo.db"]["llm_calls"] == 2903


@pytest.mark.slow
def test_a_failing_store_is_shown_and_the_run_fails(tmp_path, data_dir):
    (tmp_path / "broken.db").write_text("not a database")
    config = _config(tmp_path, "simulation: false\nstores:\n  broken: broken.db\n")
    with pytest.raises(ReportError, match="1 of 1"):
        report_all(config, out=tmp_path / "out")
    assert "broken.db" in (tmp_path / "out" / "index.html").read_text()
