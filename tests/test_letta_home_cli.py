"""A Letta Code home memlab did not build: written by the Letta Code 0.34.12 CLI itself (issue 38).

The pinned wheel's ``letta`` runs headless with its local backend and its own deterministic
executor (tests/letta_home_cli.py), offline, with ``HOME`` a temporary folder; memlab writes no
byte of the home. Four agents, each made the way a person makes one:

* healthy: 27 turns from a shell with ``bun`` on PATH, the reflection pass at step 25
  succeeding, then a second session of 30 turns (its own conversation, its own pass) and the
  routine memory commands (``letta memory status``, ``backup``, ``diff``): a backup folder
  beside ``memory/``, the transcript root's ``background/`` scratchpads;
* stalled: 60 turns from a shell without ``bun`` (as a launcher with a bare PATH would start
  it): the pass's subagent cannot run its tool, Letta Code finalizes every pass as failed and
  the steps since the last success keep growing (letta-ai/letta-code#4266's symptom);
* crashed: 26 turns, then the process group is killed while the pass at step 25 runs: its
  worktree stays on disk, and its reflection is stalled too (26 steps against 25, the one pass
  started never finished, nothing has run since);
* notes: one turn, then two memory commits through Letta Code's own pre-commit hook, as the
  repository's configured user: ``reference/build.md`` and, later, ``reference/Build.md``,
  which Letta Code's validator accepts and which cannot both be checked out on macOS or Windows.

Passes need time to be judged: the audit is read at build time (every pass in flight: no
finding) and two hours later (the findings).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import memlab

from letta_home_build import tree_digest
from letta_home_cli import LettaCLI

LATER = pd.Timedelta(hours=2)


def _notes_commits(cli: LettaCLI, agent: str) -> None:
    repo = cli.agent_dir(agent) / "memory"
    ref = repo / "reference"
    ref.mkdir()
    (ref / "build.md").write_text("---\nname: build\ndescription: How the project is built\n"
                                  "---\nThe build uses make; `make test` runs the suite.\n")
    (ref / "MEMORY.md").write_text("# Reference\n- [build](build.md): how the project is built\n")
    cli.git(repo, "add", "reference")
    cli.git(repo, "commit", "-q", "-m", "docs(memory): how the project builds")
    (ref / "Build.md").write_text("---\nname: Build\ndescription: Release build notes\n"
                                  "---\nRelease builds use `make dist`.\n")
    (ref / "MEMORY.md").write_text("# Reference\n- [build](build.md): how the project is built\n"
                                   "- [Build](Build.md): release build notes\n")
    cli.git(repo, "add", "reference")
    cli.git(repo, "commit", "-q", "-m", "docs(memory): release build notes")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    cli = LettaCLI(tmp_path_factory.mktemp("letta-cli-home"),
                   tmp_path_factory.mktemp("letta-cli-project"))
    healthy = cli.session(27)
    cli.session(30, agent=healthy)
    for command in ("status", "backup", "diff"):
        cli.run("memory", command, "--agent", healthy)
    ids = {
        "healthy": healthy,
        "stalled": cli.session(60, bun=False),
        "crashed": cli.session(26, kill_in_pass=True),
        "notes": cli.session(1),
    }
    _notes_commits(cli, ids["notes"])
    return cli, ids, pd.Timestamp.now(tz="UTC")


@pytest.fixture(scope="module")
def loaded(built):
    cli, ids, done = built
    before = tree_digest(cli.root)
    store = memlab.load(cli.letta)
    return store, memlab.audit(store, as_of=done + LATER), memlab.audit(store, as_of=done), before


def _agent_rows(table: pd.DataFrame, agent: str) -> pd.DataFrame:
    return table[table["agent_id"] == agent]


def test_letta_code_wrote_what_each_agent_needs(built):
    """The premises, read from Letta Code's own files: the healthy agent's pass succeeded, the
    stalled agent's never did, the crashed agent's worktree is on disk, the notes commits
    passed Letta Code's hook."""
    cli, ids, _ = built
    for healthy in cli.state(ids["healthy"]):  # two conversations
        assert healthy["last_reflection_succeeded_at"] >= healthy["last_reflection_started_at"]
        assert healthy["steps_since_last_successful_reflection"] < 25
    assert [p.name.split("-")[:2] for p in cli.agent_dir(ids["healthy"]).iterdir()
            if p.name.startswith("memory-backup")] == [["memory", "backup"]]
    assert (cli.letta / "transcripts" / "background").is_dir()
    [stalled] = cli.state(ids["stalled"])
    assert "last_reflection_succeeded_at" not in stalled
    assert stalled["steps_since_last_successful_reflection"] == 60
    assert [p.name.split("-")[0] for p in cli.worktrees(ids["crashed"])] == ["reflection"]
    assert cli.worktrees(ids["healthy"]) == cli.worktrees(ids["stalled"]) == []
    log = cli.git(cli.agent_dir(ids["notes"]) / "memory", "log", "--format=%s")
    assert log.splitlines()[:2] == ["docs(memory): release build notes",
                                    "docs(memory): how the project builds"]


