"""Migrating whole Letta servers (databases the real server wrote) to Letta Code memfs repos:
history replayed as commits by its actors, values byte-identical, Letta Code's real hook and
memlab's audit satisfied. These run ``--layout v1`` (the legacy hook); the v2 default is judged by
Letta Code 0.34.12 in tests/test_migrate_v2.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memlab.kinds._memfs._audit import audit_memfs
from memlab.cli import main
from memlab.formats import letta_memfs as fmt
from memlab.migrations import migrate, verify
from memlab.kinds.letta_server._migrate import TRAILER_BLOCK, TRAILER_SEQUENCE, history_trailers
from memlab.kinds.letta_server._load import load_letta_server
from memlab.kinds._memfs._load import load_memfs

from letta_server_fixtures import MANIFEST, SQLITE_DB, SQLITE_PLAIN, letta_pg  # noqa: F401

HOOK = Path(__file__).resolve().parents[1] / "data" / "letta-code" / "pre-commit"


def _git(repo: Path, *args: str, env: dict | None = None, check: bool = True):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=check)


def _log(repo: Path) -> list[dict]:
    out = _git(repo, "log", "--reverse", "--format=%H%x1f%an%x1f%ae%x1f%at%x1f%B%x00", "main").stdout
    rows = []
    for entry in out.split("\x00"):
        entry = entry.strip("\n")
        if entry:
            sha, name, email, at, body = entry.split("\x1f", 4)
            rows.append({"sha": sha, "name": name, "email": email, "at": int(at), "body": body})
    return rows


@pytest.fixture(scope="module")
def sqlite_migrated(tmp_path_factory):
    dest = tmp_path_factory.mktemp("server") / "out"
    result = migrate(SQLITE_DB, dest, retrieval=False, verify=True, layout="v1")
    return load_letta_server(SQLITE_DB), dest, result


def test_one_repo_per_agent_with_parity(sqlite_migrated):
    store, dest, result = sqlite_migrated
    assert sorted(p.name for p in dest.iterdir()) == ["ezra", "juno", "orion", "vega"]
    assert result.differences.empty and result.target == "letta"
    checks = set(result.parity["check"].astype(str))
    assert {"content", "history", "side_record", "read_only", "limit"} <= checks
    # 9 live blocks; the shared team block is written into both ezra's and juno's repos.
    assert "10 block(s) into 10 file(s) across 4 repositories" in str(result)
    assert "deleted_block" in set(result.flags["kind"].astype(str))


def test_values_are_byte_identical(sqlite_migrated):
    store, dest, _ = sqlite_migrated
    live = store.blocks[~store.blocks["is_deleted"]]
    names = dict(zip(store.agents["agent_id"], store.agents["name"]))
    checked = 0
    for link in store.block_agents.itertuples(index=False):
        block = live[live["block_id"] == link.block_id]
        if block.empty:
            continue
        text = (dest / names[link.agent_id] / "system" / f"{link.block_label}.md").read_bytes()
        _, body, _ = fmt.split_frontmatter(text.decode("utf-8"))
        assert body.encode("utf-8") == block["value"].iloc[0].encode("utf-8")
        checked += 1
    assert checked == 10


def test_commits_per_block_equal_its_history_length(sqlite_migrated):
    store, dest, _ = sqlite_migrated
    labels = dict(zip(store.blocks["block_id"], store.blocks["label"]))
    seen = []
    for repo in sorted(dest.iterdir()):
        per_block: dict[str, list[int]] = {}
        for c in _log(repo):
            t = history_trailers(c["body"])
            if TRAILER_BLOCK in t:
                per_block.setdefault(t[TRAILER_BLOCK], []).append(int(t[TRAILER_SEQUENCE]))
        side = json.loads((repo / ".memlab" / "letta-blocks.json").read_text())
        for rec in side["blocks"]:
            seqs = per_block.get(rec["block_id"], [])
            assert seqs == list(range(1, len(seqs) + 1))  # replayed in sequence order
            seen.append([f"{repo.name}/{labels[rec['block_id']]}", len(seqs)])
    expected = [e for e in MANIFEST["letta-0.11.7.db"]["counts"]["history_per_block"]
                if not e[0].endswith("/old_notes")]  # deleted on the server: not migrated
    assert sorted(seen) == expected


def test_history_commits_are_authored_by_the_actor_at_the_history_time(sqlite_migrated):
    store, dest, _ = sqlite_migrated
    hist = store.block_history.set_index("history_id")
    ezra_id = store.agents.set_index("name").loc["ezra", "agent_id"]
    by_kind = {"agent": 0, "server_user": 0}
    for c in _log(dest / "ezra"):
        hid = next((ln.split(": ", 1)[1] for ln in c["body"].splitlines()
                    if ln.startswith("Letta-History-Id: ")), None)
        kind = fmt.classify_author(c["name"], c["email"])
        if hid is None:
            assert kind == "migration"
            continue
        row = hist.loc[hid]
        assert c["at"] == int(row["created_at"].timestamp())
        assert c["email"].split("@")[0] == row["actor_id"]
        assert kind == str(row["actor_kind"])
        by_kind[kind] += 1
        if row["actor_id"] == ezra_id:
            assert c["name"] == "ezra" and c["email"] == f"{ezra_id}@letta.com"
    # ezra/human: 2 user + 2 agent checkpoints; team: 1 user + 2 agents (juno's and ezra's).
    assert by_kind == {"agent": 4, "server_user": 3}


def test_git_log_p_shows_the_blocks_evolution_then_the_undo(sqlite_migrated):
    _, dest, result = sqlite_migrated
    log = _git(dest / "ezra", "log", "--reverse", "--format=%s", "--", "system/human.md").stdout
    assert log.splitlines() == ["Create system/human block"] + ["Update system/human block"] * 3 \
        + ["migrate: final state of 3 memory block(s) for agent ezra"]
    assert "undone_block" in set(result.flags["kind"].astype(str))
    final = (dest / "ezra" / "system" / "human.md").read_text()
    assert final.endswith("Timezone: UTC.") and "pgvector" not in final  # redo-able seq 4 undone
    assert "pgvector" in _git(dest / "ezra", "show", "HEAD~2:system/human.md").stdout


def test_every_repo_passes_memlabs_audit(sqlite_migrated):
    _, dest, _ = sqlite_migrated
    for repo in sorted(dest.iterdir()):
        store = load_memfs(repo)
        assert store.meta["layout"] == "letta_v1"
        a = audit_memfs(store)
        assert a.headline["findings"] == 0, a.summary()
        assert a.headline["no_verify_commits"] == 0 and a.headline["problems"] == 0


@pytest.mark.skipif(shutil.which("bash") is None, reason="the hook is a bash script")
def test_letta_codes_real_hook_accepts_every_replayed_commit(sqlite_migrated, tmp_path):
    """Re-make each history commit with Letta Code's own pre-commit hook installed."""
    _, dest, _ = sqlite_migrated
    replayed = 0
    for repo in sorted(dest.iterdir()):
        clone = tmp_path / repo.name
        _git(tmp_path, "clone", "-q", str(repo), str(clone))
        hooks = clone / ".git" / "hooks"
        hooks.mkdir(exist_ok=True)
        shutil.copy(HOOK, hooks / "pre-commit")
        (hooks / "pre-commit").chmod(0o755)
        for c in _log(repo):
            if TRAILER_BLOCK not in history_trailers(c["body"]):
                continue
            _git(clone, "checkout", "-q", "-B", "replay", f"{c['sha']}~1")
            changed = _git(clone, "diff-tree", "--no-commit-id", "--name-only", "-r",
                           c["sha"]).stdout.split()
            _git(clone, "checkout", "-q", c["sha"], "--", *changed)
            who = {"GIT_AUTHOR_NAME": c["name"], "GIT_AUTHOR_EMAIL": c["email"],
                   "GIT_COMMITTER_NAME": c["name"], "GIT_COMMITTER_EMAIL": c["email"]}
            done = _git(clone, "-c", "core.hooksPath=.git/hooks", "commit", "-q", "-m", "replay",
                        env=who, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
            replayed += 1
    assert replayed == 12 + 3  # the team block's 3 checkpoints are in both ezra's and juno's


def test_a_server_without_history_gets_one_final_state_commit_per_agent(tmp_path):
    store = load_letta_server(SQLITE_PLAIN)
    result = migrate(SQLITE_PLAIN, tmp_path / "out", retrieval=False, verify=True, layout="v1")
    assert any(n.startswith("No block history existed") for n in result.notes)
    for repo in sorted((tmp_path / "out").iterdir()):
        subjects = [c["body"].splitlines()[0] for c in _log(repo)]
        assert subjects[0] == "chore: initialize memory" and len(subjects) == 3
        assert subjects[1].startswith("migrate: final state of")
        side = json.loads((repo / ".memlab" / "letta-blocks.json").read_text())
        for rec in side["blocks"]:
            row = store.blocks.set_index("block_id").loc[rec["block_id"]]
            assert rec["_last_updated_by_id"] == row["_last_updated_by_id"]
            assert rec["created_at"] and rec["updated_at"]
        assert audit_memfs(load_memfs(repo)).headline["findings"] == 0


def test_rerun_is_unchanged_and_plan_script_makes_the_same_commits(sqlite_migrated, tmp_path):
    _, dest, result = sqlite_migrated
    again = migrate(SQLITE_DB, dest, retrieval=False, layout="v1")
    assert again.mode == "unchanged" and list(again.commits["sha"]) == list(result.commits["sha"])
    planned = migrate(SQLITE_DB, tmp_path / "p", plan=True, layout="v1")
    subprocess.run(["python3", str(planned.script)], check=True, capture_output=True)
    for repo in sorted(dest.iterdir()):
        assert _git(tmp_path / "p" / repo.name, "rev-parse", "main").stdout == \
            _git(repo, "rev-parse", "main").stdout


def test_postgres_server_one_agent_via_cli_with_verify(letta_pg, tmp_path, capsys):
    dsn = letta_pg.dsn("letta")
    dest = tmp_path / "ezra"
    assert main(["migrate", dsn, str(dest), "--agent", "ezra", "--verify", "--no-retrieval",
                 "--layout", "v1"]) == 0
    out = capsys.readouterr().out
    assert "0 difference(s)" in out
    assert (dest / "system" / "human.md").exists() and not (dest / "system" / "style_guide.md").exists()
    per_block: dict[str, int] = {}
    for c in _log(dest):
        t = history_trailers(c["body"])
        if TRAILER_BLOCK in t:
            per_block[t[TRAILER_BLOCK]] = per_block.get(t[TRAILER_BLOCK], 0) + 1
    assert sorted(per_block.values()) == [3, 4]  # team 3, human 4 (manifest: ezra/team, ezra/human)
    parity = verify(dsn, dest, retrieval=False, agent="ezra")
    hist = parity[parity["check"] == "history"]
    assert len(hist) == 3 and hist["ok"].all()  # human, persona (0 rows), team
    # Verify can fail: juno's blocks and history are not what ezra's repository holds.
    wrong = verify(dsn, dest, retrieval=False, agent="juno")
    assert not wrong["ok"].fillna(True).all()


def test_unknown_agent_is_one_line_exit_2(tmp_path, capsys):
    assert main(["migrate", str(SQLITE_DB), str(tmp_path / "x"), "--agent", "nobody"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no agent named or with id 'nobody'" in err[0]
    assert not (tmp_path / "x").exists()


def _with_readme_role(pg) -> str:
    pg.psql("letta", "DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'memlab_ro') "
                     "THEN CREATE ROLE memlab_ro LOGIN PASSWORD 'secret'; END IF; END$$;"
                     "GRANT SELECT ON ALL TABLES IN SCHEMA public TO memlab_ro;")
    return pg.dsn("letta", user="memlab_ro", password="secret")


def test_readme_letta_server_section_runs_against_a_live_server(letta_pg, tmp_path, capsys):
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## A Letta server's database", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    dsn = _with_readme_role(letta_pg)
    code = (code.replace("postgresql://memlab_ro:secret@localhost:5432/letta", dsn)
                .replace('"/tmp/letta-repos"', repr(str(tmp_path / "repos"))))
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "history: 12 checkpoint(s) on 5 block(s)" in out
    assert sorted(p.name for p in (tmp_path / "repos").iterdir()) == ["ezra", "juno", "orion", "vega"]


def test_the_password_of_a_dsn_is_written_nowhere(letta_pg, tmp_path):
    dsn = _with_readme_role(letta_pg)
    planned = migrate(dsn, tmp_path / "p", plan=True, agent="juno")
    done = migrate(dsn, tmp_path / "d", retrieval=False, agent="juno")
    assert "secret" not in planned.script.read_text() and "secret" not in str(done)
    for path in (tmp_path / "d").rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            assert b"secret" not in path.read_bytes(), path
    history = _git(tmp_path / "d", "log", "-p", "--all", "--format=%an %ae %B").stdout
    assert "secret" not in history and "Checkpoint 1 of" in history


def test_without_psycopg_a_dsn_names_the_install(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    assert main(["inspect", "postgresql://u@127.0.0.1:1/letta"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pip install 'memlab[letta-server]'" in err


def test_hostile_names_gaps_and_unknown_actors_still_migrate_with_parity(tmp_path):
    """A copy of the real database, edited the way a damaged or hostile server could be."""
    import sqlite3

    db = tmp_path / "odd.db"
    shutil.copy(SQLITE_DB, db)
    conn = sqlite3.connect(db)
    ezra = conn.execute("SELECT id FROM agents WHERE name = 'ezra'").fetchone()[0]
    human = conn.execute("SELECT block_id FROM blocks_agents WHERE agent_id = ? AND "
                         "block_label = 'human'", (ezra,)).fetchone()[0]
    conn.execute("UPDATE agents SET name = ? WHERE id = ?", ("  .Ezra <root@x>\n", ezra))
    conn.execute("DELETE FROM block_history WHERE block_id = ? AND sequence_number = 2", (human,))
    team = conn.execute("SELECT block_id FROM blocks_agents WHERE agent_id = ? AND "
                        "block_label = 'team'", (ezra,)).fetchone()[0]
    conn.execute("UPDATE block_history SET actor_type = NULL WHERE block_id = ? AND "
                 "sequence_number = 2", (team,))
    conn.commit()
    conn.close()
    store = load_letta_server(db)
    kinds = set(store.problems["kind"].astype(str))
    assert {"history_gap", "unknown_actor"} <= kinds
    result = migrate(db, tmp_path / "out", retrieval=False, verify=True)
    # the gap is an integrity finding: that block moves in its final state, without history
    assert {"unknown_actor", "integrity"} <= set(result.flags["kind"].astype(str))
    repo = tmp_path / "out" / "ezra-root-x"
    log = _log(repo)
    commits_of = {b: [int(history_trailers(c["body"])[TRAILER_SEQUENCE]) for c in log
                      if history_trailers(c["body"]).get(TRAILER_BLOCK) == b] for b in (human, team)}
    assert commits_of == {human: [], team: [1, 2, 3]}
    names = {(c["name"], c["email"]) for c in log}
    assert ("Ezra root@x", f"{ezra}@letta.com") in names        # git-safe author name
    assert ("Letta System", "system@letta.ai") in names          # the unknown actor
    assert audit_memfs(load_memfs(repo)).headline["findings"] == 0
    # git itself (the plan script's commit-tree) makes the same commits from these identities.
    planned = migrate(db, tmp_path / "p", plan=True)
    subprocess.run(["python3", str(planned.script)], check=True, capture_output=True)
    assert _git(tmp_path / "p" / repo.name, "rev-parse", "main").stdout == \
        _git(repo, "rev-parse", "main").stdout
