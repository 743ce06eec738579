"""Values an agent (or anything else) can put in a store's SQLite database that its own program
never writes: text that is not UTF-8, a BLOB where text belongs, a fractional or 1e300 integer,
JSON nested 100,000 deep, an active-hour clock 342 years long. SQLite keeps each as given. Each
is read as the user would want it (U+FFFD for bad bytes, NA for a number that is not one, the
time unknown) and named in a problem row by table, column and row; none is a traceback.

Every case changes a copy of a committed sample database with sqlite3 and loads it through the
real loaders and the real CLI.
"""

from __future__ import annotations

import math
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import memlab
from memlab.embed import get_embedder
from memlab.reviews import review, units_of
from memlab.kinds.elfmem_db._load import load_elfmem
from memlab.kinds.letta_server._load import load_letta_server

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
ELFMEM = SAMPLES / "elfmem" / "elfmem-0.20.0-schema9.db"
LETTA = SAMPLES / "letta-server" / "letta-0.11.7.db"
TIMEOUT = 300

BAD = "CAST(x'41ff42c328' AS TEXT)"  # 'A', a lone 0xff, 'B', a cut-off two-byte sequence, '('
REPAIRED = "A\ufffdB\ufffd("


def _copy(src: Path, dest: Path, *sql: str) -> Path:
    shutil.copyfile(src, dest)
    conn = sqlite3.connect(dest)
    try:
        for statement in sql:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()
    return dest


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def _problems(store, kind: str) -> list[str]:
    p = store.problems
    return p.loc[p["kind"].astype(str) == kind, "message"].astype(str).tolist()


def _first_id(db: Path, table: str, key: str = "id") -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f'SELECT "{key}" FROM "{table}" WHERE rowid = 1').fetchone()[0]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return get_embedder(cache_dir=tmp_path_factory.mktemp("db-values-cache"))


# ----------------------------------------------------------------------- elfmem: invalid UTF-8

def test_invalid_utf8_in_block_content_is_repaired_and_named_on_the_arrow_path(tmp_path,
                                                                              embedder):
    db = _copy(ELFMEM, tmp_path / "x.db", f"UPDATE blocks SET content = {BAD} WHERE rowid = 1")
    block = _first_id(db, "blocks")
    store = load_elfmem(db)
    assert store.meta["readers"]["blocks"] == "arrow"
    row = store.blocks.set_index("id").loc[block]
    assert row["content"] == REPAIRED
    assert row["content_chars"] == 5
    [message] = _problems(store, "bad_text")
    assert "blocks.content" in message and block in message and "1 value(s)" in message
    # What failed far from the loader (audit's Arrow compute, review's embedding) now works.
    for command in ("inspect", "audit"):
        proc = _cli(command, str(db))
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
    assert "bad_text" in _cli("inspect", str(db)).stdout
    units = units_of(store).set_index("uid")
    assert units.loc[block, "text"] == REPAIRED
    review(store, as_of="2026-11-30", embedder=embedder)


def test_invalid_utf8_is_read_the_same_on_the_sqlite3_path(tmp_path):
    # Text in the REAL confidence column sends the table down the value-by-value path.
    db = _copy(ELFMEM, tmp_path / "x.db",
               f"UPDATE blocks SET content = {BAD}, confidence = 'high' WHERE rowid = 1")
    block = _first_id(db, "blocks")
    store = load_elfmem(db)
    assert store.meta["readers"]["blocks"].startswith("sqlite3")
    row = store.blocks.set_index("id").loc[block]
    assert row["content"] == REPAIRED and row["content_chars"] == 5
    assert pd.isna(row["confidence"])
    [message] = _problems(store, "bad_text")
    assert "blocks.content" in message and block in message
    assert any("blocks.confidence" in m for m in _problems(store, "bad_value"))