def test_the_home_loads_as_one_store(built, loaded):
    cli, ids, _ = built
    store = loaded[0]
    assert store.kind == "letta_home"
    agents = store.agents.set_index("agent_id")
    assert sorted(agents.index) == sorted(ids.values())
    assert set(agents["backend"]) == {"local"}
    assert agents["memory"].all() and agents["name"].notna().all()
    # one reflection subagent per pass: none for an agent below its trigger
    assert agents.loc[ids["notes"], "reflection_subagents"] == 0
    for name in ("healthy", "stalled", "crashed"):
        assert agents.loc[ids[name], "reflection_subagents"] >= 1
    # one pass per reflection subagent Letta Code recorded, each under its parent
    records = [json.loads(p.read_text())
               for p in (cli.letta / "lc-local-backend" / "agents").glob("*.json")]
    parents = sorted(t.split(":", 1)[1] for r in records for t in r["tags"]
                     if t.startswith("parent:") and "type:reflection" in r["tags"])
    assert sorted(store.passes["agent_id"]) == parents
    assert store.passes["conversation_found"].all()
    # the reflection state as Letta Code wrote it, conversation by conversation
    for name, agent in ids.items():
        conv = _agent_rows(store.conversations, agent)
        states = cli.state(agent)
        assert len(conv) == len(states)
        for row, state in zip(conv.sort_values("conversation_id").itertuples(), states):
            assert row.steps_since_last_successful_reflection == \
                state["steps_since_last_successful_reflection"]
            assert row.total_completed_steps == state["total_completed_steps"]
    # Letta Code's own folders in the transcript root are neither agents nor conversations
    assert "transcripts_without_agent" not in set(store.problems["kind"])
    assert list(store.problems["kind"]) == []


def test_findings_with_their_evidence(built, loaded):
    cli, ids, done = built
    audit = loaded[1]
    stalled = audit.tables["reflection_stalled"]
    assert sorted(stalled["agent_id"]) == sorted([ids["stalled"], ids["crashed"]])
    row = _agent_rows(stalled, ids["stalled"]).iloc[0]
    assert (row.steps_since_success, row.trigger, row.margin) == (60, 25, 35)
    assert pd.isna(row.last_succeeded_at)
    [state] = cli.state(ids["stalled"])
    assert row.last_started_at == pd.Timestamp(state["last_reflection_started_at"])
    assert "60 >= trigger 25 (step-count)" in row.rule
    # why: the last pass's subagent could not run its one tool (Letta Code keeps its conversation)
    assert row.last_pass.endswith("its last tool call (Bash) returned: Exit code: 127 "
                                  "/bin/bash: line 1: bun: command not found")
    crashed = _agent_rows(stalled, ids["crashed"]).iloc[0]
    assert crashed.last_pass.endswith("1 tool call(s), no tool result recorded")
    leftover = audit.tables["leftover_worktree"]
    assert list(leftover["agent_id"]) == [ids["crashed"]]
    assert list(leftover["name"]) == [p.name for p in cli.worktrees(ids["crashed"])]
    assert list(leftover["label"]) == ["reflection"]
    collisions = audit.tables["case_collisions"]
    assert list(collisions["agent_id"]) == [ids["notes"]]
    assert collisions.iloc[0]["paths"] == ["reference/Build.md", "reference/build.md"]


