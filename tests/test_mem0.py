"""The mem0 kind on stores the real mem0ai 0.1.90 and 2.2.1 wrote (data/samples/mem0/, see its
SOURCES.md): detected before elfmem, loaded read-only in both history shapes, audited, found,
and bad input refused in one line or reported as a problem row."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

import memlab
from memlab import kinds
from memlab.errors import MemlabError
from memlab.kinds import Search

VERSIONS = ("0.1.90", "2.2.1")


@pytest.fixture(params=VERSIONS)
def sample(request, data_dir) -> Path:
    return data_dir / "samples" / "mem0" / request.param


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _scenario(sample: Path) -> dict:
    return json.loads((sample / "scenario.json").read_text())


def test_a_mem0_history_goes_to_mem0_and_an_elfmem_database_does_not(sample, data_dir):
    ev = kinds.detect(sample / "history.db")
    assert ev.kind == "mem0" and "history table" in ev.reason
    # negative controls both ways: elfmem's and a Letta server's SQLite stay theirs
    assert kinds.detect(data_dir / "demo" / "elfmem-demo.db").kind == "elfmem_db"
    for db in sorted((data_dir / "samples" / "letta-server").glob("*.db"))[:1]:
        assert kinds.detect(db).kind == "letta_server"
    assert kinds.get("mem0").priority > kinds.get("elfmem_db").priority


def test_a_sqlite_file_with_another_history_table_is_not_mem0(tmp_path):
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE history (id TEXT, command TEXT, at TEXT)")
    assert kinds.detect(db).kind == "elfmem_db"  # the generic SQLite kind, not mem0


def test_both_history_shapes_load_read_only_into_the_lives_mem0_wrote(sample):
    before = _digest(sample)
    store = memlab.load(sample / "history.db")
    assert _digest(sample) == before  # nothing in the folder changed
    sc = _scenario(sample)
    h, m = store.history, store.memories
    assert len(h) == len(sc["steps"]) == 18
    assert h["event"].value_counts().to_dict() == {"ADD": 10, "UPDATE": 5, "DELETE": 3}
    assert len(m) == 10 and int(m["deleted"].sum()) == 3
    ids = sc["memory_ids"]
    life = m.set_index("memory_id")
    assert life.loc[ids["city"], "rewrites"] == 2 and not life.loc[ids["city"], "deleted"]
    assert life.loc[ids["bob_trip"], "rewrites"] == 1 and life.loc[ids["bob_trip"], "deleted"]
    assert life.loc[ids["city"], "first_added"].isoformat() == "2026-09-01T09:01:00+00:00"
    # the ids live only in the vector store's payloads: known for current memories only
    assert life.loc[ids["bob_budget"], "agent_id"] == "travel-agent"
    assert life.loc[ids["run_note"], ["user_id", "run_id"]].isna().all()
    assert len(store.payloads) == 7 and store.payloads["hash_ok"].all()
    assert set(store.payloads["memory_id"]) == set(life.index[~life["deleted"]])
    assert store.problems.empty


def test_the_versions_tables_differ_and_each_is_read_as_it_is(data_dir):
    old = memlab.load(data_dir / "samples/mem0/0.1.90/history.db")
    new = memlab.load(data_dir / "samples/mem0/2.2.1/history.db")
    assert old.meta["history_schema"] == "v1" and "new_value" in old.meta["history_columns"]
    assert new.meta["history_schema"] == "v2" and "actor_id" in new.meta["history_columns"]
    assert not old.meta["has_messages"] and new.meta["has_messages"]
    # 0.1.x wrote no time on a DELETE: null, not a made-up time; 2.x writes one
    assert old.history.loc[old.history["event"] == "DELETE", "at"].isna().all()
    assert old.memories.loc[old.memories["deleted"], "deleted_at"].isna().all()
    assert new.memories.loc[new.memories["deleted"], "deleted_at"].notna().all()
    # 0.1.x recorded no actor; 2.x the message's name where one was given
    assert old.memories["actor_id"].isna().all()
    assert new.memories["actor_id"].dropna().unique().tolist() == ["alice"]


def _audit(path: Path, **options):
    return kinds.get("mem0").audit(memlab.load(path), as_of="2026-10-10", **options)


def test_the_audit_measures_the_lives_and_the_churn(sample):
    a = _audit(sample / "history.db", near_duplicates=False)
    f = a.headline
    assert (f["memories_ever"], f["memories_current"], f["memories_deleted"]) == (10, 7, 3)
    assert f["rewrites"] == 5 and f["rewritten_memories"] == 3 and f["surviving_rewrites"] == 4
    assert f["rewrites_per_surviving_memory"] == pytest.approx(5 / 7)
    assert f["events_per_surviving_memory"] == pytest.approx(18 / 7)
    untimed = 3 if sample.name == "0.1.90" else 0
    assert f["deletions"] == 3 and f["deletions_without_time"] == untimed
    assert f["untimed_deletion_share"] == pytest.approx(untimed / 3)
    assert f["near_duplicate_pairs"] is None and "near_duplicates" not in a.tables
    churn = a["churn"]
    assert churn[["ADD", "UPDATE", "DELETE"]].to_numpy().sum() == 18
    assert churn["week"].isna().sum() == (1 if untimed else 0)
    scopes = a["scopes"].set_index(["scope", "id"])
    assert scopes.loc[("user_id", "alice"), "current"] == 5
    assert scopes.loc[("agent_id", "travel-agent"), "rewrites"] == 2
    js = json.loads(a.to_json(tables=True))
    assert js["headline"]["deletions_without_time"] == untimed and "lives" in js["tables"]


def test_ages_are_null_for_memories_added_after_as_of(data_dir):
    path = data_dir / "samples/mem0/2.2.1/history.db"
    audit = kinds.get("mem0").audit
    later = audit(memlab.load(path), as_of="2026-10-10", near_duplicates=False)["lives"]
    assert later["age_days"].notna().all() and (later["age_days"] > 0).all()
    # the events run 2026-09-01 .. 2026-10-03: on 2026-09-02 only the first day's memories exist
    mid = audit(memlab.load(path), as_of="2026-09-02", near_duplicates=False)["lives"]
    added = mid["first_added"] <= pd.Timestamp("2026-09-02", tz="UTC")
    assert added.any() and (~added).any()
    assert (mid.loc[added, "age_days"] >= 0).all() and mid.loc[~added, "age_days"].isna().all()


@pytest.mark.slow  # loads the embedding model
def test_near_duplicates_among_current_memories_with_memlabs_embedder(data_dir):
    a = memlab.audit(data_dir / "samples/mem0/2.2.1/history.db", as_of="2026-10-10")
    # the two green-tea lines (cosine 0.99); the two vegetarian lines (0.855) stay under 0.90
    dupes = a["near_duplicates"]
    assert a.headline["near_duplicate_pairs"] == 1 == len(dupes)
    assert {dupes["text_a"].iloc[0], dupes["text_b"].iloc[0]} == {
        "Alice drinks green tea every morning.", "Alice drinks green tea each morning."}
    assert dupes["similarity"].iloc[0] > 0.95
    # a deleted memory is not current: with the tea line gone the pair is gone
    store = memlab.load(data_dir / "samples/mem0/2.2.1/history.db")
    tea = _scenario(data_dir / "samples/mem0/2.2.1")["memory_ids"]["tea"]
    store.memories.loc[store.memories["memory_id"] == tea, "deleted"] = True
    assert kinds.get("mem0").audit(store).headline["near_duplicate_pairs"] == 0


def test_a_store_without_rewrites_or_deletions_gives_0_and_null_where_unknown(tmp_path, data_dir):
    src = data_dir / "samples/mem0/2.2.1/history.db"
    db = tmp_path / "history.db"
    shutil.copy2(src, db)
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM history WHERE event != 'ADD'")
    f = kinds.get("mem0").audit(memlab.load(db), near_duplicates=False).headline
    assert f["rewrites"] == 0 and f["deletions"] == 0 and f["deletions_without_time"] == 0
    assert f["rewrites_per_surviving_memory"] == 0.0
    assert f["untimed_deletion_share"] is None  # no deletion: nothing to share out
    assert f["near_duplicate_pairs"] is None  # not checked
    assert f["memories_unscoped"] is None  # no vector store beside this copy


def test_a_truncated_history_db_is_one_line_naming_the_file(tmp_path, data_dir):
    db = tmp_path / "history.db"
    db.write_bytes((data_dir / "samples/mem0/2.2.1/history.db").read_bytes()[:5000])
    assert kinds.detect(db).kind == "mem0"
    with pytest.raises(MemlabError) as exc:
        memlab.load(db)
    assert str(db) in str(exc.value) and "\n" not in str(exc.value).strip()


def test_a_non_mem0_sqlite_given_to_the_mem0_loader_is_refused_by_name(tmp_path, data_dir):
    with pytest.raises(MemlabError, match="no mem0 history table") as exc:
        kinds.get("mem0").load(data_dir / "demo" / "elfmem-demo.db")
    assert "elfmem-demo.db" in str(exc.value)


def test_a_bad_payload_file_is_a_problem_row_not_a_traceback(tmp_path, data_dir):
    folder = tmp_path / "store"
    shutil.copytree(data_dir / "samples/mem0/2.2.1", folder)
    points = folder / "qdrant/collection/mem0/storage.sqlite"
    with sqlite3.connect(points) as c:
        first = c.execute("SELECT rowid FROM points ORDER BY rowid LIMIT 1").fetchone()[0]
        c.execute("UPDATE points SET point = ? WHERE rowid = ?", (b"\x80\x04garbage", first))
        # a pickle that would run code if unpickled normally: memlab builds an inert record
        evil = b"cos\nsystem\n(S'touch " + str(tmp_path / "pwned").encode() + b"'\ntR."
        c.execute("INSERT INTO points VALUES ('x', ?)", (evil,))
    store = memlab.load(folder / "history.db")
    assert not (tmp_path / "pwned").exists()
    kinds_ = store.problems["kind"].astype(str).tolist()
    assert kinds_.count("bad_point") == 2
    assert len(store.payloads) == 6
    # a memory whose payload is unreadable is still in its life table, with unknown ids
    assert store.memories["in_vector_store"].sum() == 6
    # a payloads file that is not SQLite at all
    points.write_bytes(b"not a database at all" * 10)
    store = memlab.load(folder / "history.db")
    assert "bad_vector_store" in store.problems["kind"].astype(str).tolist()
    assert str(points) in store.problems["message"].iloc[0] + store.problems["file"].iloc[0]


def test_discover_finds_the_home_store_and_mem0_dir(tmp_path, data_dir, monkeypatch):
    home = tmp_path / "home"
    (home / ".mem0").mkdir(parents=True)
    shutil.copy2(data_dir / "samples/mem0/2.2.1/history.db", home / ".mem0" / "history.db")
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy2(data_dir / "samples/mem0/0.1.90/history.db", other / "history.db")
    (home / ".mem0b").mkdir()
    (home / ".mem0b" / "history.db").write_bytes(b"SQLite format 3\x00" + b"\0" * 50)
    monkeypatch.setenv("MEM0_DIR", str(other))
    inv = memlab.discover(home)
    rows = inv[inv["kind"] == "mem0"]
    assert rows["path"].tolist() == [str(home / ".mem0" / "history.db")]
    assert rows["name"].iloc[0] == "7 current memories"
    # $MEM0_DIR is the user's own setting: read for the real home only
    found = kinds.get("mem0").find(Search(home=home, real_home=True))
    assert [r["path"] for r in found] == [str(other / "history.db"), str(home / ".mem0/history.db")]
    monkeypatch.setenv("MEM0_DIR", str(home / ".mem0b"))
    bad = list(kinds.get("mem0").find(Search(home=tmp_path / "nohome", real_home=True)))
    assert len(bad) == 1 and bad[0]["problem"] and "history.db" in bad[0]["problem"]


def test_a_hostile_history_gives_problem_rows_and_still_migrates(tmp_path):
    db = tmp_path / "history.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, "
                  "new_memory TEXT, event TEXT, created_at DATETIME, updated_at DATETIME, "
                  "is_deleted INTEGER, actor_id TEXT, role TEXT)")
        rows = [
            ("h1", "m1", None, b"caf\xe9 bytes", "ADD", "2026-01-01T00:00:00+00:00", None, 0),
            ("h2", "m1", "x", "y", "MERGE", "2026-01-02T00:00:00+00:00", None, 0),
            ("h3", "m2", "a", "b", "UPDATE", "not a time", "2026-01-03T00:00:00+00:00", 0),
            ("h4", "../../etc/passwd", None, "z", "ADD", "2026-01-04T00:00:00+00:00", None, 0),
            ("h5", "../../etc/passwd", "z", None, "DELETE", None, "2026-01-05T00:00:00+00:00", 1),
            ("h6", "../../etc/passwd", None, "again", "UPDATE", None, "2026-01-06T00:00:00+00:00", 0),
            ("h7", None, None, "orphan", "ADD", None, None, 0),
        ]
        c.executemany("INSERT INTO history VALUES (?,?,?,?,?,?,?,?,NULL,NULL)", rows)
    store = memlab.load(db)
    got = set(store.problems["kind"].astype(str))
    assert {"bad_text", "unknown_event", "bad_time", "no_add", "event_after_delete",
            "no_memory_id"} <= got
    out = tmp_path / "out"
    result = memlab.migrate(db, out, to="letta", retrieval=False)
    assert not (tmp_path / "etc").exists()
    assert all(str(p.relative_to(out)).startswith(("mem0/", "MEMORY.md", ".")) for p in
               out.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert "unknown_event" in set(result.flags["kind"].astype(str))


def test_the_vector_store_can_be_named_and_a_missing_one_is_refused(tmp_path, data_dir):
    db = tmp_path / "history.db"
    shutil.copy2(data_dir / "samples/mem0/2.2.1/history.db", db)
    alone = memlab.load(db)
    assert alone.payloads.empty and alone.memories["user_id"].isna().all()
    assert alone.memories["in_vector_store"].isna().all()  # not known, not False
    named = memlab.load(db, vectors=data_dir / "samples/mem0/2.2.1/qdrant")
    assert len(named.payloads) == 7 and named.problems.empty
    with pytest.raises(MemlabError, match="no Qdrant folder") as exc:
        memlab.load(db, vectors=tmp_path / "nowhere")
    assert "nowhere" in str(exc.value)
    # the wrong store's payloads: every memory is a problem row, none silently joined
    wrong = memlab.load(db, vectors=data_dir / "samples/mem0/0.1.90/qdrant")
    assert (wrong.problems["kind"].astype(str) == "no_history").sum() == 7


def test_the_messages_table_is_read_where_the_version_has_one(tmp_path, data_dir):
    db = tmp_path / "history.db"
    shutil.copy2(data_dir / "samples/mem0/2.2.1/history.db", db)
    with sqlite3.connect(db) as c:  # what save_messages writes (infer=True adds do)
        c.execute("INSERT INTO messages VALUES ('1', 'user_id=alice', 'user', 'I moved to Porto',"
                  " 'alice', '2026-09-09T08:00:00+00:00')")
    msgs = memlab.load(db).messages
    assert msgs[["session_scope", "role", "content", "name"]].iloc[0].tolist() == [
        "user_id=alice", "user", "I moved to Porto", "alice"]
    assert msgs["created_at"].iloc[0].isoformat() == "2026-09-09T08:00:00+00:00"
    old = memlab.load(data_dir / "samples/mem0/0.1.90/history.db")
    assert old.messages.empty and list(old.messages.columns) == list(msgs.columns)
