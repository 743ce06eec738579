"""The ``integrity`` table (issue 28): rewritten memfs histories, made with real git operations
(a server re-creating a repository and a clone following it with a forced fetch and a reset;
an amend), and Letta server checkpoint chains tampered with by direct SQL on copies of the real
fixtures (0.11.7 on SQLite; 0.16.8 on PostgreSQL). Untouched stores give no row."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import memlab
from memlab.audits._integrity import memfs_integrity
from memlab.sources._bundle import unpack_bundle

from letta_server_fixtures import SQLITE_DB, SQLITE_PLAIN, letta_pg  # noqa: F401

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
       "GIT_AUTHOR_NAME": "User user-1", "GIT_AUTHOR_EMAIL": "user-1@letta.ai",
       "GIT_COMMITTER_NAME": "User user-1", "GIT_COMMITTER_EMAIL": "user-1@letta.ai"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "core.hooksPath=/dev/null", *args],
                          check=True, capture_output=True, text=True, env=ENV).stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def kinds(store_or_path) -> list[str]:
    return sorted(memlab.audit(store_or_path).tables["integrity"]["kind"].astype(str))


@pytest.fixture
def server_and_clone(tmp_path):
    """A server-side memory repo with a lived history, and an agent's clone of it."""
    server = tmp_path / "server"
    server.mkdir()
    git(server, "init", "-q", "-b", "main")
    git(server, "config", "receive.denyCurrentBranch", "ignore")
    commit(server, "Initial commit", {".letta/config.json": "{}\n",
                                      "system/human.md": "---\ndescription: h\n---\nMaya\n"})
    for i in range(3):
        commit(server, f"Update system/notes{i} block",
               {f"system/notes{i}.md": "---\ndescription: n\n---\n" + "line\n" * (5 + i)})
    clone = tmp_path / ".letta" / "agents" / "agent-1" / "memory"
    subprocess.run(["git", "clone", "-q", str(server), str(clone)], check=True, env=ENV)
    return server, clone


def _recreate(server: Path) -> str:
    """What letta-ai/letta-code#2203 shows the server doing: a new history from scratch, an
    'Initial commit' and 'Backfill … block' commits, forced onto main."""
    git(server, "checkout", "-q", "--orphan", "fresh")
    git(server, "rm", "-q", "-r", "--cached", ".")
    for p in list(server.iterdir()):
        if p.name != ".git":
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    commit(server, "Initial commit", {".letta/config.json": "{}\n"})
    tip = commit(server, "Backfill system/human block",
                 {"system/human.md": "---\ndescription: h\n---\n"})
    git(server, "branch", "-q", "-M", "fresh", "main")
    return tip


def test_untouched_repositories_and_samples_give_no_rows(server_and_clone, tmp_path):
    _, clone = server_and_clone
    assert kinds(clone) == []
    for bundle in ("deep-research-memfs.bundle", "letta-code-v2.bundle"):
        path = Path(__file__).resolve().parents[1] / "data" / "samples" / "memfs" / bundle
        assert kinds(unpack_bundle(path, tmp_path / "unpacked")) == []


def test_the_clone_follows_and_loses_commits_still_in_its_object_store(server_and_clone):
    """One row for the whole event (the forced fetch let go of the old history first, the reset
    last): what was lost, counted from the lost commits themselves, and a recovery that works."""
    server, clone = server_and_clone
    old_tip = git(clone, "rev-parse", "HEAD")
    _recreate(server)
    git(clone, "fetch", "-q", "origin")
    git(clone, "reset", "-q", "--hard", "origin/main")  # the local clone follows
    audit = memlab.audit(clone)
    found = audit.tables["integrity"]
    assert found["kind"].astype(str).tolist() == ["reset_away"]
    row = found.iloc[0]
    assert row["sha"] == old_tip and row["lost"] == 4 and row["produced_by"] == "git"
    # the old history only ever added files: its tree's files and lines are what it added
    files = git(clone, "ls-tree", "-r", "--name-only", old_tip).splitlines()
    lines = sum(len(git(clone, "show", f"{old_tip}:{f}").splitlines()) for f in files)
    assert f"4 commit(s) lost" in row["detail"]
    assert f"{len(files)} file(s), {lines} line(s) added" in row["detail"]
    assert "Backfill" in row["detail"]
    # the recovery command the row gives works, on a copy (memlab itself writes nothing)
    copy = clone.parent / "copy"
    shutil.copytree(clone, copy)
    git(copy, "branch", f"recovered-{old_tip[:12]}", old_tip)
    assert git(copy, "show", f"recovered-{old_tip[:12]}:system/notes2.md").endswith("line")
    assert audit.headline["integrity_findings"] == 1
    assert "integrity:" in audit.summary()


