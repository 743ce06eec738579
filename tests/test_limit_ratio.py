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
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

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
    assert pd.isna(row["max_over_limit_ratio"])  # kept: blocks over their limit only
    assert row["max_limit_ratio"] == pytest.approx(want, rel=1e-12)
    assert figures.loc["deep-thought.af", "limit_ratio"] == pytest.approx(want, rel=1e-12)
    assert want < 1


def test_an_agent_file_over_its_limits_has_the_over_limit_ratio(lake, data_dir):
    _, _, head, figures = lake
    want = _raw_ratio(data_dir / "samples" / "letta-af" / "ezra.af")
    row = head.loc["ezra.af"]
    assert row["n_blocks_over_limit"] == 3
    assert row["max_limit_ratio"] == row["max_over_limit_ratio"] == pytest.approx(want)
    assert want > 1
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
