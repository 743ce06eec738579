"""One metric, one meaning, one value (issue 33 item 3; issue 36 item 2).

The same metric name must hold the same value in the audit's JSON, in the run index (the
metrics a scheduled run reads back from a report's ``metrics.json``) and in the fleet lake
(its ``headline`` table and its fleet figures), for the demo and every bundled sample. Before
the metric records, ``supersession_share`` of the demo was 41/42 in the run index and 41/185
in the fleet lake.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pandas as pd
import pytest

import memlab
from memlab._metrics import FLEET, METRICS, Ratio, derive
from memlab.lake import fleet_metrics
from memlab.report import write_metrics
from memlab.report._runs import METRIC_DEFINITIONS, store_metrics

sys.path.insert(0, str(Path(__file__).parent))
import lake_fleet  # noqa: E402


def _same(a, b) -> bool:
    none_a = a is None or (isinstance(a, float) and math.isnan(a))
    none_b = b is None or (isinstance(b, float) and math.isnan(b))
    if none_a or none_b:
        return none_a and none_b
    return a == pytest.approx(b, rel=1e-12, abs=0)


@pytest.fixture(scope="module")
def outputs(data_dir, tmp_path_factory):
    """Per store path: (audit JSON headline, run-index metrics, lake headline row, fleet figures)."""
    root = lake_fleet.build(data_dir, tmp_path_factory.mktemp("metrics") / "fleet")
    lake = tmp_path_factory.mktemp("metrics-lake") / "lake"
    result = memlab.fleet([root], out=lake, workers=0, as_of=lake_fleet.AS_OF,
                          run_date=lake_fleet.RUN_DATE, progress=False)
    headline = result.headline()
    figures = fleet_metrics(headline)
    out = {}
    reports = tmp_path_factory.mktemp("metrics-reports")
    for i, row in enumerate(headline.to_dict("records")):
        path = row["store_path"]
        audit = json.loads(memlab.audit(path, as_of=lake_fleet.AS_OF).to_json())["headline"]
        folder = reports / str(i)
        folder.mkdir()
        # what the audit notebooks write, read back the way a scheduled run reads it
        write_metrics(folder, {Path(path).name: audit})
        index = store_metrics([{"report": "audit", "store": path,
                                "metrics": json.loads((folder / "metrics.json").read_text())}])
        fig = figures[figures["store_path"] == path].iloc[0].to_dict()
        out[path] = (audit, index, row, fig)
    return out


def test_the_demo_has_both_shares_each_under_its_own_name_in_every_output(outputs):
    demo = next(v for p, v in outputs.items() if p.endswith("/elfmem/demo.db"))
    audit, index, lake_row, fig = demo
    assert audit["archived_superseded"] == 41 and audit["blocks_archived"] == 42
    assert audit["blocks_ever"] == 185
    for where in (audit, index, lake_row, fig):
        assert where["supersession_share"] == pytest.approx(41 / 42)
        assert where["superseded_of_created"] == pytest.approx(41 / 185)
    assert METRICS["supersession_share"].doc_value == pytest.approx(41 / 42)


def test_every_metric_name_has_one_value_across_audit_json_run_index_and_lake(outputs):
    assert len(outputs) == 11  # the truncated database fails; 11 stores of 5 kinds
    compared = set()
    for path, (audit, index, lake_row, fig) in outputs.items():
        for name in METRICS:
            if name not in audit:
                continue
            compared.add(name)
            assert _same(index.get(name), audit[name]), (path, name, "run index")
            assert _same(lake_row.get(name), audit[name]), (path, name, "lake headline")
            if name in FLEET:
                assert _same(fig[name], audit[name]), (path, name, "fleet figure")
        # a fleet figure a store's audit names differently is its record's formula over the
        # audit's own fields, never a second definition
        for name in FLEET:
            m = METRICS[name]
            if name not in audit and m.formula is not None:
                assert _same(fig[name], m.formula.value(audit)), (path, name)
    # the comparison covered every kind's headline metrics, not a few
    assert {"supersession_share", "superseded_of_created", "calls_per_surviving_block",
            "input_per_corpus_token", "prompt_tokens", "max_limit_ratio",
            "n_blocks_over_limit", "prompt_chars"} <= compared


def test_each_ratio_in_the_audit_is_its_records_formula(outputs):
    n = 0
    for audit, *_ in outputs.values():
        for name, m in METRICS.items():
            if isinstance(m.formula, Ratio) and name in audit:
                assert _same(audit[name], m.formula.value(audit)), name
                n += 1
    assert n >= 5 * 3  # five ratios in each of the three elfmem databases


def test_an_older_metrics_json_gets_the_audits_formula_not_another():
    old = {"archived_superseded": 41, "blocks_archived": 42, "blocks_ever": 185}
    got = derive(old)
    assert got["supersession_share"] == pytest.approx(41 / 42)
    assert got["superseded_of_created"] == pytest.approx(41 / 185)
    # nothing archived: not computable (null), never 0
    assert derive({"archived_superseded": 0, "blocks_archived": 0})["supersession_share"] is None
    # a recorded value is kept, never recomputed
    assert derive({"supersession_share": 0.5, "archived_superseded": 41,
                   "blocks_archived": 42})["supersession_share"] == 0.5


def test_an_older_lake_without_the_column_gets_the_same_formula():
    old = pd.DataFrame({"store": ["a", "b"], "store_kind": ["elfmem_db"] * 2,
                        "store_path": ["a", "b"], "archived_superseded": [41, 0],
                        "blocks_archived": [42, 0], "blocks_ever": [185, 10]})
    fig = fleet_metrics(old)
    assert fig["supersession_share"].iloc[0] == pytest.approx(41 / 42)
    assert math.isnan(fig["supersession_share"].iloc[1])
    assert fig["superseded_of_created"].tolist() == pytest.approx([41 / 185, 0.0])


def test_the_index_and_the_records_share_every_definition():
    for name, m in METRICS.items():
        assert METRIC_DEFINITIONS[name] == m.definition
        assert m.definition and m.unit and m.group
        assert m.formula is not None or m.how, name


def test_every_kinds_headline_metric_is_a_record():
    from memlab.report._runs import HEADLINE_METRICS

    named = {n for names in HEADLINE_METRICS.values() for n in names}
    assert len(named) >= 15
    assert named - set(METRICS) == set()


def test_no_two_metrics_share_a_label_or_a_definition():
    from collections import Counter

    from memlab._metrics import RETIRED

    labels = Counter(m.label for m in METRICS.values())
    assert [label for label, n in labels.items() if n > 1] == []
    definitions = Counter(m.definition for m in METRICS.values())
    assert [d for d, n in definitions.items() if n > 1] == []
    # a label is the definition's lead-in where it has one
    assert METRICS["max_limit_ratio"].label == "limit ratio"
    assert METRICS["input_per_corpus_token"].label == "amplification"
    assert METRICS["blocks_active"].label == METRICS["blocks_active"].definition
    # a retired name is not a record, but still says what it was (an older run holds it)
    assert set(RETIRED).isdisjoint(METRICS)
    assert all(METRIC_DEFINITIONS[name] == text for name, text in RETIRED.items())


def test_the_label_check_catches_the_pair_it_was_written_for():
    # negative control: the two "limit ratio" records this check replaced would fail it
    from memlab._metrics import Metric

    old = Metric("max_over_limit_ratio", "limit ratio: most over-limit block's chars / its "
                 "limit", "×", "limits", how="max over blocks over their limit of chars / limit")
    assert old.label == METRICS["max_limit_ratio"].label
    # and a colon inside a parenthesis is not a lead-in
    assert Metric("x", "largest (null: none)", "u", "g", how="h").label == "largest (null: none)"


def test_a_report_panel_shows_a_recorded_metric_with_its_records_definition():
    # the review report's panel said "decisions a person would make" while the run index said
    # the record's "review choices a person would decide": one metric, two definitions
    from memlab.report._present import REPORT_HEADLINES

    recorded = 0
    for report, rows in REPORT_HEADLINES.items():
        for name, text in rows:
            if f"{report}.{name}" in METRICS:  # how the run index names a report's metric
                assert text == METRICS[f"{report}.{name}"].definition, (report, name)
                recorded += 1
    assert recorded >= 1