def test_the_audit_writes_nothing_into_the_repository(server_and_clone):
    server, clone = server_and_clone
    _recreate(server)
    git(clone, "fetch", "-q", "origin")
    git(clone, "reset", "-q", "--hard", "origin/main")
    before = sorted((p.relative_to(clone).as_posix(), p.stat().st_mtime_ns, p.stat().st_size)
                    for p in (clone / ".git").rglob("*") if p.is_file())
    memlab.audit(clone)
    after = sorted((p.relative_to(clone).as_posix(), p.stat().st_mtime_ns, p.stat().st_size)
                   for p in (clone / ".git").rglob("*") if p.is_file())
    assert before == after


def test_memlabs_own_migration_has_no_integrity_finding(tmp_path):
    """memlab's migration writes its commits and moves branches with compare-and-swap
    ``update-ref`` (reflogged): what it makes is checked (reflogs present) and clean."""
    out = tmp_path / "migrated"
    memlab.migrate(str(SQLITE_DB), str(out), to="letta", retrieval=False)
    repos = sorted(p.parent for p in out.rglob(".git"))
    assert len(repos) >= 3
    for repo in repos:
        found = memfs_integrity(memlab.load(repo))
        assert found.empty and found.attrs["checked"], (repo, found.attrs["reason"])


# --------------------------------------------------------------------------- Letta server

def _sqlite_case(tmp_path: Path, sql: str) -> Path:
    copy = tmp_path / "letta.db"
    shutil.copyfile(SQLITE_DB, copy)
    with sqlite3.connect(copy) as db:
        db.executescript(sql)
    return copy


HUMAN = "block-88e1c60f-6f67-40ee-9f14-ea417fca4416"   # ezra's human: checkpoints 1..4
TEAM = "block-6d294448-018a-4df7-8ca5-b49696640902"    # team: checkpoints 1..3
PERSONA_ENTRY = "block_hist-f9ba571f-2874-4704-bb45-f98dcf4f925f"

CASES = {
    "sequence_gap": f"DELETE FROM block_history WHERE block_id = '{HUMAN}' AND sequence_number = 2;",
    # (sequence_duplicate is not built: both schemas hold a unique (block_id, sequence_number)
    #  constraint, so a duplicate needs its owner to drop the constraint first)
    "dangling_current": f"UPDATE block SET current_history_entry_id = 'block_hist-gone' WHERE id = '{TEAM}';",
    "foreign_current": f"UPDATE block SET current_history_entry_id = '{PERSONA_ENTRY}' WHERE id = '{TEAM}';",
    "label_mismatch": f"UPDATE block_history SET label = 'persona' WHERE block_id = '{HUMAN}' "
                      "AND sequence_number = 3;",
    "organization_mismatch": f"UPDATE block_history SET organization_id = 'org-other' WHERE "
                             f"block_id = '{HUMAN}' AND sequence_number = 1;",
    "time_backwards": f"UPDATE block_history SET created_at = '2026-01-01 00:00:00' WHERE "
                      f"block_id = '{HUMAN}' AND sequence_number = 3;",
    "value_tampered": f"UPDATE block SET value = 'rewritten by hand', updated_at = "
                      f"'2026-01-01 00:00:00' WHERE id = '{HUMAN}';",
}


def test_the_untouched_server_fixtures_give_no_rows():
    for db in (SQLITE_DB, SQLITE_PLAIN):
        assert memlab.audit(db).headline["integrity_findings"] == 0


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_direct_write_is_one_integrity_row(kind, tmp_path):
    found = memlab.audit(_sqlite_case(tmp_path, CASES[kind])).tables["integrity"]
    assert found["kind"].astype(str).tolist() == [kind], found.to_dict("records")
    assert found["produced_by"].astype(str).tolist() == ["direct_write"]


def test_an_edit_without_a_checkpoint_is_what_servers_do_and_not_a_row(tmp_path):
    later = _sqlite_case(tmp_path, f"UPDATE block SET value = 'edited via the API', updated_at = "
                                   f"'2027-01-01 00:00:00' WHERE id = '{HUMAN}';")
    audit = memlab.audit(later)
    assert audit.headline["integrity_findings"] == 0
    edits = audit.tables["edit_history"].set_index("block_id")
    assert bool(edits.loc[HUMAN, "edited_after_checkpoint"]) is True


def test_direct_writes_on_a_real_0_16_8_postgres_schema(letta_pg):  # noqa: F811
    pg = letta_pg
    assert memlab.audit(pg.dsn("letta")).headline["integrity_findings"] == 0
    pg.psql("postgres", 'CREATE DATABASE tampered TEMPLATE letta')
    try:
        human = pg.psql("tampered", "\\pset format unaligned\n\\pset tuples_only on\n"
                        "SELECT block_id FROM block_history GROUP BY block_id "
                        "HAVING count(*) >= 3 ORDER BY block_id LIMIT 1;").strip()
        pg.psql("tampered", f"DELETE FROM block_history WHERE block_id = '{human}' AND "
                            "sequence_number = 2;")
        pg.grant_reader("tampered")
        found = memlab.audit(pg.dsn("tampered")).tables["integrity"]
        assert found["kind"].astype(str).tolist() == ["sequence_gap"]
        assert found["ref"].iloc[0].startswith(human)
    finally:
        pg.psql("postgres", "DROP DATABASE IF EXISTS tampered")


