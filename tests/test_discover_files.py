"""`memlab discover FOLDER` lists every store file memlab can load in it, not only agent homes."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from memlab.sources.discover import discover

REPO = Path(__file__).resolve().parents[1]


def test_bundled_databases_and_agent_files_are_listed_with_their_kind():
    found = discover(REPO / "data")
    kind = dict(zip(found["path"].map(lambda p: Path(p).name), found["kind"].astype(str)))
    assert kind["elfmem-demo.db"] == "elfmem_db"
    assert kind["elfmem-0.20.0-schema9.db"] == "elfmem_db"
    assert {kind[n] for n in ("ezra.af", "customer_service.af", "deep-thought.af",
                              "deep_research_agent.af")} == {"agent_file"}
    assert kind["letta-0.11.7.db"] == "letta_server"
    assert kind["elfmem-substrate"] == "elfmem_substrate"  # the folder kinds still come first
    demo = found[found["agent_id"] == "elfmem-demo"].iloc[0]
    assert demo["bytes"] == (REPO / "data/demo/elfmem-demo.db").stat().st_size


def test_only_real_stores_once_each_and_never_hidden_folders(tmp_path):
    shutil.copy(REPO / "data/demo/elfmem-demo.db", tmp_path / "mine.db")
    (tmp_path / "notes.db").write_text("not a database, only named like one")
    (tmp_path / ".cache").mkdir()
    sqlite3.connect(tmp_path / ".cache" / "hidden.db").execute("create table t(x)").connection.close()
    (tmp_path / ".elfmem" / "databases").mkdir(parents=True)
    shutil.copy(REPO / "data/demo/elfmem-demo.db", tmp_path / ".elfmem/databases/alv.db")
    found = discover(tmp_path)
    names = sorted(Path(p).name for p in found["path"])
    assert names == ["alv.db", "mine.db"]  # alv from ~/.elfmem/databases, listed once
