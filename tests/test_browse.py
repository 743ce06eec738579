"""`memlab browse`'s database (issue 39 item 1): the demo database and the memfs sample bundle
built into SQLite, checked against the sources read independently (SQLite on the demo file,
git on the bundle), with the negative controls: no link where the key is not unique, no
write into a path read, nothing replaced that memlab did not write. The server itself is
tests/browser/test_browse_browser.py's.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

import memlab.browse
from memlab._metrics import METRICS
from memlab.errors import MemlabError, OutputExists

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo" / "elfmem-demo.db"
BUNDLE = REPO / "data" / "samples" / "memfs" / "deep-research-memfs.bundle"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    before = {p: _digest(p) for p in (DEMO, BUNDLE)}
    out = tmp_path_factory.mktemp("browse")
    db = memlab.browse.build([DEMO, BUNDLE], out)
    assert {p: _digest(p) for p in (DEMO, BUNDLE)} == before  # the stores are never written
    meta = json.loads(memlab.browse.metadata_path(db).read_text(encoding="utf-8"))
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    yield db, con, meta["databases"]["memlab"], meta
    con.close()


def _types(con, table):
    return {r[1]: r[2] for r in con.execute(f'PRAGMA table_info("{table}")')}


def _fks(con, table):
    return {(r[3], r[2], r[4]) for r in con.execute(f'PRAGMA foreign_key_list("{table}")')}


def test_demo_blocks_keep_the_stores_rows_and_types(built):
    db, con, _, _ = built
    assert db.name == "memlab.db" and db.parent != DEMO.parent
    src = sqlite3.connect(f"file:{DEMO}?mode=ro&immutable=1", uri=True)
    by_status = dict(src.execute("select status, count(*) from blocks group by status"))
    assert by_status == dict(con.execute(
        "select status, count(*) from blocks where store = 'elfmem-demo.db' group by status"))
    types = _types(con, "blocks")
    assert types["created_at"] == "TEXT" and types["reinforcement_count"] == "INTEGER"
    assert types["pinned"] == "INTEGER" and types["category"] == "TEXT"
    assert types["confidence"] == "REAL" and types["id"] == "TEXT"
    # timestamps: ISO 8601 text, the same instant as the store's own column
    for bid, created, count in src.execute(
            "select id, created_at, reinforcement_count from blocks order by id limit 20"):
        ours, n = con.execute("select created_at, reinforcement_count from blocks where id = ?",
                              (bid,)).fetchone()
        assert dt.datetime.fromisoformat(ours) == dt.datetime.fromisoformat(created)
        assert n == count and isinstance(n, int)
    # a flag is 0/1 or NULL, never text
    assert set(r[0] for r in con.execute("select distinct typeof(pinned) from blocks")) <= {
        "integer", "null"}
    assert src.execute("select count(*) from block_tags").fetchone()[0] == con.execute(
        "select count(*) from tags").fetchone()[0]
    src.close()


def test_memfs_history_and_findings_link_to_their_commit_and_file(built, tmp_path):
    _, con, meta, _ = built
    git = ["git", "-c", "core.hooksPath=/dev/null"]
    subprocess.run([*git, "init", "-q", str(tmp_path / "r")], check=True)
    subprocess.run([*git, "-C", str(tmp_path / "r"), "fetch", "-q", str(BUNDLE), "refs/*:refs/*"],
                   check=True, capture_output=True)
    shas = set(subprocess.run([*git, "-C", str(tmp_path / "r"), "rev-list", "--all"], check=True,
                              capture_output=True, text=True).stdout.split())
    assert {r[0] for r in con.execute("select sha from audit_commits")} == shas
    assert {r[0] for r in con.execute("select distinct sha from history")} <= shas
    assert ("sha", "audit_commits", "sha") in _fks(con, "audit_hook_violations")
    assert ("sha", "audit_commits", "sha") in _fks(con, "audit_integrity")
    assert ("path", "files", "path") in _fks(con, "audit_hook_violations")
    assert ("sha", "audit_commits", "sha") in _fks(con, "history")
    assert ("block_id", "blocks", "id") in _fks(con, "tags")
    assert _types(con, "history")["authored_at"] == "TEXT"
    assert _types(con, "history")["lines_added"] == "INTEGER"
    # every hook violation names a commit the history holds
    assert con.execute("select count(*) from audit_hook_violations v join audit_commits c "
                       "on c.sha = v.sha").fetchone()[0] == con.execute(
        "select count(*) from audit_hook_violations").fetchone()[0] > 0
    assert meta["tables"]["files"]["label_column"] == "label"


def test_search_facets_and_metric_metadata(built):
    _, con, meta, top = built
    tables = meta["tables"]
    assert top["memlab"] == memlab.browse.FORMAT
    blocks = tables["blocks"]
    assert blocks["fts_table"] == "blocks_fts" and tables["blocks_fts"] == {"hidden": True}
    assert {"status", "category", "archive_reason"} <= set(blocks["facets"])
    assert {"author_kind", "rule"} <= set(tables["audit_hook_violations"]["facets"])
    assert "store" not in blocks["facets"]  # one store's table: nothing to facet on
    assert "store" in tables["headline"]["facets"]  # two stores
    # full-text search finds exactly the blocks whose text has the word (SQLite's LIKE agrees)
    hits = {r[0] for r in con.execute(
        "select b.id from blocks b join blocks_fts f on f.rowid = b.rowid "
        "where blocks_fts match 'database'")}
    like = {r[0] for r in con.execute(
        "select id from blocks where content like '%database%' or summary like '%database%' "
        "or cue like '%database%'")}
    assert hits and hits <= like
    assert {r[0] for r in con.execute("select path from files f join files_fts s on "
                                      "s.rowid = f.rowid where files_fts match 'persona'")}
    # metric records: the headline's column descriptions and the metrics table
    cols = tables["headline"]["columns"]
    m = METRICS["prompt_tokens"]
    assert cols["prompt_tokens"] == f"{m.definition} ({m.unit})"
    assert cols["supersession_share"].startswith(METRICS["supersession_share"].definition)
    assert con.execute("select unit from metrics where name = 'llm_calls'").fetchone()[0] == \
        METRICS["llm_calls"].unit
    # "not checked" stays NULL: the memfs store has no LLM calls recorded, not 0
    rows = dict(con.execute("select store_kind, llm_calls from headline"))
    assert rows["letta_memfs"] is None and isinstance(rows["elfmem_db"], int)


def test_canned_queries_answer_from_the_store(built):
    _, con, meta, _ = built
    queries = meta["queries"]
    assert {"archive_reasons", "commits_by_author_kind", "findings_by_rule",
            "integrity_findings", "largest_prompt_files"} <= set(queries)
    assert "failed_reports" not in queries  # no report run was given: no table, no query
    src = sqlite3.connect(f"file:{DEMO}?mode=ro&immutable=1", uri=True)
    expected = dict(src.execute("select archive_reason, count(*) from blocks "
                                "where status = 'archived' group by 1"))
    got = {r[1]: r[2] for r in con.execute(queries["archive_reasons"]["sql"])}
    assert got == expected
    src.close()
    for q in queries.values():
        assert q["title"] and q["description"]
        con.execute(q["sql"]).fetchall()


def test_no_link_where_the_key_is_not_unique(tmp_path):
    # the same database twice: every block id twice, so blocks has no primary key to link to
    db = memlab.browse.build([DEMO, DEMO], tmp_path / "twice")
    con = sqlite3.connect(db)
    assert _fks(con, "tags") == set()
    assert {r[0] for r in con.execute("select distinct store from blocks")} == {
        "elfmem-demo.db", "elfmem-demo.db (2)"}
    assert all(r[5] == 0 for r in con.execute('PRAGMA table_info("blocks")'))  # no pk
    con.close()


def test_stores_of_two_kinds_get_a_blocks_table_each(tmp_path):
    hostile = tmp_path / "blocks.json"
    hostile.write_text(json.dumps([
        {"id": "block-1", "label": 'persona"><img src=x onerror=alert(1)>',
         "value": "<script>alert(1)</script> needle", "limit": 20},
        {"id": "block-2", "label": "human", "value": "plain", "limit": 2000}]))
    db = memlab.browse.build([DEMO, hostile], tmp_path / "out")
    con = sqlite3.connect(db)
    names = {r[0] for r in con.execute("select name from sqlite_master where type = 'table'")}
    assert {"elfmem_db_blocks", "letta_blocks_blocks", "tags"} <= names and "blocks" not in names
    assert ("block_id", "elfmem_db_blocks", "id") in _fks(con, "tags")
    # store text is kept as written (Datasette escapes it on the page)
    assert con.execute("select label, value from letta_blocks_blocks where block_id = 'block-1'"
                       ).fetchone() == ('persona"><img src=x onerror=alert(1)>',
                                        "<script>alert(1)</script> needle")
    assert "elfmem_db" not in _types(con, "letta_blocks_blocks")  # each kind its own columns
    assert "content" not in _types(con, "letta_blocks_blocks")
    meta = json.loads(memlab.browse.metadata_path(db).read_text())["databases"]["memlab"]
    assert meta["tables"]["letta_blocks_blocks"]["title"] == "Blocks (letta_blocks)"
    assert "archive_reasons_elfmem_db" in meta["queries"]
    assert "elfmem_db_blocks" in meta["queries"]["archive_reasons_elfmem_db"]["sql"]
    con.close()


def test_hostile_column_and_frame_names_are_made_safe():
    from memlab.browse._sqlite import column_names, table_name

    taken: set[str] = set()
    assert table_name('x"; drop table blocks; --', taken) == "x_drop_table_blocks"
    assert table_name("sqlite_master", taken) == "t_sqlite_master"
    assert table_name("Blocks", taken) == "blocks" and table_name("blocks", taken) == "blocks__2"
    assert column_names(["description", "Description", "rowid", "a\x00b\nc", ""]) == [
        "description", "Description__2", "rowid__2", "a?b?c", "column"]


def test_output_never_goes_into_a_path_read_or_over_files_memlab_did_not_write(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    db_copy = store / "elfmem-demo.db"
    db_copy.write_bytes(DEMO.read_bytes())
    with pytest.raises(OutputExists, match="inside a path it reads"):
        memlab.browse.build([store], store / "browse")
    assert sorted(p.name for p in store.iterdir()) == ["elfmem-demo.db"]
    named = db_copy.rename(store / "memlab.db")  # a store that is called memlab.db
    with pytest.raises(OutputExists, match="replace a path it reads"):
        memlab.browse.build([named], store)
    assert sorted(p.name for p in store.iterdir()) == ["memlab.db"]
    assert _digest(named) == _digest(DEMO)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "memlab.db").write_text("someone's own file\n")
    with pytest.raises(OutputExists, match="not written by memlab browse"):
        memlab.browse.build([DEMO], foreign)
    assert (foreign / "memlab.db").read_text() == "someone's own file\n"
    ours = memlab.browse.build([DEMO], tmp_path / "ours")
    again = memlab.browse.build([DEMO], tmp_path / "ours")  # its own earlier build: replaced
    assert again == ours and sorted(p.name for p in ours.parent.iterdir()) == [
        "memlab.db", "memlab.metadata.json"]


def test_report_run_and_fleet_lake(tmp_path):
    from memlab.lake import export_parquet

    lake = tmp_path / "lake"
    export_parquet([DEMO], out=lake, as_of="2026-08-04")
    run = tmp_path / "runs" / "2026-12-01"
    run.mkdir(parents=True)
    (run / "runs.json").write_text(json.dumps({
        "format": "memlab-report-run/1", "date": "2026-12-01", "status": "1 of 2 report(s) failed",
        "memlab_version": "0", "as_of": None, "started": "2026-12-01T06:00:00+00:00",
        "duration_s": 3.5,
        "stores": {"db": {"kind": "elfmem_db", "digest": "d", "problems": [],
                          "findings": None, "choices": None},
                   "af": {"kind": "agent_file", "digest": "e", "problems": [],
                          "findings": ["blocks_over_limit: b · human"], "choices": None}},
        "reports": [{"store": "db", "kind": "audit", "report": "audit", "html": "db/audit/x.html",
                     "metrics": {"elfmem-demo.db": {"blocks_active": 140, "llm_calls": None}}},
                    {"store": "db", "kind": "review", "report": "review", "error": "boom"},
                    # an Agent File audit as memlab wrote it before max_over_limit_ratio retired
                    {"store": "af", "kind": "audit", "report": "audit", "html": "af/audit/x.html",
                     "metrics": {"ezra.af": {"max_over_limit_ratio": 4.4854,
                                             "n_blocks_over_limit": 3}}}],
        "alerts": []}))
    db = memlab.browse.build([lake, run.parent], tmp_path / "out")
    con = sqlite3.connect(db)
    assert con.execute("select count(*) from blocks").fetchone()[0] == 185
    assert con.execute("select store_kind, run_date from headline").fetchone()[0] == "elfmem_db"
    assert con.execute("select date, failed_reports from runs").fetchall() == [("2026-12-01", 1)]
    # findings not recorded are NULL, not 0; a metric recorded as null stays null
    assert con.execute("select problems, findings from run_stores where store = 'db'"
                       ).fetchone() == (0, None)
    metrics = dict(con.execute("select metric, value from run_metrics where store = 'db'"))
    assert metrics["blocks_active"] == 140 and metrics["llm_calls"] is None
    assert ("run_date", "runs", "date") in _fks(con, "run_reports")
    assert con.execute("select unit from run_metrics where metric = 'blocks_active'"
                       ).fetchone()[0] == METRICS["blocks_active"].unit
    # a retired name an older run holds still reads, and says what it was
    (value, definition), = con.execute(
        "select value, definition from run_metrics where metric = 'max_over_limit_ratio'")
    assert value == 4.4854 and definition.startswith("retired") and "max_limit_ratio" in definition
    meta = json.loads(memlab.browse.metadata_path(db).read_text())["databases"]["memlab"]
    # metric definitions describe the headline's columns only: run_stores' findings is the
    # count of a run's finding keys (1 here), not the memfs audit's findings metric
    assert con.execute("select findings from run_stores where store = 'af'").fetchone() == (1,)
    assert "columns" not in meta["tables"]["run_stores"]
    assert meta["tables"]["headline"]["columns"]["blocks_active"].startswith(
        METRICS["blocks_active"].definition)
    assert {"failed_reports", "fleet_stores"} <= set(meta["queries"])
    assert con.execute(meta["queries"]["failed_reports"]["sql"]).fetchall() == [
        ("2026-12-01", "db", "review", "boom")]
    con.close()


def test_a_path_nothing_reads_is_one_error_naming_it(tmp_path, capsys):
    from memlab.cli import main

    with pytest.raises(MemlabError, match="absent.db"):
        memlab.browse.build([tmp_path / "absent.db"], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert main(["browse", str(tmp_path / "absent.db"), "--build-only", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "absent.db" in err[0]
    assert main(["browse", str(DEMO), "--build-only", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "memlab.db").is_file()


def test_only_loopback_and_a_free_port():
    import socket

    with pytest.raises(MemlabError, match="this machine only"):
        memlab.browse.check_port(8001, "0.0.0.0")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(MemlabError, match="cannot listen"):
            memlab.browse.check_port(s.getsockname()[1])


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_the_command_serves_until_stopped_and_leaves_nothing(tmp_path, signal_name):
    """`memlab browse PATH` as typed: Datasette answers on 127.0.0.1; Ctrl-C (or a SIGTERM)
    stops it, and its temporary database is gone."""
    import glob
    import os
    import signal
    import socket
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "memlab", "browse", str(DEMO), "--port",
                             str(port)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    url = f"http://127.0.0.1:{port}/memlab/blocks.json?_size=1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    assert json.load(r)["filtered_table_rows_count"] == 185
                break
            except OSError:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert glob.glob(str(tmp_path / f"memlab-browse-p{proc.pid}-*/memlab.db"))
        # as a person does: the URL line is on the screen, then Ctrl-C (the page can answer
        # this test a moment before memlab's own start-up check has, and printed the line)
        first = proc.stdout.readline()
        proc.send_signal(getattr(signal, signal_name))
        out, err = proc.communicate(timeout=30)
        out = first + out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert f"http://127.0.0.1:{port}/memlab" in out and "Traceback" not in err
    assert glob.glob(str(tmp_path / "memlab-browse-*")) == []
    with pytest.raises(OSError):  # Datasette stopped with it
        urllib.request.urlopen(url, timeout=2)


def test_a_letta_server_database_links_history_to_blocks_and_agents(tmp_path):
    server = REPO / "data" / "samples" / "letta-server" / "letta-0.11.7.db"
    db = memlab.browse.build([server], tmp_path / "out")
    con = sqlite3.connect(db)
    src = sqlite3.connect(f"file:{server}?mode=ro&immutable=1", uri=True)
    assert con.execute("select count(*) from block_history").fetchone() == src.execute(
        "select count(*) from block_history").fetchone()
    assert ("block_id", "blocks", "block_id") in _fks(con, "block_history")
    assert ("agent_id", "agents", "agent_id") in _fks(con, "block_agents")
    meta = json.loads(memlab.browse.metadata_path(db).read_text())["databases"]["memlab"]
    assert "actor_kind" in meta["tables"]["block_history"]["facets"]
    edits = meta["queries"]["block_edits_by_actor"]["sql"]
    assert sum(r[-1] for r in con.execute(edits)) == src.execute(
        "select count(*) from block_history").fetchone()[0]
    con.close()
    src.close()
