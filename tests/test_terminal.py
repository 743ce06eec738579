"""What a person reads in a 100-column terminal: comparisons, JSON rows, migration summaries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlab._terminal import FLAG_MEANINGS, comparison_text

REPO = Path(__file__).resolve().parents[1]
STORES = [REPO / "data/demo/elfmem-demo.db", REPO / "data/samples/elfmem/elfmem-0.19.2-schema5.db",
          REPO / "data/samples/elfmem/elfmem-0.20.0-schema9.db"]


def _memlab(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "memlab", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


def test_audit_of_three_stores_is_metric_rows_by_store_columns_within_100_columns():
    run = _memlab("audit", *map(str, STORES), "--as-of", "2026-08-04")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert lines[0].split() == ["elfmem-demo.db", "elfmem-0.19.2-schema5.…",
                                "elfmem-0.20.0-schema9.…"]
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("  ")}
    # the doc's evidence, one row per metric, one column per store (values from each audit)
    assert rows["llm_calls"] == ["2,903", "82", "43"]
    assert rows["archived_superseded"] == ["41", "3", "0"]
    assert rows["schema_version"] == ["5", "5", "9"]
    groups = [line for line in lines if line and not line.startswith(" ") and line != lines[0]]
    assert groups[:4] == ["path" + groups[0][4:], "store", "cost", "blocks"]
    assert {"archival", "decay clock", "constitution", "graph and tags"} <= set(groups)


def test_audit_json_rows_carry_the_store_name():
    run = _memlab("audit", *map(str, STORES[:2]), "--as-of", "2026-08-04", "--json")
    rows = json.loads(run.stdout)
    assert [r["store"] for r in rows] == ["elfmem-demo.db", "elfmem-0.19.2-schema5.db"]
    assert rows[0]["llm_calls"] == 2903


def test_many_stores_wrap_into_blocks_instead_of_overflowing():
    import pandas as pd

    frame = pd.DataFrame({"llm_calls": range(9), "kind": ["elfmem_db"] * 9},
                         index=pd.Index([f"store-{i}" for i in range(9)], name="store"))
    text = comparison_text(frame, width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    heads = [line.split() for line in text.splitlines() if line.startswith(" " * 8)]
    assert sum(len(h) for h in heads) == 9 and len(heads) > 1  # every store, in blocks


@pytest.mark.slow
def test_migration_summary_explains_every_flag_and_repr_is_one_line(tmp_path):
    import memlab

    result = memlab.migrate(REPO / "data/samples/letta-af/ezra.af", tmp_path / "ezra",
                            retrieval=False)
    text = str(result)
    kinds = result.flags["kind"].astype(str).value_counts()
    assert f"flagged {len(result.flags)} item(s)" in text
    for kind, n in kinds.items():
        line = next(ln for ln in text.splitlines() if f" {kind} " in ln)
        assert line.split()[0] == str(n) and FLAG_MEANINGS[kind] in line
        assert len(line) <= 100
    one = repr(result)
    assert "\n" not in one and len(one) < 200
    assert one.startswith("<MigrationResult ezra.af -> ") and "parity ok>" in one
    assert f"{len(result.flags)} flags" in one


def test_every_flag_kind_the_migration_raises_has_a_meaning():
    import re

    raised = set()
    # the migrations engine and every kind's planner (formatted, an append may span lines)
    for path in (REPO / "memlab").rglob("*.py"):
        raised |= set(re.findall(r'flags\.append\(\s*\{\s*"kind":\s*"(\w+)"', path.read_text()))
    assert len(raised) >= 10
    assert raised <= set(FLAG_MEANINGS), raised - set(FLAG_MEANINGS)


def test_report_parameters_keep_their_types_and_dates_stay_text():
    from memlab.cli import _parse_params

    assert _parse_params(["as_of=2026-11-30", "growth=2", "retrieval=false", "scenarios=[S1, S3]"]) \
        == {"as_of": "2026-11-30", "growth": 2, "retrieval": False, "scenarios": ["S1", "S3"]}


def test_one_store_audit_fits_100_columns_and_keeps_every_word():
    run = _memlab("audit", str(STORES[0]), "--as-of", "2026-08-04")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    import memlab

    summary = memlab.audit(STORES[0], as_of="2026-08-04").summary()
    assert run.stdout.split() == summary.split()  # wrapped, not cut


def test_inspect_prints_each_problem_whole_within_100_columns():
    import memlab

    path = REPO / "data/samples/letta-af/ezra.af"
    problems = memlab.load(path).problems
    run = _memlab("inspect", str(path))
    assert run.returncode == 0, run.stderr
    assert max(len(line) for line in run.stdout.splitlines()) <= 100
    text = " ".join(run.stdout.split())
    for row in problems.itertuples(index=False):
        assert f"{row.kind} {path}: {' '.join(str(row.message).split())}" in text


def test_reprs_are_one_short_line():
    import memlab

    audit = memlab.audit(STORES[0], as_of="2026-08-04")
    one = repr(audit)
    assert "\n" not in one and len(one) < 200
    assert one.startswith(f"<Audit elfmem_db elfmem-demo.db: {len(audit.tables)} tables (")
    assert f"{len(audit.headline)} headline metrics" in one
    from memlab.report import ExecutedReport

    rep = ExecutedReport("audit", Path("/r/01-audit.ipynb"), Path("/r/01-audit.html"),
                         {"demo.db": audit.headline})
    assert repr(rep) == "<ExecutedReport audit: /r/01-audit.html (1 metrics)>"
