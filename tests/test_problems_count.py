"""One count, one name: the rows of a store's problems frame are ``problems`` in every kind that
counts them. The Agent File, blocks list, Letta server and Claude Code memory audits called it
``n_problems`` while memfs, mem0 and Letta Code home audits called it ``problems``, so a fleet
or a run index comparing kinds showed two columns for one thing. ``n_problems`` is retired
(:data:`memlab._metrics.RETIRED`): an older ``metrics.json`` or lake holding it still reads,
under its own name with what it was, and ``problems`` is then not recorded (null), never 0.

Expected counts are pinned from the bundled samples themselves (ezra.af's one odd label is in
its raw JSON; the memfs bundle's four, the elfmem substrate's four and the Letta Code home's two
are listed in the test comments) and from copies damaged the way a real store is (an elfmem
database with text where elfmem writes times and numbers, a Letta server database with a
block's metadata that is not JSON, a mem0 history row with an unknown event, a Souveraine
repository with a binary file committed), so every kind is covered by at least one store whose
count is not 0. The elfmem database audit wrote no problems count at all until it gained
``problems`` too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from memfs_repos import PNG, SOUVERAINE, _t, _Writer, build_souveraine
from run_records import write_audit_run

import memlab
from memlab._metrics import METRICS, RETIRED, definition
from memlab.sources._bundle import unpack_bundle

EZRA = Path("samples") / "letta-af" / "ezra.af"


def _raw_doc(path: Path) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return json.loads(doc) if isinstance(doc, str) else doc  # double-encoded, as Letta wrote it


@pytest.fixture(scope="module")
def samples(data_dir, tmp_path_factory):
    """name -> (path, kind, problems the sample holds), one or more real stores of each kind
    whose audit counts its load problems."""
    tmp = tmp_path_factory.mktemp("problems")
    af = data_dir / "samples" / "letta-af"
    # ezra's blocks as a blocks list (the JSON GET /v1/agents/{id}/core-memory/blocks returns)
    blocks = tmp / "ezra-blocks.json"
    blocks.write_text(json.dumps(_raw_doc(af / "ezra.af")["blocks"]), encoding="utf-8")
    # a Claude Code memory folder with a symbolic link in it (not followed: one problem)
    linked = shutil.copytree(data_dir / "samples" / "claude-memory" / "recommendarr",
                             tmp / "recommendarr-linked")
    os.symlink("/etc/hostname", linked / "outside.md")
    home = tmp / "home" / ".letta"
    shutil.copytree(data_dir / "letta-home", home)
    memfs = data_dir / "samples" / "memfs"
    server = data_dir / "samples" / "letta-server"
    mem0 = data_dir / "samples" / "mem0"
    claude = data_dir / "samples" / "claude-memory"
    elfmem = data_dir / "samples" / "elfmem"
    # a copy of the schema 9 database with text where elfmem writes a time and a number: SQLite
    # keeps it, elfmem's reader meets it; one problem row per damaged column
    damaged = tmp / "elfmem-0.20.0-schema9-damaged.db"
    shutil.copyfile(elfmem / "elfmem-0.20.0-schema9.db", damaged)
    with sqlite3.connect(damaged) as con:
        ids = [r[0] for r in con.execute("SELECT id FROM blocks ORDER BY id LIMIT 2")]
        con.execute("UPDATE blocks SET created_at = 'yesterday' WHERE id = ?", (ids[0],))
        con.execute("UPDATE blocks SET confidence = 'high' WHERE id = ?", (ids[1],))
    con.close()
    # a copy of the Letta server database with a block's metadata that is not JSON: one problem
    letta_odd = tmp / "letta-0.11.7-badjson.db"
    shutil.copyfile(server / "letta-0.11.7.db", letta_odd)
    with sqlite3.connect(letta_odd) as con:
        con.execute("UPDATE block SET metadata_ = '{not json' "
                    "WHERE rowid = (SELECT min(rowid) FROM block)")
    con.close()
    # a copy of the mem0 2.2.1 store whose first history row (an ADD) names an event mem0 never
    # writes: that row, and its memory left with events but no ADD
    mem0_odd = shutil.copytree(mem0 / "2.2.1", tmp / "mem0-2.2.1-odd") / "history.db"
    with sqlite3.connect(mem0_odd) as con:
        con.execute("UPDATE history SET event = 'MERGE' "
                    "WHERE rowid = (SELECT min(rowid) FROM history)")
    con.close()
    # a Souveraine agent whose memory repository gained a committed binary file: one problem
    souv = build_souveraine(tmp / "souveraine")
    souv_png = build_souveraine(tmp / "souveraine-png")
    _Writer(souv_png.path / "memory").commit("memory write: system/avatar", SOUVERAINE,
                                             _t("2026-05-04"), files={"system/avatar.png": PNG})
    return {
        # block-86's label 'system//references/lettabot' (an empty path segment): one problem
        "ezra.af": (af / "ezra.af", "agent_file", 1),
        "deep-thought.af": (af / "deep-thought.af", "agent_file", 0),
        "customer_service.af": (af / "customer_service.af", "agent_file", 0),
        "ezra-blocks.json": (blocks, "letta_blocks", 1),
        "letta-0.11.7.db": (server / "letta-0.11.7.db", "letta_server", 0),
        "letta-0.11.7-nohistory.db": (server / "letta-0.11.7-nohistory.db", "letta_server", 0),
        "letta-0.11.7-badjson.db": (letta_odd, "letta_server", 1),
        # system/human.md's unknown key, research_citations.md's malformed YAML and its readers'
        # disagreement, profile.png a binary file (data/samples/memfs/SOURCES.md)
        "deep-research-memfs": (unpack_bundle(memfs / "deep-research-memfs.bundle", tmp),
                                "letta_memfs", 4),
        "letta-code-v2": (unpack_bundle(memfs / "letta-code-v2.bundle", tmp), "letta_memfs", 0),
        "mem0-0.1.90": (mem0 / "0.1.90" / "history.db", "mem0", 0),
        "mem0-2.2.1": (mem0 / "2.2.1" / "history.db", "mem0", 0),
        "mem0-2.2.1-odd": (mem0_odd, "mem0", 2),
        "openai-anthropic-bridge": (claude / "openai-anthropic-bridge", "claude_memory", 0),
        "recommendarr-linked": (linked, "claude_memory", 1),
        # a transcript row that is not JSON, and transcripts of an agent the home does not hold
        "letta-home": (home, "letta_home", 2),
        "elfmem-demo.db": (data_dir / "demo" / "elfmem-demo.db", "elfmem_db", 0),
        "elfmem-0.19.2-schema5.db": (elfmem / "elfmem-0.19.2-schema5.db", "elfmem_db", 0),
        "elfmem-0.20.0-schema9.db": (elfmem / "elfmem-0.20.0-schema9.db", "elfmem_db", 0),
        "elfmem-0.20.0-schema9-damaged.db": (damaged, "elfmem_db", 2),
        # not a git repository (a plain folder), and the mind block's three '##' headings
        # absorbed into its body (data/samples/elfmem-substrate/SOURCES.md)
        "elfmem-substrate": (data_dir / "samples" / "elfmem-substrate", "elfmem_substrate", 4),
        "souveraine": (souv.path, "souveraine", 0),
        "souveraine-png": (souv_png.path, "souveraine", 1),
    }


def test_ezras_one_problem_is_in_its_raw_json(data_dir):
    # the pinned count's source, read without memlab: the one label with an empty path segment
    doc = _raw_doc(data_dir / EZRA)
    odd = [b["id"] for b in doc["blocks"]
           if "//" in b["label"] or "\\" in b["label"] or b["label"] != b["label"].strip()]
    assert odd == ["block-86"]


def test_every_kinds_audit_names_the_problems_count_problems(samples):
    from memlab import kinds

    for name, (path, kind, want) in samples.items():
        store = memlab.load(path)
        assert store.kind == kind, name
        headline = json.loads(memlab.audit(store, as_of="2026-08-04").to_json())["headline"]
        assert "n_problems" not in headline, name
        # the record's definition: rows of the store's problems frame
        assert headline["problems"] == len(store.problems) == want, name
    # every kind is covered, each by at least one store with a problem (not 0 alone)
    every = set(kinds.by_kind("load_ref"))
    assert "elfmem_db" in every and "elfmem_substrate" in every
    assert {kind for _, kind, _ in samples.values()} == every
    assert {kind for _, kind, want in samples.values() if want} == every


def test_the_damaged_elfmem_databases_problems_name_its_damage(samples):
    # the rows counted: one per damaged column, each naming it; the undamaged original has none
    path, _, _ = samples["elfmem-0.20.0-schema9-damaged.db"]
    store = memlab.load(path)
    assert sorted(store.problems.message.str.split(":").str[0]) == [
        "blocks.confidence", "blocks.created_at"]
    assert set(store.problems.kind) == {"bad_value"} and set(store.problems.file) == {str(path)}
    assert memlab.load(samples["elfmem-0.20.0-schema9.db"][0]).problems.empty
    # and the Letta server copy's one row names the block whose metadata is not JSON
    path, _, _ = samples["letta-0.11.7-badjson.db"]
    problems = memlab.load(path).problems
    assert problems.kind.tolist() == ["bad_json"] and "block.metadata_" in problems.message[0]
    # and the mem0 copy's two: the unknown event, and its memory's events without an ADD
    problems = memlab.load(samples["mem0-2.2.1-odd"][0]).problems
    assert sorted(problems.kind) == ["no_add", "unknown_event"]


def test_no_kind_charts_the_retired_name_and_every_chart_of_problems_names_problems():
    from memlab.report._runs import HEADLINE_METRICS

    assert "n_problems" in RETIRED and "n_problems" not in METRICS
    assert [n for n, m in METRICS.items() if m.how == "rows of the store's problems frame"] == [
        "problems"]
    assert definition("n_problems").startswith("retired") and "problems" in RETIRED["n_problems"]
    for kind, names in HEADLINE_METRICS.items():
        assert not set(names) & set(RETIRED), kind
    charting = {k for k, names in HEADLINE_METRICS.items() if "problems" in names}
    assert charting == {"agent_file", "letta_blocks", "letta_memfs", "souveraine",
                        "elfmem_substrate", "mem0", "elfmem_db"}


# --- a fleet: one column, and a lake written before it --------------------------------------


@pytest.fixture(scope="module")
def lake(samples, tmp_path_factory):
    root = tmp_path_factory.mktemp("problems-lake")
    stores = [samples[n][0] for n in ("ezra.af", "letta-0.11.7.db", "deep-research-memfs")]
    memlab.export_parquet(stores, out=root / "lake", as_of="2026-08-04", run_date="2026-12-01")
    return root / "lake"


def test_a_fleet_of_kinds_has_one_problems_column(lake):
    from memlab.lake import read_lake

    head = read_lake(lake, "headline").set_index("store_kind")
    assert "n_problems" not in head.columns
    assert head["problems"].to_dict() == {"agent_file": 1, "letta_server": 0, "letta_memfs": 4}


def test_an_older_lake_reads_its_n_problems_under_that_name_and_problems_as_null(lake, tmp_path):
    from memlab.browse import build, metadata_path
    from memlab.lake import read_lake

    old = shutil.copytree(lake, tmp_path / "old")
    # what memlab wrote before: the Agent File and Letta server rows' count named n_problems
    parts = [p for k in ("agent_file", "letta_server")
             for p in (old / "headline" / f"store_kind={k}").rglob("*.parquet")]
    assert len(parts) == 2
    for part in parts:
        df = pd.read_parquet(part)
        df.rename(columns={"problems": "n_problems"}).to_parquet(part, index=False)
    head = read_lake(old, "headline").set_index("store_kind")
    # each row's own number under its own name; the other name null, never 0
    assert head.loc["agent_file", "n_problems"] == 1 and head.loc["letta_server", "n_problems"] == 0
    assert head.loc[["agent_file", "letta_server"], "problems"].isna().all()
    assert pd.isna(head.loc["letta_memfs", "n_problems"])
    assert head.loc["letta_memfs", "problems"] == 4
    # memlab browse describes the old column by what it was
    db = build([old], tmp_path / "out")
    meta = json.loads(metadata_path(db).read_text())["databases"]["memlab"]
    columns = meta["tables"]["headline"]["columns"]
    assert columns["n_problems"] == RETIRED["n_problems"]
    assert columns["problems"].startswith(METRICS["problems"].definition)
    con = sqlite3.connect(db)
    rows = dict(con.execute("select store_kind, n_problems from headline").fetchall())
    assert rows == {"agent_file": 1, "letta_server": 0, "letta_memfs": None}  # null, not 0
    con.close()


# --- a run index comparing a run that recorded n_problems -----------------------------------


def test_an_index_against_a_run_that_recorded_n_problems(data_dir, tmp_path):
    from memlab.report import write_metrics
    from memlab.report._index import index_page
    from memlab.report._runs import (
        HEADLINE_METRICS,
        evaluate_alerts,
        parse_alerts,
        read_runs,
        reports_of,
        store_metrics,
    )

    path = data_dir / EZRA
    now = json.loads(memlab.audit(path, as_of="2026-08-04").to_json())["headline"]
    assert now["problems"] == 1
    # what the audit wrote before: the same count under n_problems, charted under that name
    old = {("n_problems" if k == "problems" else k): v for k, v in now.items()}
    old_headline = [("n_problems" if m == "problems" else m)
                    for m in HEADLINE_METRICS["agent_file"]]
    for folder, metrics in (("old", old), ("new", now)):
        write_metrics(tmp_path / folder, {path.name: metrics})  # as the audit notebook does
    runs_root = tmp_path / "runs"
    write_audit_run(runs_root, "2026-11-30", old_headline,
                    json.loads((tmp_path / "old" / "metrics.json").read_text()), store="ezra")
    write_audit_run(runs_root, "2026-12-01", list(HEADLINE_METRICS["agent_file"]),
                    json.loads((tmp_path / "new" / "metrics.json").read_text()), store="ezra")

    runs = read_runs(runs_root)
    before, after = (store_metrics(reports_of(r, "ezra")) for _, r in runs)
    assert "problems" not in before and before["n_problems"] == 1  # absent, not filled with 0
    assert after["problems"] == 1 and "n_problems" not in after

    page = index_page(runs)
    since = page[page.index('id="since"'):page.index('id="runs"')]
    row = re.search(r">problems</td>(.*?)</tr>", since).group(1)
    assert re.findall(r'<td class="n">(.*?)</td>', row)[:2] == ["–", "1"]
    assert "not recorded in the previous run" in row and ">0<" not in row
    # the old value under its old name, with what it was
    row = re.search(r">n_problems</td>(.*?)</tr>", since).group(1)
    assert re.findall(r'<td class="n">(.*?)</td>', row)[:2] == ["1", "–"]
    assert "retired" in row and "read problems" in row
    # the trends chart the current headline: problems, not the retired name
    trends = page[page.index('id="trends"'):]
    assert "<code>problems</code>" in trends and "<code>n_problems</code>" not in trends

    # an alert on the change of problems is not checked against that run (not a change from 0)
    rules = parse_alerts([{"metric": "problems", "change_above": 0},
                          {"metric": "n_problems", "above": 0}])
    change, retired = evaluate_alerts(rules, {"ezra": after}, {"ezra": before})
    assert not change.fired and change.reason == "not recorded in the previous run"
    assert not retired.fired and "retired" in retired.reason and "problems" in retired.reason


def test_a_run_of_current_names_has_no_retired_row(data_dir, tmp_path):
    # control: two runs that both recorded problems compare it, and no retired row appears
    from memlab.report import write_metrics
    from memlab.report._index import index_page
    from memlab.report._runs import HEADLINE_METRICS, read_runs

    path = data_dir / EZRA
    now = json.loads(memlab.audit(path, as_of="2026-08-04").to_json())["headline"]
    write_metrics(tmp_path / "m", {path.name: now})
    metrics = json.loads((tmp_path / "m" / "metrics.json").read_text())
    for date in ("2026-11-30", "2026-12-01"):
        write_audit_run(tmp_path / "runs", date, list(HEADLINE_METRICS["agent_file"]), metrics,
                        store="ezra")
    page = index_page(read_runs(tmp_path / "runs"))
    since = page[page.index('id="since"'):page.index('id="runs"')]
    row = re.search(r">problems</td>(.*?)</tr>", since).group(1)
    cells = re.findall(r'<td class="n">(.*?)</td>', row)
    assert cells[:3] == ["1", "1", '<span class="quiet">0</span>']
    assert ">n_problems<" not in since and "retired" not in since


def test_an_elfmem_databases_index_charts_and_compares_its_problems(samples, tmp_path):
    # what a scheduled run shows for an elfmem database: its default headline charts problems,
    # and the since table has the count, 0 before its copy was damaged and 2 after
    from memlab.report import write_metrics
    from memlab.report._index import index_page
    from memlab.report._runs import HEADLINE_METRICS, read_runs

    assert "problems" in HEADLINE_METRICS["elfmem_db"]
    runs_root = tmp_path / "runs"
    for date, name in (("2026-11-30", "elfmem-0.20.0-schema9.db"),
                       ("2026-12-01", "elfmem-0.20.0-schema9-damaged.db")):
        path = samples[name][0]
        headline = json.loads(memlab.audit(path, as_of="2026-08-04").to_json())["headline"]
        write_metrics(tmp_path / date, {"db": headline})
        write_audit_run(runs_root, date, list(HEADLINE_METRICS["elfmem_db"]),
                        json.loads((tmp_path / date / "metrics.json").read_text()), store="db",
                        kind="elfmem_db")
    page = index_page(read_runs(runs_root))
    since = page[page.index('id="since"'):page.index('id="runs"')]
    row = re.search(r">problems</td>(.*?)</tr>", since).group(1)
    assert re.findall(r'<td class="n">(.*?)</td>', row)[:2] == ["0", "2"]
    trends = page[page.index('id="trends"'):]
    assert "<code>problems</code>" in trends
