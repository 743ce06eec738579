"""Loading Letta server databases written by the real server (letta 0.16.8 on PostgreSQL, letta
0.11.7 on SQLite) and checking memlab's frames against the counts the fixture script read back
through the server's own database session (data/samples/letta-server/manifest.json)."""

from __future__ import annotations

import hashlib
import shutil

import pytest

import memlab
from memlab.errors import SourceError, UnrecognizedStore
from memlab.kinds.letta_server._load import is_dsn, load_letta_server, redact_dsn

from letta_server_fixtures import MANIFEST, SQLITE_DB, SQLITE_PLAIN, letta_pg  # noqa: F401


def _expect_counts(store, entry: dict) -> None:
    c = entry["counts"]
    assert len(store.organizations) == c["organizations"]
    assert len(store.users) == c["users"]
    assert len(store.agents) == c["agents"]
    assert len(store.blocks) == c["blocks"]
    assert int(store.blocks["is_deleted"].sum()) == c["blocks_deleted"]
    assert int(store.blocks["read_only"].sum()) == c["blocks_read_only"]
    assert int(store.blocks["over_limit"].sum()) == c["blocks_over_limit"]
    assert len(store.block_agents) == c["block_agents"]
    assert int(store.blocks["shared"].sum()) == c["shared_blocks"]
    assert len(store.block_history) == c["block_history"]
    kinds = store.block_history["actor_kind"].astype(str).value_counts()
    assert kinds.get("server_user", 0) == c["history_letta_user"]
    assert kinds.get("agent", 0) == c["history_letta_agent"]
    assert store.block_history["block_id"].nunique() == c["blocks_with_history"]
    undone = store.blocks["current_sequence"] < store.blocks["history_len"]
    assert int(undone.fillna(False).sum()) == c["blocks_undone"]
    assert len(store.block_tags) == (c["block_tags"] or 0)
    assert sum(len(t) for t in store.agents["tags"]) == c["agent_tags"]
    names = dict(zip(store.agents["agent_id"], store.agents["name"]))
    labels = dict(zip(store.blocks["block_id"], store.blocks["label"]))
    per_block = sorted([f"{names[a]}/{labels[b]}",
                        int(store.blocks.set_index("block_id").loc[b, "history_len"])]
                       for a, b in zip(store.block_agents["agent_id"], store.block_agents["block_id"]))
    assert per_block == entry["counts"]["history_per_block"]


def test_sqlite_0_11_7_counts_match_what_the_server_reported():
    before = hashlib.sha256(SQLITE_DB.read_bytes()).hexdigest()
    store = memlab.load(SQLITE_DB)
    assert store.kind == "letta_server"
    _expect_counts(store, MANIFEST["letta-0.11.7.db"])
    assert store.meta["letta_release"].startswith("letta <= 0.11.7")
    # Probed by name: 0.11.7 has no block.hidden column and no blocks_tags table.
    assert store.meta["absent"]["block"] == ["hidden"]
    assert store.meta["absent"]["blocks_tags"] == ["(table)"]
    assert store.blocks["hidden"].isna().all()
    assert store.problems.empty
    assert hashlib.sha256(SQLITE_DB.read_bytes()).hexdigest() == before


def test_sqlite_without_history_is_what_real_servers_hold():
    store = load_letta_server(SQLITE_PLAIN)
    _expect_counts(store, MANIFEST["letta-0.11.7-nohistory.db"])
    assert store.meta["history_empty"] is True
    assert store.blocks["current_history_entry_id"].isna().all()


def test_postgres_0_16_8_counts_match_what_the_server_reported(letta_pg):
    dsn = letta_pg.dsn("letta")
    store = memlab.load(dsn)
    assert store.kind == "letta_server"
    _expect_counts(store, MANIFEST["letta-0.16.8.sql"])
    assert store.meta["alembic_revision"] == MANIFEST["letta-0.16.8.sql"]["alembic_head"]
    assert store.meta["letta_release"] == "letta 0.16.8 (alembic head 1c28e167b74f)"
    assert store.meta["transaction"] == "read only, repeatable read"
    assert store.problems.empty, store.problems.to_string()


