"""JSON held in a store's columns is read by the one JSON reader (memlab.formats._json): a
repeated key or a lone surrogate is a problem row naming the column and row, as for an Agent
File, not read in silence (issue 23: the Letta server loader used plain json.loads)."""

from __future__ import annotations

import shutil
import sqlite3

import memlab


def _problems(store, kind):
    p = store.problems
    return p[p["kind"] == kind]["message"].tolist()


def test_letta_server_json_columns_report_repeated_keys_and_lone_surrogates(tmp_path, data_dir):
    db = tmp_path / "letta.db"
    shutil.copy2(data_dir / "samples" / "letta-server" / "letta-0.11.7.db", db)
    with sqlite3.connect(db) as conn:
        (block,) = conn.execute("SELECT id FROM block ORDER BY id LIMIT 1").fetchone()
        conn.execute("UPDATE block SET metadata_ = ? WHERE id = ?",
                     ('{"owner": "a", "owner": "mallory", "note": "\\ud800x"}', block))
    store = memlab.load(db)
    dup = _problems(store, "duplicate_key")
    assert len(dup) == 1 and "owner" in dup[0] and block in dup[0], dup
    assert any("note" in m for m in _problems(store, "bad_text")), store.problems
    meta = store.frames["blocks"].set_index("block_id").loc[block, "metadata"]
    assert meta["owner"] == "mallory" and meta["note"] == "\ufffdx"  # the last value, as Python


def test_a_clean_letta_server_database_has_no_json_problems(data_dir):
    store = memlab.load(data_dir / "samples" / "letta-server" / "letta-0.11.7.db")
    assert not _problems(store, "duplicate_key") and not _problems(store, "bad_text")


def test_elfmem_token_usage_with_a_repeated_key_is_read_as_python_does_and_said(tmp_path, data_dir):
    db = tmp_path / "elfmem.db"
    shutil.copy2(data_dir / "demo" / "elfmem-demo.db", db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE system_config SET value = ? WHERE key = 'lifetime_token_usage'",
                     ('{"llm_calls": 1, "llm_calls": 2903, "llm_input_tokens": 5}',))
    store = memlab.load(db)
    dup = _problems(store, "duplicate_key")
    assert len(dup) == 1 and "llm_calls" in dup[0], store.problems
    assert int(store.frames["config"]["llm_calls"].iloc[0]) == 2903