def test_migrating_a_tampered_server_says_so_and_replays_the_rest(tmp_path, capsys):
    from memlab.cli import main

    db = _sqlite_case(tmp_path, CASES["sequence_gap"])
    out = tmp_path / "out"
    assert main(["migrate", str(db), str(out), "--verify"]) == 0
    printed = capsys.readouterr()
    assert "integrity" in printed.out + printed.err
    result = memlab.migrate(str(db), str(tmp_path / "again"), to="letta", verify=True)
    flags = result.flags[result.flags["kind"] == "integrity"]
    assert flags["item"].tolist() == [HUMAN]
    assert "sequence_gap" in flags["message"].iloc[0] and "not replayed" in flags["message"].iloc[0]
    # the team block's clean chain is still replayed, one commit per checkpoint
    log = subprocess.run(["git", "log", "--all", "--format=%B"], cwd=next(
        p for p in (tmp_path / "again").iterdir() if (p / ".git").exists() and "ezra" in p.name),
        capture_output=True, text=True).stdout
    assert f"Letta-Block: {HUMAN}" not in log and f"Letta-Block: {TEAM}" in log


@pytest.mark.slow
def test_the_audit_report_shows_a_tampered_servers_findings(tmp_path):
    from memlab.report import execute_notebook

    db = _sqlite_case(tmp_path, CASES["foreign_current"])
    result = execute_notebook("audit", {"stores": [str(db)]}, tmp_path / "out")
    html = result.html.read_text()
    assert "History you can trust" in html and "foreign_current" in html
    assert result.metrics[db.name]["integrity_findings"] == 1 if db.name in result.metrics else \
        next(iter(result.metrics.values()))["integrity_findings"] == 1


def test_both_kinds_headlines_carry_integrity_reason(server_and_clone, tmp_path):
    """One metric, one meaning (issue 33 item 3): ``integrity_findings`` with its
    ``integrity_reason`` in every kind's headline. Checked: a count and a null reason (the
    server database, whose chains are always read; a clone with reflogs). Not checked: a null
    count and the reason (a memfs repository whose reflogs are gone)."""
    server_headline = memlab.audit(SQLITE_DB).headline
    assert "integrity_reason" in server_headline and server_headline["integrity_reason"] is None
    assert isinstance(server_headline["integrity_findings"], int)
    _, clone = server_and_clone
    checked = memlab.audit(clone).headline
    assert checked["integrity_findings"] == 0 and checked["integrity_reason"] is None
    shutil.rmtree(clone / ".git" / "logs")
    gone = memlab.audit(clone).headline
    assert gone["integrity_findings"] is None and isinstance(gone["integrity_reason"], str)
    assert set(server_headline) >= {"integrity_findings", "integrity_reason"}


def test_discover_lists_a_bare_repository_and_it_loads(tmp_path):
    """A folder holding a server-side copy (``git clone --bare``) of the bundled v2 sample:
    ``memlab discover`` lists it as a Letta memfs store, and the path it gives loads with the
    checkout's files and history (bare repositories load, issue 33 item 1)."""
    bundle = Path(__file__).resolve().parents[1] / "data" / "samples" / "memfs" / \
        "letta-code-v2.bundle"
    root = tmp_path / "fleet"
    root.mkdir()
    bare = root / "memory.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(bare)], check=True, env=ENV)
    (root / "notes").mkdir()  # negative control: a plain folder is not a store
    (root / "notes" / "todo.txt").write_text("not a store\n")
    found = memlab.discover(root)
    assert found["path"].tolist() == [str(bare)], found
    row = found.iloc[0]
    store = memlab.load(row["path"])
    checkout = memlab.load(unpack_bundle(bundle, tmp_path / "unpacked"))
    # the loader's layout; the last commit read from the bare repo; no working tree to count
    # (null, with the reason), where before the row said "not in a git repository"
    assert row["kind"] == "letta_memfs" and row["layout"] == checkout.meta["layout"], row
    assert pd.notna(row["last_commit"]) and pd.isna(row["files"]) and pd.isna(row["bytes"])
    assert "bare repository" in row["problem"] and "not in a git" not in row["problem"]
    assert sorted(store.files["path"]) == sorted(checkout.files["path"])
    assert set(store.history["sha"]) == set(checkout.history["sha"])
    got = subprocess.run([sys.executable, "-m", "memlab", "discover", str(root)],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert got.returncode == 0 and "memory.git" in got.stdout, got.stderr[-1500:]