def test_inspect_a_dsn_names_it_whole(letta_pg, capsys):
    from memlab.cli import main

    dsn = letta_pg.dsn("letta")
    assert main(["inspect", dsn]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"letta_server  {dsn}"
    assert "block_history    12" in out


def test_postgres_frames_are_typed_and_hold_the_server_values(letta_pg):
    store = load_letta_server(letta_pg.dsn("letta"))
    b = store.blocks
    assert str(b["created_at"].dtype) == "datetime64[ns, UTC]"
    assert str(b["limit"].dtype) == "Int64" and str(b["read_only"].dtype) == "boolean"
    assert str(store.block_history["actor_kind"].dtype) == "category"
    team = b[b["label"] == "team"].iloc[0]
    assert team["tags"] == ["shared", "team"] and team["metadata"] == {"shared": True}
    assert team["n_agents"] == 2 and team["history_len"] == 3 and team["current_sequence"] == 3
    assert team["value"].endswith("(edited after the last checkpoint)")
    style = b[b["label"] == "style_guide"].iloc[0]
    assert style["is_template"] and style["template_name"] == "house-style" and style["hidden"]
    assert style["metadata"] == {"template_version": 3}
    # ezra/human: undone twice, redone once: current is seq 3 of 4, and it is that row's value.
    ezra = store.agents.set_index("name").loc["ezra", "agent_id"]
    human_id = store.block_agents[(store.block_agents["agent_id"] == ezra)
                                  & (store.block_agents["block_label"] == "human")]["block_id"].iloc[0]
    hist = store.block_history[store.block_history["block_id"] == human_id]
    assert list(hist["sequence_number"]) == [1, 2, 3, 4]
    assert list(hist["actor_kind"].astype(str)) == ["server_user", "server_user", "agent", "agent"]
    assert list(hist["is_current"]) == [False, False, True, False]
    assert hist[hist["is_current"]]["value"].iloc[0] == b.set_index("block_id").loc[human_id, "value"]
    # The ops user's checkpoint names a different user than the default actor.
    assert hist["actor_id"].iloc[1] != hist["actor_id"].iloc[0]
    assert hist["actor_id"].iloc[2] == ezra


def test_postgres_read_is_read_only(letta_pg):
    dsn = letta_pg.dsn("letta")
    before = letta_pg.psql("letta", "SELECT md5(string_agg(id || value || version, ',' ORDER BY id)) "
                                    "FROM block")
    load_letta_server(dsn)
    after = letta_pg.psql("letta", "SELECT md5(string_agg(id || value || version, ',' ORDER BY id)) "
                                   "FROM block")
    assert before == after
    # The loader's connection is a read-only transaction: prove the session setting is real.
    import psycopg

    from memlab.kinds.letta_server._pg import connect as _connect_postgres

    conn = _connect_postgres(dsn)
    try:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("UPDATE public.block SET value = 'x'")
    finally:
        conn.rollback()
        conn.close()


def test_a_select_only_role_is_enough(letta_pg):
    letta_pg.psql("letta", "DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = "
                           "'memlab_ro') THEN CREATE ROLE memlab_ro LOGIN; END IF; END$$;"
                           "GRANT SELECT ON ALL TABLES IN SCHEMA public TO memlab_ro;")
    store = load_letta_server(letta_pg.dsn("letta", user="memlab_ro"))
    assert len(store.blocks) == MANIFEST["letta-0.16.8.sql"]["counts"]["blocks"]


def test_unreachable_dsn_is_one_line_naming_it_without_the_password(letta_pg, capsys):
    from memlab.cli import main

    dsn = f"postgresql://someone:hunter2@127.0.0.1:{letta_pg.port}/no_such_db"
    with pytest.raises(SourceError) as err:
        load_letta_server(dsn)
    assert "no_such_db" in str(err.value) and "hunter2" not in str(err.value)
    assert main(["inspect", dsn]) == 2
    out = capsys.readouterr().err.strip().splitlines()
    assert len(out) == 1 and "cannot connect" in out[0] and "hunter2" not in out[0]


def test_a_database_that_is_not_letta_is_refused(letta_pg):
    with pytest.raises(UnrecognizedStore, match="not a Letta server database"):
        load_letta_server(letta_pg.dsn("postgres"))


def test_unknown_alembic_revision_and_history_gap_are_problem_rows(letta_pg):
    letta_pg.psql("postgres", "CREATE DATABASE letta_odd TEMPLATE letta")
    try:
        letta_pg.psql("letta_odd", "UPDATE alembic_version SET version_num = 'ffffffffffff';"
                                   "DELETE FROM block_history WHERE sequence_number = 2 AND "
                                   "block_id IN (SELECT block_id FROM block_history GROUP BY "
                                   "block_id HAVING count(*) = 4);")
        store = load_letta_server(letta_pg.dsn("letta_odd"))
    finally:
        letta_pg.psql("postgres", "DROP DATABASE letta_odd")
    kinds = store.problems["kind"].astype(str).tolist()
    assert "unknown_schema" in kinds and store.meta["letta_release"].startswith("unknown")
    gap = store.problems[store.problems["kind"] == "history_gap"]["message"].tolist()
    assert len(gap) == 1 and "missing [2]" in gap[0]


def test_sqlite_that_is_not_letta_is_not_taken_for_letta(tmp_path):
    import sqlite3

    db = tmp_path / "other.db"
    sqlite3.connect(db).executescript("CREATE TABLE block (id TEXT); CREATE TABLE x (y);")
    with pytest.raises(UnrecognizedStore):
        load_letta_server(db)


def test_sqlite_live_copy_is_not_changed_by_loading(tmp_path):
    db = tmp_path / "sqlite.db"
    shutil.copy(SQLITE_DB, db)
    listing = sorted(p.name for p in tmp_path.iterdir())
    store = load_letta_server(db)
    assert len(store.blocks) == 10
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


def test_dsn_helpers():
    assert is_dsn("postgresql://u@h/db") and is_dsn("postgres://h/db") and not is_dsn("x.db")
    assert redact_dsn("postgresql://u:secret@h:5/db") == "postgresql://u:***@h:5/db"
    assert redact_dsn("postgresql://u@h/db") == "postgresql://u@h/db"


def test_discover_lists_the_agents_of_a_local_letta_sqlite_server(tmp_path):
    from memlab.sources.discover import discover

    (tmp_path / ".letta").mkdir()
    shutil.copy(SQLITE_DB, tmp_path / ".letta" / "sqlite.db")
    inv = discover(tmp_path)
    rows = inv[inv["kind"] == "letta_server"]
    assert sorted(rows["name"]) == ["ezra", "juno", "orion", "vega"]
    assert rows["problem"].isna().all()
    assert set(rows["agent_id"]) == set(load_letta_server(SQLITE_DB).agents["agent_id"])
