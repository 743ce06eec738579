"""The Letta server audit on databases the real server wrote (values the fixture script made)."""

from __future__ import annotations

import json

import memlab
from memlab.cli import main

from letta_server_fixtures import MANIFEST, SQLITE_DB, SQLITE_PLAIN, letta_pg  # noqa: F401


def test_sqlite_audit_tables_hold_the_scenario():
    a = memlab.audit(SQLITE_DB, as_of="2026-12-02")
    h = a.headline
    c = MANIFEST["letta-0.11.7.db"]["counts"]
    assert h["n_agents"] == c["agents"] and h["n_blocks"] == c["blocks"] - c["blocks_deleted"]
    assert h["history_rows"] == c["block_history"]
    assert (h["history_by_agent"], h["history_by_user"]) == (c["history_letta_agent"],
                                                             c["history_letta_user"])
    assert h["n_stale_blocks"] == 0 and h["n_deleted_blocks"] == 1
    core = a["core_memory"].set_index("name")
    assert core.loc["ezra", "n_blocks"] == 3 and core.loc["orion", "n_blocks"] == 2
    assert core.loc["ezra", "limit_chars"] == 2000 + 1000 + 3000
    shared = a["shared_blocks"]
    assert shared["label"].tolist() == ["team"] and shared["agents"].iloc[0] == ["ezra", "juno"]
    assert set(shared["editors"].iloc[0]) == {"default_user", "ezra", "juno"}
    edits = a["edit_history"].set_index("label")
    human = a["edit_history"][a["edit_history"]["agents"].apply(lambda x: x == ["ezra"])
                              & (a["edit_history"]["label"] == "human")].iloc[0]
    assert (human["checkpoints"], human["by_agent"], human["by_user"]) == (4, 2, 2)
    assert human["undone"] and human["current_sequence"] == 3 and human["redo_available"] == 1
    assert bool(edits.loc["team", "edited_after_checkpoint"])  # the uncheckpointed last edit
    assert a["undo_redo"]["label"].tolist() == ["human"]
    ro = a["read_only_edited"]
    assert ro["label"].tolist() == ["persona"] and ro["agents"].iloc[0] == ["juno"]
    assert (ro["by_agent"].iloc[0], ro["by_user"].iloc[0]) == (1, 1)
    actors = a["history_by_actor"].set_index("actor_name")
    assert actors.loc["Ops Admin", "checkpoints"] == 2 and actors.loc["ezra", "checkpoints"] == 3
    assert a["deleted_blocks"]["label"].tolist() == ["old_notes"]


def test_stale_blocks_are_measured_against_as_of():
    a = memlab.audit(SQLITE_DB, as_of="2027-06-01")
    assert a.headline["n_stale_blocks"] == 9
    assert (a["stale_blocks"]["days_since_update"] > 170).all()


def test_audit_of_a_server_without_history_says_so():
    a = memlab.audit(SQLITE_PLAIN, as_of="2026-12-02")
    (rows,) = _sqlite_count(SQLITE_PLAIN, "SELECT COUNT(*) FROM block_history")
    assert a.headline["history_rows"] == rows == 0
    # what only block_history records is not known: null, never 0 (issue 26)
    for name in ("n_blocks_undone", "n_blocks_edited_after_checkpoint", "n_read_only_edited",
                 "history_by_agent", "history_by_user", "history_by_unknown"):
        assert a.headline[name] is None, name
    assert "history: none" in a.summary()


def _sqlite_count(path, query):
    import sqlite3

    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return con.execute(query).fetchone()
    finally:
        con.close()


def test_postgres_audit_through_the_cli(letta_pg, capsys):
    assert main(["audit", letta_pg.dsn("letta"), "--as-of", "2026-12-02", "--json"]) == 0
    h = json.loads(capsys.readouterr().out)["headline"]
    c = MANIFEST["letta-0.16.8.sql"]["counts"]
    assert h["n_blocks_over_limit"] == c["blocks_over_limit"] == 2
    assert h["n_blocks_undone"] == c["blocks_undone"] == 2  # ezra/human and juno/human
    assert h["letta_release"] == "letta 0.16.8 (alembic head 1c28e167b74f)"
    a = memlab.audit(letta_pg.dsn("letta"), as_of="2026-12-02")
    over = a["blocks_over_limit"].set_index("label")
    assert over.loc["scratch", "limit"] == 20 and over.loc["scratch", "excess"] == 14
    assert over.loc["persona", "agents"] == ["ezra"]
    assert sorted(map(tuple, a["undo_redo"][["label", "current_sequence"]].values.tolist())) == \
        [("human", 1), ("human", 3)]


def test_no_block_history_table_is_integrity_not_checked_never_0_nor_findings(tmp_path):
    """integrity_findings is null when nothing could be judged in both kinds (memfs: no
    reflogs). A database without block_history has no checkpoint chains: before, its blocks'
    current_history_entry_id pointers each made a dangling_current row (5 findings)."""
    import shutil
    import sqlite3

    db = tmp_path / "nohist.db"
    shutil.copy2(SQLITE_DB, db)
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE block_history")
        (pointers,) = con.execute("SELECT count(*) FROM block WHERE NOT is_deleted AND "
                                  "current_history_entry_id IS NOT NULL").fetchone()
    con.close()
    a = memlab.audit(db)
    assert a.headline["history_rows"] is None
    assert a.headline["integrity_findings"] is None
    assert a.headline["integrity_reason"] == "no block_history table: no checkpoint chains"
    assert a.tables["integrity"].empty and "integrity: not checked" in a.summary()
    # control: with the table, the same database is checked (a number, its reason null)
    b = memlab.audit(SQLITE_DB)
    assert isinstance(b.headline["integrity_findings"], int)
    assert b.headline["integrity_reason"] is None
    assert pointers >= 1  # the pointers the dropped table left dangling were there to count
