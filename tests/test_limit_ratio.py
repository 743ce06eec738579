"""One limit ratio, one definition: the fleet's ``limit_ratio`` is every kind's
``max_limit_ratio``, the largest chars / limit of any block or file with a limit, under its limit
or over it (:func:`memlab._metrics.max_limit_ratio`).

Before, the fleet took a memfs repository's ``max_limit_ratio`` (every file with a limit) but an
Agent File's ``max_over_limit_ratio`` (blocks over their limit only), so an Agent File whose
blocks all fit gave null where a memfs repository in the same state gave 0.6, and a Letta
server database gave null always. Expected values are read from the samples' own JSON and
SQLite with the standard library, not through memlab's loaders.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from run_records import write_audit_run

import memlab
from memlab._metrics import METRICS, max_limit_ratio
from memlab.constants import MAX_VALUE_BYTES
from memlab.lake import fleet_metrics
from memlab.sources._bundle import unpack_bundle

AS_OF = "2026-08-04"


def _raw_ratio(path: Path) -> float:
    """max len(value) / limit over the blocks of an Agent File's JSON (either schema)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    blocks = doc.get("blocks") or doc.get("core_memory")
    return max(len(b["value"]) / b["limit"] for b in blocks if (b.get("limit") or 0) > 0)


def _without_limits(src: Path, dest: Path) -> Path:
    doc = json.loads(src.read_text(encoding="utf-8"))
    for block in doc["core_memory"]:
        del block["limit"]
    dest.write_text(json.dumps(doc), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def lake(data_dir, tmp_path_factory):
    """A fleet of real samples: an Agent File whose blocks all fit (deep-thought), one with
    blocks over their limits (ezra), a Letta server database, the memfs bundle, the elfmem demo
    (no limits) and deep-thought with every limit taken out."""
    root = tmp_path_factory.mktemp("lratio") / "fleet"
    root.mkdir()
    af = data_dir / "samples" / "letta-af"
    for name in ("deep-thought.af", "ezra.af"):
        shutil.copy2(af / name, root / name)
    _without_limits(af / "deep-thought.af", root / "no-limits.af")
    shutil.copy2(data_dir / "samples" / "letta-server" / "letta-0.11.7.db", root / "server.db")
    shutil.copy2(data_dir / "demo" / "elfmem-demo.db", root / "demo.db")
    memfs = unpack_bundle(data_dir / "samples" / "memfs" / "deep-research-memfs.bundle", root)
    result = memlab.fleet([root], out=root.parent / "lake", workers=0, as_of=AS_OF,
                          progress=False)
    assert result.counts["failed"] == 0
    head = result.headline()
    figures = fleet_metrics(head).set_index("store")
    return root, memfs, head.set_index("store"), figures


def test_limit_ratio_reads_one_name(lake):
    assert METRICS["limit_ratio"].formula.names == ("max_limit_ratio",)


def test_an_agent_file_whose_blocks_fit_has_a_limit_ratio_below_1(lake, data_dir):
    root, _, head, figures = lake
    want = _raw_ratio(data_dir / "samples" / "letta-af" / "deep-thought.af")
    assert want == pytest.approx(3174 / 5000)  # persona: 3,174 of 5,000 chars
    row = head.loc["deep-thought.af"]
    assert row["n_blocks_over_limit"] == 0
    assert row["max_limit_ratio"] == pytest.approx(want, rel=1e-12)
    assert figures.loc["deep-thought.af", "limit_ratio"] == pytest.approx(want, rel=1e-12)
    assert want < 1


def test_an_agent_file_over_its_limits_has_its_most_over_blocks_ratio(lake, data_dir):
    _, _, head, figures = lake
    want = _raw_ratio(data_dir / "samples" / "letta-af" / "ezra.af")
    row = head.loc["ezra.af"]
    assert row["n_blocks_over_limit"] == 3
    assert row["max_limit_ratio"] == pytest.approx(want, rel=1e-12)
    assert want > 1
    # the retired second "limit ratio" (over-limit blocks only) is in no store's headline
    assert "max_over_limit_ratio" not in head.columns
    assert figures.loc["ezra.af", "limit_ratio"] == pytest.approx(want, rel=1e-12)


def test_a_letta_server_database_reports_its_blocks_limit_ratio(lake):
    root, _, head, figures = lake
    con = sqlite3.connect(f"file:{root / 'server.db'}?mode=ro", uri=True)
    try:
        (want,) = con.execute(
            'SELECT max(length(value) * 1.0 / "limit") FROM block '
            'WHERE "limit" > 0 AND NOT is_deleted'
        ).fetchone()
    finally:
        con.close()
    assert 0 < want < 1
    assert head.loc["server.db", "max_limit_ratio"] == pytest.approx(want, rel=1e-12)
    assert figures.loc["server.db", "limit_ratio"] == pytest.approx(want, rel=1e-12)


def test_a_memfs_repository_is_unchanged(lake):
    _, memfs, head, figures = lake
    audit = memlab.audit(memfs, as_of=AS_OF)
    over = audit.tables["over_limit"]
    # one reference file grown past its limit (data/samples/memfs/SOURCES.md); 1.7564 before
    assert len(over) == 1 and over["ratio"].iloc[0] == pytest.approx(1.7564)
    assert head.loc[memfs.name, "max_limit_ratio"] == over["ratio"].iloc[0]
    assert figures.loc[memfs.name, "limit_ratio"] == over["ratio"].iloc[0]


def test_nothing_with_a_limit_is_null_never_0(lake):
    _, _, head, figures = lake
    # the elfmem demo has no limits at all; deep-thought without its limits checks none
    assert pd.isna(figures.loc["demo.db", "limit_ratio"])
    row = head.loc["no-limits.af"]
    assert row["n_blocks_without_limit"] == 5 and pd.isna(row["max_limit_ratio"])
    assert pd.isna(figures.loc["no-limits.af", "limit_ratio"])


def test_every_kind_that_checks_limits_reports_the_ratio(lake):
    _, memfs, head, _ = lake
    checks = head["n_blocks_over_limit"].notna() | head["over_limit_files"].notna()
    assert set(head.index[checks]) == {"deep-thought.af", "ezra.af", "no-limits.af",
                                       "server.db", memfs.name}
    # each has blocks or files with a limit but no-limits.af: a number, not "not checked"
    assert head.loc[head.index[checks].drop("no-limits.af"), "max_limit_ratio"].notna().all()


def test_a_limit_of_0_is_left_out_not_a_ratio(data_dir, tmp_path):
    doc = json.loads((data_dir / "samples" / "letta-af" / "deep-thought.af").read_text())
    persona = next(b for b in doc["core_memory"] if b["label"] == "persona")
    persona["limit"] = 0  # a bad_field problem; nothing fits it, a ratio to it means nothing
    path = tmp_path / "zero.af"
    path.write_text(json.dumps(doc), encoding="utf-8")
    a = memlab.audit(path)
    assert (a.tables["problems"]["kind"] == "bad_field").any()
    assert a.headline["max_limit_ratio"] == pytest.approx(798 / 10000)  # knowledge, next
    assert math.isfinite(a.headline["max_limit_ratio"])


def test_a_value_not_read_makes_the_ratio_unknown_not_smaller(data_dir, tmp_path):
    doc = json.loads((data_dir / "samples" / "letta-af" / "deep_research_agent.af").read_text())
    doc["blocks"][0]["value"] = "x" * (MAX_VALUE_BYTES + 5)  # past memlab's cap: not read
    path = tmp_path / "huge.af"
    path.write_text(json.dumps(doc), encoding="utf-8")
    a = memlab.audit(path)
    assert a.headline["n_values_not_read"] == 1
    assert a.headline["max_limit_ratio"] is None


def test_the_helper_leaves_out_what_has_no_limit_and_nulls_an_unknown_count():
    chars = pd.Series([10, 30, pd.NA, 5], dtype="Int64")
    limits = pd.Series([20, 20, pd.NA, 0], dtype="Int64")
    # the unknown count has no limit, the 0 limit is left out: 30 / 20
    assert max_limit_ratio(chars, limits) == 1.5
    assert max_limit_ratio(chars, pd.Series([pd.NA] * 4, dtype="Int64")) is None
    assert max_limit_ratio(pd.Series([pd.NA, 1], dtype="Int64"),
                           pd.Series([5, 5], dtype="Int64")) is None


# --- the Agent File headline: one limit ratio, from the samples' raw JSON ----------------------

AF_SAMPLES = ("customer_service.af", "deep-thought.af", "deep_research_agent.af", "ezra.af")


def _raw_doc(path: Path) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return json.loads(doc) if isinstance(doc, str) else doc  # double-encoded, as Letta wrote it


def _raw_headline(path: Path) -> dict:
    """The Agent File headline's figures from the JSON alone (standard library, no memlab)."""
    doc = _raw_doc(path)
    if "core_memory" in doc:  # the 0.6.x schema: one agent, its blocks inline
        blocks = doc["core_memory"]
        agents = [(doc.get("system") or "", blocks, (doc.get("llm_config") or {}))]
    else:
        blocks = doc["blocks"]
        by_id = {b["id"]: b for b in blocks}
        agents = [(a.get("system") or "", [by_id[i] for i in a.get("block_ids", [])],
                   a.get("llm_config") or {}) for a in doc["agents"]]
    tokens = [(len(system) + sum(len(b["value"]) for b in held)) / 4
              for system, held, _ in agents]
    shares = [t / cfg["context_window"] for t, (_, _, cfg) in zip(tokens, agents)
              if cfg.get("context_window")]
    limited = [b for b in blocks if b.get("limit") is not None]
    return {
        "max_prompt_tokens_est": max(tokens),
        "max_context_share": max(shares) if shares else None,
        "max_limit_ratio": max(len(b["value"]) / b["limit"] for b in limited if b["limit"] > 0),
        "n_blocks_over_limit": sum(len(b["value"]) > b["limit"] for b in limited),
        # what the retired max_over_limit_ratio was: blocks over their limit only
        "over_only": max((len(b["value"]) / b["limit"] for b in limited
                          if len(b["value"]) > b["limit"] > 0), default=None),
    }


@pytest.mark.parametrize("name", AF_SAMPLES)
def test_the_agent_file_headline_is_its_raw_jsons_figures(name, data_dir):
    from memlab.kinds._shared import AGENT_FILE_HEADLINE

    path = data_dir / "samples" / "letta-af" / name
    want = _raw_headline(path)
    headline = json.loads(memlab.audit(path).to_json())["headline"]
    charted = [m for m in AGENT_FILE_HEADLINE if m not in ("review.choices", "problems")]
    assert charted == ["max_prompt_tokens_est", "max_context_share", "max_limit_ratio",
                       "n_blocks_over_limit"]
    for metric in charted:
        assert headline[metric] == pytest.approx(want[metric], rel=1e-12), (name, metric)
    assert "max_over_limit_ratio" not in headline
    # over 1 exactly when a block is over its limit, and then the old over-only figure
    if want["n_blocks_over_limit"]:
        assert headline["max_limit_ratio"] == pytest.approx(want["over_only"], rel=1e-12)
        assert headline["max_limit_ratio"] > 1
    else:
        assert want["over_only"] is None and headline["max_limit_ratio"] <= 1


def test_the_raw_samples_hold_both_cases():
    # a control on the parametrised test: the samples have a file over its limits and files
    # within them (else "over 1 exactly when ..." would be checked on one side only)
    data = Path(__file__).resolve().parents[1] / "data" / "samples" / "letta-af"
    over = {n: _raw_headline(data / n)["n_blocks_over_limit"] for n in AF_SAMPLES}
    assert over == {"customer_service.af": 0, "deep-thought.af": 0,
                    "deep_research_agent.af": 0, "ezra.af": 3}


def test_no_kind_charts_a_retired_metric_and_the_agent_file_charts_the_memfs_ratio():
    from memlab._metrics import RETIRED
    from memlab.report._runs import HEADLINE_METRICS

    assert "max_over_limit_ratio" in RETIRED and "max_over_limit_ratio" not in METRICS
    for kind, names in HEADLINE_METRICS.items():
        assert not set(names) & set(RETIRED), kind
    assert "max_limit_ratio" in HEADLINE_METRICS["agent_file"]
    assert "max_limit_ratio" in HEADLINE_METRICS["letta_memfs"]


# --- an older run, written before max_limit_ratio was the Agent File's headline ---------------


def test_an_older_run_without_max_limit_ratio_reads_as_not_recorded_never_0(data_dir, tmp_path):
    from memlab.report import write_metrics
    from memlab.report._index import index_page
    from memlab.report._runs import HEADLINE_METRICS, read_runs, reports_of, store_metrics

    path = data_dir / "samples" / "letta-af" / "customer_service.af"
    want = _raw_headline(path)["max_limit_ratio"]
    assert 0 < want < 1  # 398 / 20,000
    now = json.loads(memlab.audit(path).to_json())["headline"]
    # what the audit wrote before: the over-only ratio (null: no block over its limit), no
    # max_limit_ratio, and the headline that charted it
    old = {k: v for k, v in now.items() if k != "max_limit_ratio"}
    old["max_over_limit_ratio"] = None
    old_headline = [("max_over_limit_ratio" if m == "max_limit_ratio" else m)
                    for m in HEADLINE_METRICS["agent_file"]]
    for folder, metrics in (("old", old), ("new", now)):
        write_metrics(tmp_path / folder, {path.name: metrics})  # as the audit notebook does
    runs_root = tmp_path / "runs"
    write_audit_run(runs_root, "2026-11-30", old_headline,
                    json.loads((tmp_path / "old" / "metrics.json").read_text()), store="cs")
    write_audit_run(runs_root, "2026-12-01", list(HEADLINE_METRICS["agent_file"]),
                    json.loads((tmp_path / "new" / "metrics.json").read_text()), store="cs")

    runs = read_runs(runs_root)
    before, after = (store_metrics(reports_of(r, "cs")) for _, r in runs)
    assert "max_limit_ratio" not in before  # absent, not filled with 0
    assert before["max_over_limit_ratio"] is None  # the old file's own null still reads
    assert after["max_limit_ratio"] == pytest.approx(want, rel=1e-12)

    page = index_page(runs)
    since = page[page.index('id="since"'):page.index('id="runs"')]
    row = re.search(r">max_limit_ratio</td>(.*?)</tr>", since).group(1)
    cells = re.findall(r'<td class="n">(.*?)</td>', row)
    assert cells[0] == "–" and cells[1] == f"{want:,.4g}"
    assert "not recorded in the previous run" in row and ">0<" not in row
    trends = page[page.index('id="trends"'):]
    row = re.search(r"<code>max_limit_ratio</code>(.*?)</tr>", trends).group(1)
    assert "– <span class=\"why\">not in this run</span>" in row and f"{want:,.4g}" in row
    # the retired name is charted by no run's headline now, and says what it was where shown
    assert "<code>max_over_limit_ratio</code>" not in trends
    from memlab._metrics import definition

    assert definition("max_over_limit_ratio").startswith("retired")


def test_an_alert_on_the_retired_name_says_what_to_read_instead():
    from memlab.report._runs import evaluate_alerts, parse_alerts

    rules = parse_alerts([{"metric": "max_over_limit_ratio", "above": 1},
                          {"metric": "max_limit_ratio", "above": 1}])
    now = {"ezra": {"max_limit_ratio": 4.4854, "n_blocks_over_limit": 3}}
    retired, current = evaluate_alerts(rules, now, {"ezra": None})
    assert not retired.fired and "retired" in retired.reason and "max_limit_ratio" in retired.reason
    assert current.fired and current.reason is None
    # a name that never existed keeps its own reason (control)
    (typo,) = evaluate_alerts(parse_alerts([{"metric": "max_limt_ratio", "above": 1}]), now, {})
    assert typo.reason == "no store in this run has this metric"


def test_blocks_over_limit_is_one_rule_in_an_agent_file_and_a_letta_server(data_dir, tmp_path):
    """Letta refuses a value longer than its limit, whatever the limit: the Agent File audit
    counted a block with a limit of 0 as over it, the Letta server audit did not. Expected
    counts from SQLite and the JSON themselves."""
    db = tmp_path / "server.db"
    shutil.copy2(data_dir / "samples" / "letta-server" / "letta-0.11.7.db", db)
    with sqlite3.connect(db) as con:
        (label,) = con.execute("SELECT label FROM block WHERE NOT is_deleted AND length(value) > 0 "
                               "ORDER BY id LIMIT 1").fetchone()
        con.execute('UPDATE block SET "limit" = 0 WHERE label = ? AND NOT is_deleted', (label,))
        (over,) = con.execute('SELECT count(*) FROM block WHERE NOT is_deleted AND "limit" IS NOT '
                              'NULL AND length(value) > "limit"').fetchone()
        (ratio,) = con.execute('SELECT max(length(value) * 1.0 / "limit") FROM block '
                               'WHERE NOT is_deleted AND "limit" > 0').fetchone()
    con.close()
    assert over == 1  # the block given a limit of 0, and no other
    a = memlab.audit(db)
    assert a.headline["n_blocks_over_limit"] == over
    assert a.tables["blocks_over_limit"]["label"].tolist() == [label]
    assert a.headline["max_limit_ratio"] == pytest.approx(ratio, rel=1e-12)  # the 0 left out
    assert ratio < 1

    doc = json.loads((data_dir / "samples" / "letta-af" / "deep-thought.af").read_text())
    block = next(b for b in doc["core_memory"] if b["value"])
    block["limit"] = 0
    af = tmp_path / "zero.af"
    af.write_text(json.dumps(doc), encoding="utf-8")
    want = sum(b.get("limit") is not None and len(b["value"]) > b["limit"]
               for b in doc["core_memory"])
    assert want == 1 and memlab.audit(af).headline["n_blocks_over_limit"] == want