def test_invalid_utf8_in_system_config_is_a_problem_row_not_a_damaged_file(tmp_path):
    db = _copy(ELFMEM, tmp_path / "x.db",
               "INSERT INTO system_config (key, value) VALUES "
               "(CAST(x'6e6f7465ff' AS TEXT), CAST(x'c328' AS TEXT))")
    store = load_elfmem(db)  # was CorruptStore: "Could not decode to UTF-8 column 'key'"
    raw = dict(zip(store.config_raw["key"], store.config_raw["value"]))
    assert raw["note\ufffd"] == "\ufffd("
    assert store.config["note\ufffd"].iloc[0] == "\ufffd("
    assert store.config["schema_version"].iloc[0] == 9
    messages = _problems(store, "bad_text")
    assert any("system_config.key" in m and "note\ufffd" in m for m in messages)
    assert any("system_config.value" in m for m in messages)
    proc = _cli("inspect", str(db))
    assert proc.returncode == 0 and "bad_text" in proc.stdout, proc.stderr


def test_many_bad_values_in_a_long_column_are_each_found(tmp_path):
    conn_sql = [f"INSERT INTO block_tags (block_id, tag) VALUES ('blk{i:04d}', "
                + (f"{BAD})" if i in (0, 300, 301, 777, 999) else f"'tag{i}')")
                for i in range(1000)]
    db = _copy(ELFMEM, tmp_path / "x.db", *conn_sql)
    store = load_elfmem(db)
    assert store.meta["readers"]["tags"] == "arrow"
    tags = store.tags[store.tags["block_id"].str.startswith("blk")]
    bad = sorted(tags.loc[tags["tag"] == REPAIRED, "block_id"])
    assert bad == ["blk0000", "blk0300", "blk0301", "blk0777", "blk0999"]
    assert (tags["tag"] == REPAIRED).sum() == 5 and len(tags) == 1000
    [message] = _problems(store, "bad_text")
    assert "block_tags.tag: 5 value(s)" in message and "'blk0000'" in message


# ----------------------------------------------------------------------- elfmem: review's clock

@pytest.mark.parametrize("hours", ["3e6", "1e308", "9e999"])
def test_a_reinforcement_clock_past_any_date_is_unknown_and_never_stale(tmp_path, embedder,
                                                                       hours):
    block = "a80f78b342f87ffb"  # reinforced once, no outcome: stale in 2027 (test_review.py)
    db = _copy(ELFMEM, tmp_path / "x.db",
               f"UPDATE blocks SET last_reinforced_at = {hours} WHERE id = '{block}'")
    store = memlab.load(db)
    units = units_of(store).set_index("uid")  # was OutOfBoundsTimedelta
    assert units.loc[block, "reinforcement"] == 1
    assert pd.isna(units.loc[block, "last_used"]) or units.loc[block, "last_used"].year < 2100
    proposal = review(store, as_of="2027-06-01", stale_after_days=90, embedder=embedder)
    stale = {u for c in proposal.choices if c.section == "stale"
             for u in proposal.item(c.options[0]).target["removes"]}
    assert block not in stale  # a reinforced block whose time is unknown is not called stale
    assert stale  # the others still are