def test_a_healthy_agent_has_no_finding(built, loaded):
    _, ids, _ = built
    for audit in loaded[1:3]:
        for name in ("reflection_stalled", "leftover_worktree", "case_collisions",
                     "unhealthy_writes"):
            assert _agent_rows(audit.tables[name], ids["healthy"]).empty, name


def test_passes_in_flight_are_no_finding(loaded):
    """At build time every pass is minutes old: Letta Code may still finish it."""
    now = loaded[2]
    assert now.tables["reflection_stalled"].empty
    assert now.tables["leftover_worktree"].empty


def test_cli_audit_and_the_home_byte_identical(built, loaded):
    cli, ids, done = built
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "100"}
    as_of = (done + LATER).strftime("%Y-%m-%dT%H:%M:%SZ")
    run = subprocess.run([sys.executable, "-m", "memlab", "audit", str(cli.letta), "--as-of",
                          as_of, "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    head = json.loads(run.stdout)["headline"]
    assert (head["reflection_stalled"], head["leftover_worktrees"], head["case_collisions"]) \
        == (2, 1, 1)
    from memlab.sources.discover import discover

    inv = discover(cli.root)
    home = inv[inv["kind"] == "letta_home"]
    assert home["path"].tolist() == [str(cli.letta)]
    assert home["name"].tolist() == ["Letta Code home, 4 agent(s)"]
    # each agent's memory repository keeps its own row, as it loads alone
    memfs = inv[inv["kind"] == "letta_memfs"]
    assert sorted(memfs["agent_id"]) == sorted(ids.values())
    # the working folder Letta Code ran in holds its project settings (.letta/settings.local.json),
    # not memory: discover lists nothing there
    assert (cli.cwd / ".letta" / "settings.local.json").is_file()
    assert discover(cli.cwd).empty
    assert tree_digest(cli.root) == loaded[3]


def test_bad_records_and_messages_are_problem_rows(built, loaded, tmp_path):
    """The local backend's files are someone else's: a record that is not JSON, a message row
    that is not JSON and a tool result with terminal escapes give problem rows and escaped
    text, never a traceback."""
    import base64
    import shutil

    cli, ids, done = built
    home = tmp_path / ".letta"
    shutil.copytree(cli.letta, home, symlinks=True)
    # the stalled conversation's last pass: its tool result is the finding's evidence
    passes = loaded[0].passes
    last = passes[passes["agent_id"] == ids["stalled"]].iloc[-1]
    key = base64.urlsafe_b64encode(f"default:{last.subagent_id}".encode()).decode().rstrip("=")
    with (home / "lc-local-backend" / "conversations" / key / "messages.jsonl").open("a") as fh:
        fh.write("{not json\n")
        fh.write(json.dumps({"type": "message", "message": {
            "role": "toolResult", "toolName": "Bash",
            "content": [{"type": "text", "text": "\x1b[2J\x1b]0;owned\x07 done"}]}}) + "\n")
    records = home / "lc-local-backend" / "agents"
    healthy = base64.urlsafe_b64encode(ids["healthy"].encode()).decode().rstrip("=")
    (records / f"{healthy}.json").write_text("{not json")
    store = memlab.load(home)
    assert sorted(store.problems["kind"]) == ["bad_agent_record", "bad_messages_row"]
    row = store.passes[store.passes["subagent_id"] == last.subagent_id].iloc[0]
    assert row.last_tool_result == "\x1b[2J\x1b]0;owned\x07 done"  # as written, in the frame
    assert pd.isna(store.agents.set_index("agent_id").loc[ids["healthy"], "name"])
    summary = memlab.audit(store, as_of=done + LATER).summary_text
    assert "owned" in summary and " done" in summary  # the evidence is shown...
    assert "\x1b" not in summary and "\x07" not in summary  # ...escaped
