"""A mem0 store nobody here built: the ``mem0_history.db`` that sidhant-sriv/navis_v2 (MIT)
committed, written by mem0ai 0.1.114 (data/samples/mem0/SOURCES.md). It loads with no problem
row, its audit's figures equal counts taken with plain sqlite3 (not memlab's code), it migrates
to Letta Code memfs v2 with one commit per history row at mem0's own times, ``--verify`` finds
0 differences, Letta Code 0.34.12's validator accepts the result, and nothing is written to the
store."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

import memlab
from memlab import kinds, migrate, verify

STORE = Path("samples/mem0/third-party/navis_v2/history.db")
SHA256 = "ab1c345d5f0f48509a82c5b189692c2f41291e6d642c1fce1b75a2c0c7696780"


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _sql(db: Path, query: str) -> list[tuple]:
    """Plain sqlite3 on the immutable file: the independent count the audit is checked with."""
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return list(con.execute(query))
    finally:
        con.close()


def _one(db: Path, query: str):
    return _sql(db, query)[0][0]


@pytest.fixture(scope="module")
def store_path(data_dir) -> Path:
    path = data_dir / STORE
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256  # byte for byte as committed
    return path


@pytest.fixture(scope="module")
def migrated(store_path, tmp_path_factory):
    before = _snapshot(store_path.parent)
    out = tmp_path_factory.mktemp("navis") / "out"
    result = migrate(store_path, out, to="letta", verify=True, retrieval=False)
    assert _snapshot(store_path.parent) == before  # migrating writes nothing beside the store
    return out, result


def _git_log(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "log", *args], capture_output=True, text=True,
                          check=True).stdout


def test_it_loads_as_mem0_with_no_problem_and_nothing_written(store_path):
    before = _snapshot(store_path.parent)
    assert kinds.detect(store_path).kind == "mem0"
    store = memlab.load(store_path)
    assert store.kind == "mem0" and store.problems.empty
    assert store.meta["history_schema"] == "v2" and store.meta["vector_store"] is None
    assert len(store.history) == _one(store_path, "SELECT count(*) FROM history") == 94
    ids = [r[0] for r in _sql(store_path, "SELECT id FROM history ORDER BY rowid")]
    assert list(store.history["id"]) == ids
    assert _snapshot(store_path.parent) == before


def test_the_audit_matches_an_independent_sqlite_count(store_path):
    before = _snapshot(store_path.parent)
    audit = kinds.get("mem0").audit(memlab.load(store_path), near_duplicates=False)
    h = audit.headline
    db = store_path
    deleted = "(SELECT memory_id FROM history WHERE event = 'DELETE')"
    want = {
        "history_events": _one(db, "SELECT count(*) FROM history"),
        "memories_ever": _one(db, "SELECT count(DISTINCT memory_id) FROM history"),
        "memories_deleted": _one(db, f"SELECT count(DISTINCT memory_id) FROM {deleted}"),
        "memories_current": _one(db, "SELECT count(DISTINCT memory_id) FROM history "
                                     f"WHERE memory_id NOT IN {deleted}"),
        "rewrites": _one(db, "SELECT count(*) FROM history WHERE event = 'UPDATE'"),
        "rewritten_memories": _one(db, "SELECT count(DISTINCT memory_id) FROM history "
                                       "WHERE event = 'UPDATE'"),
        "surviving_rewrites": _one(db, "SELECT count(*) FROM history WHERE event = 'UPDATE' "
                                       f"AND memory_id NOT IN {deleted}"),
        "deletions": _one(db, "SELECT count(*) FROM history WHERE event = 'DELETE'"),
        "deletions_without_time": _one(db, "SELECT count(*) FROM history WHERE event = 'DELETE' "
                                           "AND created_at IS NULL AND updated_at IS NULL"),
    }
    # the figures recorded in SOURCES.md
    assert want == {"history_events": 94, "memories_ever": 67, "memories_deleted": 9,
                    "memories_current": 58, "rewrites": 18, "rewritten_memories": 13,
                    "surviving_rewrites": 17, "deletions": 9, "deletions_without_time": 9}
    assert {k: h[k] for k in want} == want
    assert h["rewrites_per_surviving_memory"] == pytest.approx(18 / 58)
    assert h["untimed_deletion_share"] == pytest.approx(1.0)
    assert h["problems"] == 0
    # not checked is null, never 0: no vector store was committed, nor near-duplicates asked
    assert h["memories_unscoped"] is None and h["near_duplicate_pairs"] is None
    # each memory's rewrites, and which deletions have no time, row by row
    lives = audit.tables["lives"].set_index("memory_id")
    per = dict(_sql(db, "SELECT memory_id, sum(event = 'UPDATE') FROM history GROUP BY memory_id"))
    assert lives["rewrites"].astype(int).to_dict() == per
    untimed = {r[0] for r in _sql(db, "SELECT memory_id FROM history WHERE event = 'DELETE' "
                                      "AND created_at IS NULL")}
    assert set(audit.tables["untimed_deletions"]["memory_id"]) == untimed
    assert set(lives.index[lives["deleted"].astype(bool)]) == untimed
    # the store's log holds UPDATE rows that change nothing (old == new): counted as rewrites,
    # as mem0 counts them, and shown apart so the rewrite figure is not read as 18 real edits
    assert _one(db, "SELECT count(*) FROM history WHERE event = 'UPDATE' "
                    "AND old_memory = new_memory") == 14 == h["unchanged_rewrites"]
    assert "(14 left the text as it was)" in audit.summary()
    assert _snapshot(store_path.parent) == before


def test_every_history_row_is_one_commit_at_mem0s_own_time(store_path, migrated):
    out, result = migrated
    assert result.parity["ok"].all() and len(result.parity) > 100  # --verify: 0 differences
    rows = _sql(store_path, "SELECT id, memory_id, event, created_at, updated_at FROM history "
                            "ORDER BY rowid")
    log = _git_log(out, "--reverse", "--format=%at%x09%s%x09%(trailers:key=Mem0-History-Id,"
                                     "valueonly,separator=)")
    replayed = [line.split("\t") for line in log.splitlines() if "\tmem0: " in line]
    assert [r[2] for r in replayed] == [r[0] for r in rows]  # one commit per row, in mem0's order
    verbs = {"ADD": "add", "UPDATE": "rewrite", "DELETE": "delete"}
    stamps = []
    for (at, subject, _), (_, mid, event, created, updated) in zip(replayed, rows):
        assert subject == f"mem0: {verbs[event]} {mid}"
        when = updated if event == "UPDATE" else created
        if when is not None:  # mem0 0.1.114 writes DELETE rows with no time at all
            assert int(at) == int(datetime.fromisoformat(when).timestamp())
        stamps.append(int(at))
    assert stamps == sorted(stamps)  # an untimed deletion never runs the history backwards
    assert len(result.flags[result.flags["kind"] == "untimed_event"]) == 9
    # the tree holds the current memories; a deleted one is in the history only
    files = {p.stem for p in (out / "mem0").glob("*-*.md")}  # not its MEMORY.md index
    current = {r[0] for r in _sql(store_path, "SELECT DISTINCT memory_id FROM history WHERE "
                                              "memory_id NOT IN (SELECT memory_id FROM history "
                                              "WHERE event = 'DELETE')")}
    assert files == current
    # a real rewrite: "Priority is high" -> "Priority is medium", both in the file's history
    mid = "e8f8bd88-eb43-4e1a-adb5-cc9a90fd6419"
    patch = _git_log(out, "--reverse", "-p", "--format=%s", "--", f"mem0/{mid}.md")
    assert "+Priority is high" in patch and "+Priority is medium" in patch
    assert (out / f"mem0/{mid}.md").read_text().endswith("\n---\nPriority is medium")


def test_letta_codes_validator_accepts_the_migrated_repository(migrated, letta_code):
    out, _ = migrated
    assert letta_code.audit(out)["policy"] == "root-marker"
    assert letta_code.audit_errors(out) == []


def test_verify_catches_a_changed_copy(store_path, tmp_path):
    out = tmp_path / "out"
    migrate(store_path, out, to="letta", retrieval=False)
    mid = "e8f8bd88-eb43-4e1a-adb5-cc9a90fd6419"
    f = out / f"mem0/{mid}.md"
    f.write_text(f.read_text().replace("medium", "low"))
    parity = verify(store_path, out, retrieval=False)
    bad = parity[parity["ok"] == False]  # noqa: E712
    assert set(zip(bad["check"], bad["item"])) == {("content", mid)}


def test_the_cli_migrates_and_verifies_it_in_one_line(store_path, tmp_path, capsys):
    from memlab.cli import main

    before = _snapshot(store_path.parent)
    code = main(["migrate", str(store_path), str(tmp_path / "out"), "--to", "letta", "--verify",
                 "--no-retrieval"])
    text = " ".join(capsys.readouterr().out.split())  # the summary wraps at the terminal's width
    assert code == 0 and "58 block(s) into 58 file(s); 96 commit(s)" in text
    assert "0 difference(s)" in text and "9 untimed_event" in text
    assert _snapshot(store_path.parent) == before


@pytest.mark.slow  # renders the audit notebook, near-duplicates with the embedding model
def test_the_audit_report_has_the_figures(store_path, tmp_path, monkeypatch):
    import json

    from memlab.cli import main

    monkeypatch.setenv("MEMLAB_EMBED_PRECISION", "fp32")  # one pair is at cosine 0.901
    before = _snapshot(store_path.parent)
    out = tmp_path / "report"
    assert main(["-q", "report", "audit", str(store_path), "--as-of", "2025-07-10", "--out",
                 str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())["history.db"]
    assert metrics["kind"] == "mem0" and (out / "01-audit.html").stat().st_size > 0
    assert (metrics["history_events"], metrics["memories_current"], metrics["rewrites"],
            metrics["deletions_without_time"], metrics["problems"]) == (94, 58, 18, 9, 0)
    # near-duplicates among current memories: the same todo re-added by later runs
    assert metrics["near_duplicate_pairs"] == 35
    assert _snapshot(store_path.parent) == before