def test_review_cli_on_a_342_year_clock(tmp_path):
    db = _copy(ELFMEM, tmp_path / "x.db", "UPDATE blocks SET last_reinforced_at = 3e6 "
                                          "WHERE rowid = 1")
    proc = _cli("review", str(db), "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert list((tmp_path / "r").glob("review-*.md"))


# ----------------------------------------------------------------------- Letta server database

DEEP = "[" * 100_000 + "]" * 100_000

CASES = [
    ('UPDATE block SET "limit" = 2.5 WHERE rowid = 1', "limit", None, "bad_value",
     "block.limit"),
    ('UPDATE block SET "limit" = 1e300 WHERE rowid = 1', "limit", None, "bad_value",
     "block.limit"),
    ("UPDATE block SET version = 1e300 WHERE rowid = 1", "version", None, "bad_value",
     "block.version"),
    ("UPDATE block SET value = x'00ff' WHERE rowid = 1", "value", "\x00\ufffd", "bad_text",
     "block.value"),
    (f"UPDATE block SET value = {BAD} WHERE rowid = 1", "value", REPAIRED, "bad_text",
     "block.value"),
    (f"UPDATE block SET label = {BAD} WHERE rowid = 1", "label", REPAIRED, "bad_text",
     "block.label"),
    (f"UPDATE block SET metadata_ = '{DEEP}' WHERE rowid = 1", "metadata", DEEP, "bad_json",
     "block.metadata_"),
]


@pytest.mark.parametrize("sql,column,expected,kind,named", CASES,
                         ids=[c[4] + "=" + c[0].split("= ", 1)[1][:12] for c in CASES])
def test_a_letta_block_value_no_server_writes_is_a_problem_row(tmp_path, sql, column, expected,
                                                               kind, named):
    db = _copy(LETTA, tmp_path / "letta.db", sql)
    block = _first_id(db, "block")
    store = load_letta_server(db)
    got = store.blocks.set_index("block_id").loc[block, column]
    if expected is None:
        assert pd.isna(got)
    else:
        assert got == expected
    messages = [m for m in _problems(store, kind) if named in m]
    assert len(messages) == 1 and block in messages[0], store.problems
    assert len(store.blocks) == len(load_letta_server(LETTA).blocks)


def test_a_whole_float_limit_is_read_as_letta_reads_it(tmp_path):
    db = _copy(LETTA, tmp_path / "letta.db", 'UPDATE block SET "limit" = 1234.0 WHERE rowid = 1')
    block = _first_id(db, "block")
    store = load_letta_server(db)
    assert store.blocks.set_index("block_id").loc[block, "limit"] == 1234
    assert store.problems.empty


def test_invalid_utf8_in_an_agent_name_names_the_agent(tmp_path):
    db = _copy(LETTA, tmp_path / "letta.db", f"UPDATE agents SET name = {BAD} WHERE rowid = 1")
    agent = _first_id(db, "agents")
    store = load_letta_server(db)  # was CorruptStore with an elfmem hint
    assert store.agents.set_index("agent_id").loc[agent, "name"] == REPAIRED
    [message] = _problems(store, "bad_text")
    assert "agents.name" in message and agent in message


def test_letta_cli_inspect_and_audit_on_every_bad_value_at_once(tmp_path):
    db = _copy(LETTA, tmp_path / "letta.db",
               'UPDATE block SET "limit" = 2.5, value = x\'00ff\' WHERE rowid = 1',
               f"UPDATE block SET version = 1e300, label = {BAD}, metadata_ = '{DEEP}' "
               "WHERE rowid = 2",
               f"UPDATE agents SET name = {BAD} WHERE rowid = 1")
    for command in ("inspect", "audit"):
        proc = _cli(command, str(db))
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
    out = _cli("inspect", str(db)).stdout
    for kind in ("bad_value", "bad_text", "bad_json"):
        assert kind in out
    assert "elfmem" not in out


@pytest.mark.parametrize("value", ["'inf'", "1e308", "-5"])
def test_an_impossible_active_hour_clock_is_a_problem_not_an_input(tmp_path, value):
    """``total_active_hours`` of inf, 1e308 or -5 reached the audit's session clock and the
    simulation's instance (mean session inf or -48.6 s) with no problem row."""
    from memlab.sim import load_instance

    db = _copy(ELFMEM, tmp_path / "clock.db",
               f"UPDATE system_config SET value = {value} WHERE key = 'total_active_hours'")
    store = load_elfmem(db)
    bad = store.problems[store.problems["kind"] == "bad_value"]
    assert bad["message"].str.contains("config.total_active_hours").any()
    assert pd.isna(store.frames["config"]["total_active_hours"].iloc[0])
    inst, _ = load_instance(db)
    assert 0 <= inst.total_active_hours < 1e6 and math.isfinite(inst.mean_session_hours)
    assert inst.provenance["total_active_hours"] != "store: config.total_active_hours"
