"""One huge value in a Letta server database (SQLite 0.11.7, PostgreSQL 0.16.8) or an Agent File
is measured, not held (issue 23, item 4): past ``MAX_VALUE_BYTES`` its text is null, an
``oversized`` problem row names it with its size, the numbers that need its text are null (never
0), and a migration that would write it empty is refused with one line.

The sizes and character counts asserted come from the database itself (SQLite's and
PostgreSQL's ``length``/``octet_length``) or from Python's ``json`` on the file; memory is
measured by ``benchmarks/bench_memory.py``, never asserted here.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import memlab
from memlab.constants import MAX_VALUE_BYTES
from memlab.errors import MigrationError
from memlab.migrations import plan_migration

from letta_server_fixtures import SQLITE_DB, letta_pg  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
AF = ROOT / "data" / "samples" / "letta-af" / "deep_research_agent.af"
# past the cap in bytes; "é" is two bytes in UTF-8, so chars and bytes differ
BIG = "é" * (MAX_VALUE_BYTES // 2 + 1000)
BIGGER = "x" * (MAX_VALUE_BYTES + 5)


def _oversized(store) -> pd.DataFrame:
    p = store.problems
    return p[p["kind"] == "oversized"].reset_index(drop=True)


def _memlab(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or str(ROOT)}
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=str(ROOT))


def _one_line_refusal(run: subprocess.CompletedProcess, *words: str) -> None:
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    lines = run.stderr.strip().split("\n")
    assert len(lines) == 1 and lines[0].isprintable(), run.stderr
    for word in words:
        assert word in lines[0], lines[0]


# ---- Letta server, SQLite ---------------------------------------------------------------------


@pytest.fixture
def huge_sqlite(tmp_path):
    """The 0.11.7 database with one block's value and one checkpoint's value past the cap;
    yields (path, block id, history id)."""
    db = tmp_path / "letta.db"
    shutil.copyfile(SQLITE_DB, db)
    conn = sqlite3.connect(db)
    block = conn.execute("SELECT id FROM block ORDER BY id LIMIT 1").fetchone()[0]
    entry = conn.execute("SELECT id FROM block_history ORDER BY id LIMIT 1").fetchone()[0]
    conn.execute("UPDATE block SET value = ? WHERE id = ?", (BIG, block))
    conn.execute("UPDATE block_history SET value = ? WHERE id = ?", (BIGGER, entry))
    conn.commit()
    conn.close()
    old = time.time() - 120  # settled: read in place
    os.utime(db, (old, old))
    return db, block, entry


def _sqlite_sizes(db: Path, table: str, key: str) -> tuple[int, int]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"SELECT length(CAST(value AS BLOB)), length(value) FROM {table} "
                            "WHERE id = ?", (key,)).fetchone()
    finally:
        conn.close()


def test_a_huge_sqlite_value_is_measured_not_read(huge_sqlite):
    db, block, entry = huge_sqlite
    store = memlab.load(db)
    size, chars = _sqlite_sizes(db, "block", block)
    h_size, h_chars = _sqlite_sizes(db, "block_history", entry)
    assert size > MAX_VALUE_BYTES > chars  # the cap is on bytes
    row = store.blocks.set_index("block_id").loc[block]
    assert pd.isna(row["value"])
    assert row["chars"] == chars  # the database's own count, not a guess and not 0
    assert bool(row["over_limit"]) is bool(chars > row["limit"])
    hist = store.block_history.set_index("history_id").loc[entry]
    assert pd.isna(hist["value"]) and hist["chars"] == h_chars
    rows = _oversized(store)
    assert len(rows) == 2
    assert block in rows["message"][0] and f"{size:,} bytes" in rows["message"][0]
    assert f"({chars:,} characters)" in rows["message"][0]
    assert entry in rows["message"][1] and f"{h_size:,} bytes" in rows["message"][1]
    assert store.meta["oversized_values"] == [
        {"table": "block", "id": block, "bytes": size, "chars": chars},
        {"table": "block_history", "id": entry, "bytes": h_size, "chars": h_chars}]
    # every other value is read whole
    conn = sqlite3.connect(db)
    others = dict(conn.execute("SELECT id, value FROM block WHERE id <> ?", (block,)))
    conn.close()
    got = store.blocks.set_index("block_id")["value"]
    assert {k: got[k] for k in others} == others


def test_the_audit_of_a_huge_sqlite_value_says_what_it_did_not_check(huge_sqlite):
    db, block, entry = huge_sqlite
    store = memlab.load(db)
    a = memlab.audit(store)
    assert a.headline["n_values_not_read"] == 2
    assert any("were not read" in n for n in a.notes)
    edits = a.tables["edit_history"].set_index("block_id")
    hist_block = store.block_history.set_index("history_id").loc[entry, "block_id"]
    for b in {block, hist_block}:
        assert pd.isna(edits.loc[b, "value_changes"])  # not checked: null, not 0
        assert pd.isna(edits.loc[b, "edited_after_checkpoint"])
    # the core memory sums hold the database's count of the value not read
    chars = _sqlite_sizes(db, "block", block)[1]
    core = a.tables["core_memory"].set_index("agent_id")
    holders = store.block_agents[store.block_agents["block_id"] == block]["agent_id"]
    for agent in holders:
        mine = store.block_agents[store.block_agents["agent_id"] == agent]["block_id"]
        live = store.blocks[~store.blocks["is_deleted"].fillna(False).astype(bool)]
        expected = int(live[live["block_id"].isin(mine)]["chars"].sum())
        assert core.loc[agent, "block_chars"] == expected and expected >= chars


def test_a_huge_sqlite_value_is_not_migrated_empty(huge_sqlite, tmp_path):
    db, block, _ = huge_sqlite
    with pytest.raises(MigrationError, match="not migrate a value it has not read"):
        plan_migration(db)
    run = _memlab("migrate", str(db), str(tmp_path / "out"))
    _one_line_refusal(run, "past memlab's", block)
    assert not (tmp_path / "out").exists()


# ---- Letta server, PostgreSQL -----------------------------------------------------------------


@pytest.fixture
def huge_pg(letta_pg):
    name = f"huge_{os.getpid()}"
    letta_pg.psql("postgres", f"CREATE DATABASE {name} TEMPLATE letta")
    # made by the server: a value one byte past the cap, multibyte, so chars != bytes
    letta_pg.psql(name, f"UPDATE block SET value = repeat('é', {MAX_VALUE_BYTES // 2 + 1}) "
                        "WHERE id = (SELECT id FROM block ORDER BY id LIMIT 1)")
    try:
        yield name
    finally:
        letta_pg.psql("postgres", f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                  f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
        letta_pg.psql("postgres", f"DROP DATABASE {name}")


def test_a_huge_postgres_value_is_measured_by_the_server_not_read(letta_pg, huge_pg):
    got = letta_pg.psql(huge_pg, "SELECT id || '|' || octet_length(value) || '|' || length(value) "
                                 "FROM block ORDER BY id LIMIT 1").split()
    block, size, chars = [g for g in got if "|" in g][0].split("|")
    size, chars = int(size), int(chars)
    assert size == MAX_VALUE_BYTES + 2 and chars == MAX_VALUE_BYTES // 2 + 1
    store = memlab.load(letta_pg.dsn(huge_pg))
    row = store.blocks.set_index("block_id").loc[block]
    assert pd.isna(row["value"]) and row["chars"] == chars
    rows = _oversized(store)
    assert len(rows) == 1 and block in rows["message"][0]
    assert f"{size:,} bytes ({chars:,} characters)" in rows["message"][0]
    a = memlab.audit(store)
    assert a.headline["n_values_not_read"] == 1
    assert pd.isna(a.tables["edit_history"].set_index("block_id").loc[block, "value_changes"])
    run = _memlab("audit", letta_pg.dsn(huge_pg))
    assert run.returncode == 0, run.stderr[-2000:]


# ---- Agent File -------------------------------------------------------------------------------


def _huge_af(tmp_path: Path, value: str, *, forged: str | None = None) -> tuple[Path, dict]:
    doc = json.loads(AF.read_text(encoding="utf-8"))
    doc["blocks"][0]["value"] = value
    if forged is not None:
        doc["blocks"][1]["value"] = forged
    path = tmp_path / "huge.af"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path, doc


def test_a_huge_agent_file_value_is_not_read_and_its_chars_are_null(tmp_path):
    # quotes and backslashes inside the value: escaped in the file, so the cut must skip them
    value = ('a "quoted" \\ path\n' * (MAX_VALUE_BYTES // 16))
    path, doc = _huge_af(tmp_path, value, forged="memlab-oversized-0-0")
    store = memlab.load(path)
    size = len(json.dumps(value)) - 2  # bytes of the JSON string between its quotes
    first = doc["blocks"][0]
    row = store.blocks.set_index("block_id").loc[first["id"]]
    assert pd.isna(row["value"]) and pd.isna(row["chars"])  # not known: null, never 0
    assert bool(row["over_limit"]) is True  # size / 12 characters at least, past its limit
    assert size > 12 * first["limit"]
    rows = _oversized(store)
    assert len(rows) == 1 and f"{size:,} bytes" in rows["message"][0]
    assert first["id"] in rows["message"][0]
    assert store.meta["oversized_values"] == [{"where": f"block {first['id']} value",
                                               "bytes": size}]
    # every other value is read exactly as Python's json reads the file, a look-alike of the
    # placeholder included
    got = store.blocks.set_index("block_id")["value"]
    for block in doc["blocks"][1:]:
        assert got[block["id"]] == block["value"]
    assert got[doc["blocks"][1]["id"]] == "memlab-oversized-0-0"
    a = memlab.audit(store)
    assert a.headline["block_chars_total"] is None and a.headline["max_prompt_chars"] is None
    assert a.headline["n_values_not_read"] == 1
    prompt = a.tables["prompt_chars"]
    assert prompt["block_chars"].isna().any()
    run = _memlab("audit", str(path))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "prompt size not known" in run.stdout


def test_a_huge_agent_file_value_is_not_migrated_empty(tmp_path):
    path, _ = _huge_af(tmp_path, BIGGER)
    run = _memlab("migrate", str(path), str(tmp_path / "out"))
    _one_line_refusal(run, "past memlab's", "not migrate")
    assert not (tmp_path / "out").exists()


def test_a_large_agent_file_without_a_huge_value_reads_as_before(tmp_path):
    # a file past the cap made of many values under it: nothing is cut
    doc = json.loads(AF.read_text(encoding="utf-8"))
    piece = "y" * (MAX_VALUE_BYTES // 4)
    for block in doc["blocks"]:
        block["value"] = piece
    path = tmp_path / "big.af"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert path.stat().st_size > MAX_VALUE_BYTES
    store = memlab.load(path)
    assert _oversized(store).empty and store.meta["oversized_values"] == []
    assert (store.blocks["value"] == piece).all()
    assert (store.blocks["chars"] == len(piece)).all()


EVIL = """
CREATE SCHEMA evil;
CREATE FUNCTION evil.boom_int(integer, integer) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END $$;
CREATE OPERATOR evil.> (LEFTARG = integer, RIGHTARG = integer, FUNCTION = evil.boom_int);
CREATE FUNCTION evil.boom_text(text, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END $$;
CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.boom_text);
CREATE FUNCTION evil.octet_length(text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END $$;
CREATE FUNCTION evil.length(text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END $$;
GRANT USAGE ON SCHEMA evil TO PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA evil TO PUBLIC;
ALTER DATABASE {db} SET search_path = evil, pg_catalog, public;
ALTER ROLE {reader} IN DATABASE {db} SET search_path = evil, pg_catalog, public;
"""


def test_measuring_a_huge_postgres_value_calls_no_function_or_operator_of_the_owner(
        letta_pg, huge_pg):
    from pg_cluster import READER

    letta_pg.psql(huge_pg, EVIL.format(db=huge_pg, reader=READER))
    store = memlab.load(letta_pg.dsn(huge_pg))  # an owner's function would raise here
    rows = _oversized(store)
    assert len(rows) == 1 and f"{MAX_VALUE_BYTES + 2:,} bytes" in rows["message"][0]
