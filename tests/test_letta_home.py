"""The ``letta_home`` kind: a Letta Code home (``~/.letta``) audited as a whole (issue 38).

The home is built once per session with Letta Code 0.34.12's own functions
(tests/letta_home_build.py, tests/letta_home_oracle.mjs): its transcript and reflection-state
writers, its worktree creation, finalisation and memory-worker integration, and its
initial-memory mapping; real git does what Letta Code leaves to an agent or a person (a commit in
a worktree, a memory write, a human's edit). Four agents:

* ``agent-healthy``: a reflection merged by a merge commit after the memory moved, a
  memory-worker pass fast-forwarded, 5 steps since the last success (trigger 25): no finding;
* ``agent-busy``: 26 steps, a pass started 10 minutes before ``as_of`` with its worktree (an
  untracked helper file in it) still on disk: in flight, no finding; two hours later both;
* ``agent-stalled`` (letta-ai/letta-code#4266): one success 9 days ago, then a pass a day for a
  week, each leaving an untracked helper file, so Letta Code finishes it ``dirty_uncommitted``;
  37 steps since the last success against 25, and a pass killed yesterday whose worktree
  (one uncommitted, one untracked file) is still there;
* ``agent-shared``: a shared-memory repository written by itself, another agent, a person and
  the harness, with ``Notes.md`` and ``notes.md``; its memory holds #2906's patterns beside
  their negative controls.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

import memlab
from memlab.errors import MemlabError

from letta_home_build import Home, HomeOracle, days, git, tree_digest

T = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
HOUR = days(1 / 24)
AS_OF = "2026-11-30T12:00:00Z"


@pytest.fixture(scope="session")
def oracle():
    o = HomeOracle()
    yield o
    o.close()


def _initial(letta_code, human: str = "The user is Ada.") -> dict[str, str]:
    files = letta_code.initial([
        {"label": "persona", "value": "I am a careful coding assistant.",
         "description": "Who I am"},
        {"label": "human", "value": human, "description": "What I know about the user"},
    ])
    return {f["relativePath"]: f["content"] for f in files}


def _healthy(home: Home, initial: dict[str, str]) -> None:
    a = "agent-healthy"
    mem = home.init_repo(a, initial, T - days(10))
    home.steps(a, "conv-1", 30, T - days(3))
    started = home.start(a, "conv-1", T - days(3))
    wt = home.worktree(a, T - days(3))
    wdir = Path(wt["worktreeDir"])
    home.write(wdir, {"human.md": initial["human.md"] + "\nPrefers short answers.\n"},
               "memory: user prefers short answers", T - days(3) + HOUR)
    # the agent writes memory itself meanwhile: the merge is a real merge commit
    home.write(mem, {"persona.md": initial["persona.md"] + "\nI explain trade-offs.\n"},
               "Update memory file persona.md", T - days(3) + HOUR)
    result = home.finalize(wt, T - days(3) + 2 * HOUR)
    assert result["status"] == "merged"
    home.finish(a, "conv-1", started, T - days(3) + 2 * HOUR, True)
    home.steps(a, "conv-1", 5, T - days(1), start=30)
    worker = home.worktree(a, T - days(2), label="memory-worker")
    home.write(Path(worker["worktreeDir"]), {"projects.md": "---\nname: Projects\n"
               "description: Projects the user works on\n---\nmemlab, a research workbench.\n"},
               "memory: projects", T - days(2))
    assert home.integrate(worker, T - days(2) + HOUR)["status"] == "merged"


def _busy(home: Home, initial: dict[str, str]) -> None:
    a = "agent-busy"
    home.init_repo(a, initial, T - days(10))
    home.steps(a, "conv-1", 26, T - 2 * HOUR)
    home.start(a, "conv-1", T - HOUR / 6)
    wt = home.worktree(a, T - HOUR / 6)
    (Path(wt["worktreeDir"]) / "draft.txt").write_text("working\n")


def _stalled(home: Home, initial: dict[str, str]) -> None:
    a = "agent-stalled"
    home.init_repo(a, initial, T - days(10))
    home.steps(a, "conv-1", 10, T - days(9))
    started = home.start(a, "conv-1", T - days(9))
    wt = home.worktree(a, T - days(9))
    home.write(Path(wt["worktreeDir"]), {"human.md": initial["human.md"] + "\nUses Linux.\n"},
               "memory: user uses Linux", T - days(9))
    assert home.finalize(wt, T - days(9) + HOUR)["status"] == "merged"  # a fast-forward
    home.finish(a, "conv-1", started, T - days(9) + HOUR, True)
    n = 10
    for k in range(7):  # a pass a day for a week, each discarded as dirty_uncommitted
        at = T - days(7 - k)
        home.steps(a, "conv-1", 5 + (2 if k == 6 else 0), at - HOUR, start=n)
        n += 5 + (2 if k == 6 else 0)
        started = home.start(a, "conv-1", at)
        wt = home.worktree(a, at)
        wdir = Path(wt["worktreeDir"])
        (wdir / "scratch").mkdir()
        (wdir / "scratch" / "extract.py").write_text("print('helper')\n")
        home.write(wdir, {"human.md": initial["human.md"] + f"\nFact {k}.\n"},
                   f"memory: fact {k}", at)
        git(wdir, "rm", "-q", "--cached", "-r", "scratch")  # the helper stays untracked
        git(wdir, "commit", "-q", "-m", "memory: drop helper", at=at)
        assert home.finalize(wt, at + HOUR)["status"] == "dirty_uncommitted"
        home.finish(a, "conv-1", started, at + HOUR, False)
    # yesterday's pass was killed: its worktree stays
    home.start(a, "conv-1", T - days(1))
    wt = home.worktree(a, T - days(1))
    wdir = Path(wt["worktreeDir"])
    (wdir / "human.md").write_text(initial["human.md"] + "\nHalf-written fact.\n")
    (wdir / "notes.tmp").write_text("helper output\n")


def _shared(home: Home, initial: dict[str, str]) -> None:
    a = "agent-shared"
    mem = home.init_repo(a, initial, T - days(20))
    t = T - days(19)
    human = initial["human.md"]
    facts = ["Lives in Lyon.", "Works on memlab.", "Likes tea.", "Has a cat.", "Runs at 7.",
             "Reads Proust.", "Speaks Basque.", "Cycles to work.", "Plays chess.", "Bakes bread."]
    for i, fact in enumerate(facts):
        human += f"\n{fact}\n"  # only grows: ten changes adding lines, none deleting
        home.write(mem, {"human.md": human}, f"Update memory file human.md ({i})", t + i * HOUR)
    persona = initial["persona.md"]
    for i, text in enumerate(["Direct.", "Direct and kind.", "Kind."]):  # edits, not growth
        home.write(mem, {"persona.md": persona + f"\n{text}\n"}, "Update memory file persona.md",
                   t + days(1) + i * HOUR)
    fm = "---\nname: {n}\ndescription: {d}\n---\n"
    rule = "Always run the full test suite with pytest -q before committing."
    home.write(mem, {
        "session-2026-11-28.md": fm.format(n="Session", d="What happened on 28 November")
        + "We fixed the parser.\n",
        "notes/MEMORY.md": "# Notes\n\n- [session](session-2026-11-27.md)\n",
        "notes/session-2026-11-27.md": fm.format(n="Old session", d="An archived session")
        + "We planned the release.\n",
        "workflow.md": fm.format(n="Workflow", d="How the user works") + f"## Rules\n{rule}\n",
    }, "Update memory files", t + days(2))
    home.write(mem, {"workflow.md": fm.format(n="Workflow", d="How the user works")
                     + "## Rules\nShip small commits.\n"}, "Update memory file workflow.md",
               t + days(3))
    home.write(mem, {"workflow.md": fm.format(n="Workflow", d="How the user works")
                     + f"## Rules\nShip small commits.\n{rule}\n"},
               "Update memory file workflow.md", t + days(4))
    body = ("The memlab project audits agent memory stores offline: it loads elfmem databases, "
            "Letta memory repositories and agent files, and reports limits, drift and history. "
            "It reads every store without writing to it, and it explains each finding with the "
            "evidence that produced it, so that a person can check the claim by hand.")
    home.write(mem, {
        "project.md": fm.format(n="Project", d="The project") + body + "\n",
        "project-copy.md": fm.format(n="Project copy", d="The project again")
        + body.replace("offline", "locally") + "\n",
    }, "Update memory files", t + days(5))
    # negative control: a file moved to another folder (its lines leave one path and reach
    # another in one commit) is not the same correction written again
    tools = fm.format(n="Tools", d="Tools") + "The team runs pytest, ruff and mypy on every change.\n"
    home.write(mem, {"reference/tools.md": tools}, "Update memory file reference/tools.md",
               t + days(5) + HOUR)
    home.write(mem, {"reference/tools.md": None, "archive/tools.md": tools},
               "Reorganise memory: reference/tools.md -> archive/", t + days(5) + 2 * HOUR)
    shared = home.init_repo(a, {"README.md": fm.format(n="Team", d="Team notes") + "Team.\n"},
                            t, repo="team-notes", name="Shared Agent")
    home.write(shared, {"Notes.md": fm.format(n="Notes", d="Notes") + "One.\n",
                        "people/Bob.md": fm.format(n="Bob", d="Bob") + "Bob.\n"},
               "Update memory file Notes.md", t + days(1))
    home.write(shared, {"people/bob-notes.md": fm.format(n="Bob notes", d="About Bob")
                        + "Likes tea.\n"}, "Update memory file people/bob-notes.md",
               t + days(2), name="Other Agent", email="agent-other@letta.com")
    home.write(shared, {"notes.md": fm.format(n="notes", d="lower") + "Two.\n"},
               "add notes", t + days(3), name="Alice Smith", email="alice@example.com")
    home.write(shared, {"README.md": fm.format(n="Team", d="Team notes") + "Team of three.\n"},
               "merge(memory): letta/memory-worker/20261112120000-abcdef12", t + days(4),
               name="Letta Code", email="noreply@letta.com")


@pytest.fixture(scope="session")
def home(oracle, letta_code, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("letta-home")
    h = Home(oracle, root)
    (h.letta / "settings.json").write_text(
        '{"reflectionTrigger": "step-count", "reflectionStepCount": 25}\n')
    initial = _initial(letta_code)
    _healthy(h, initial)
    _busy(h, initial)
    _stalled(h, initial)
    _shared(h, initial)
    return h.letta


@pytest.fixture(scope="session")
def loaded(home):
    before = tree_digest(home.parent)
    store = memlab.load(home)
    audit = memlab.audit(store, as_of=AS_OF)
    return store, audit, before


def test_detect_claims_the_home_not_an_agents_repo(home, loaded, tmp_path):
    store, _, _ = loaded
    assert store.kind == "letta_home"
    assert store.meta["detected"]["kind"] == "letta_home"
    # negative controls: an agent's memory repository loads as itself, even one holding an
    # agents/<x>/memory/ folder of notes; a folder with only agents/ is no home
    assert memlab.load(home / "agents" / "agent-healthy" / "memory").kind == "letta_memfs"
    repo = tmp_path / "repo"
    (repo / "agents" / "bob" / "memory").mkdir(parents=True)
    (repo / "agents" / "bob" / "memory" / "notes.md").write_text("x\n")
    git(repo, "init", "-q")
    assert memlab.kinds.detect(repo).kind != "letta_home"
    bare = tmp_path / "bare"
    (bare / "agents" / "x").mkdir(parents=True)
    try:
        found = memlab.kinds.detect(bare).kind
    except MemlabError:
        found = None
    assert found != "letta_home"


def test_home_is_byte_identical_afterwards(home, loaded):
    _, _, before = loaded
    assert tree_digest(home.parent) == before


def test_frames(loaded):
    store, _, _ = loaded
    agents = store.agents.set_index("agent_id")
    assert sorted(agents.index) == ["agent-busy", "agent-healthy", "agent-shared", "agent-stalled"]
    assert set(agents["trigger"]) == {"step-count"} and set(agents["step_count"]) == {25}
    repos = store.memory_repos
    shared = repos[repos["role"] == "shared"]
    assert shared[["agent_id", "repo"]].values.tolist() == [["agent-shared", "team-notes"]]
    assert set(repos["kind"]) == {"letta_memfs"}
    conv = store.conversations.set_index("agent_id")
    assert conv.loc["agent-stalled", "steps_since_last_successful_reflection"] == 37
    assert conv.loc["agent-stalled", "payload_files"] == 9  # 1 success + 7 discarded + 1 killed
    assert conv.loc["agent-stalled", "payloads_since_success"] == 8
    assert conv.loc["agent-healthy", "steps_since_last_successful_reflection"] == 5
    assert conv.loc["agent-healthy", "reflected_completed_steps"] == 30
    assert conv.loc["agent-busy", "total_completed_steps"] == 26
    assert conv["started_since_success"].to_dict() == {
        "agent-healthy": False, "agent-busy": True, "agent-stalled": True}
    # Letta Code's own count agrees with the file memlab read (it writes what it reads back)
    assert (conv["steps_recorded"] == conv["steps_since_last_successful_reflection"]).all()
    wt = store.worktrees.set_index("agent_id")
    assert sorted(wt.index) == ["agent-busy", "agent-stalled"]  # every finished pass removed its
    assert wt.loc["agent-stalled", "uncommitted"] == ["human.md"]
    assert wt.loc["agent-stalled", "untracked"] == ["notes.tmp"]
    assert wt.loc["agent-busy", "untracked"] == ["draft.txt"]
    assert str(wt.loc["agent-stalled", "branch"]).startswith("letta/reflection/")


def test_merges_over_time(loaded):
    store, audit, _ = loaded
    m = store.merges
    healthy = m[m["agent_id"] == "agent-healthy"]
    assert sorted(zip(healthy["label"], healthy["how"])) == [
        ("memory-worker", "fast-forward"), ("reflection", "merge commit")]
    refl = healthy[healthy["label"] == "reflection"].iloc[0]
    assert refl["subject"] == "merge(reflection): user prefers short answers"
    mem = store.memory_repos.set_index("agent_id").loc["agent-healthy"]
    numstat = git(Path(mem["path"]), "show", "--numstat", "--format=", f"{refl['merge']}^2")
    assert refl["commits"] == 1
    assert refl["lines_changed"] == sum(int(a) + int(d) for a, d, _ in
                                        (x.split("\t") for x in numstat.split("\n") if x))
    stalled = m[m["agent_id"] == "agent-stalled"]
    assert stalled[["label", "how"]].values.tolist() == [["reflection", "fast-forward"]]
    share = audit["merge_share"].set_index("agent_id")
    w = store.writes
    main = w[(w["agent_id"] == "agent-healthy") & w["on_main"] & ~w["is_merge"]]
    total = int((main["lines_added"] + main["lines_deleted"]).sum())
    worker = healthy[healthy["label"] == "memory-worker"].iloc[0]
    assert worker["lines_changed"] == 5  # projects.md, a new file of five lines
    assert share.loc["agent-healthy", "by_reflection"] == refl["lines_changed"]
    assert share.loc["agent-healthy", "by_memory_worker"] == 5
    assert share.loc["agent-healthy", "share"] == pytest.approx((refl["lines_changed"] + 5) / total)
    assert share.loc["agent-busy", "share"] == 0


def test_reflection_stalled_with_its_evidence(loaded):
    _, audit, _ = loaded
    st = audit["reflection_stalled"]
    assert st["agent_id"].tolist() == ["agent-stalled"]  # healthy and in-flight: none
    row = st.iloc[0]
    assert (row["steps_since_success"], row["trigger"], row["margin"]) == (37, 25, 12)
    assert row["passes_since_success"] == 8
    assert row["hours_since_success"] == pytest.approx(9 * 24 - 1)
    assert "37 >= trigger 25" in row["rule"]
    assert audit.headline["reflection_stalled"] == 1
    assert audit.headline["max_steps_over_trigger"] == 12
    assert "REFLECTION STALLED" in audit.summary()


def test_leftover_worktree(loaded):
    _, audit, _ = loaded
    lw = audit["leftover_worktree"]
    assert lw["agent_id"].tolist() == ["agent-stalled"]  # the busy agent's pass is in flight
    assert lw.iloc[0]["n_uncommitted"] == 1 and lw.iloc[0]["n_untracked"] == 1
    assert lw.iloc[0]["age_hours"] == pytest.approx(24)


def test_in_flight_becomes_a_finding_once_past_its_time(loaded):
    store, _, _ = loaded
    later = memlab.audit(store, as_of="2026-11-30T14:00:00Z")
    assert sorted(later["reflection_stalled"]["agent_id"]) == ["agent-busy", "agent-stalled"]
    assert sorted(later["leftover_worktree"]["agent_id"]) == ["agent-busy", "agent-stalled"]
    busy = later["reflection_stalled"].set_index("agent_id").loc["agent-busy"]
    assert busy["margin"] == 1 and pd.isna(busy["last_succeeded_at"])


def test_shared_memory_writers(loaded):
    _, audit, _ = loaded
    sw = audit["shared_writers"]
    got = sorted(zip(sw["writer"], sw["writer_agent"].fillna(""), sw["author_email"]))
    assert got == [("agent", "agent-other", "agent-other@letta.com"),
                   ("agent", "agent-shared", "agent-shared@letta.com"),
                   ("harness", "", "noreply@letta.com"),
                   ("human", "", "alice@example.com")]


def test_case_collisions(loaded):
    _, audit, _ = loaded
    cc = audit["case_collisions"]
    assert cc[["agent_id", "repo", "key"]].values.tolist() == [
        ["agent-shared", "team-notes", "notes.md"]]
    assert cc.iloc[0]["paths"] == ["Notes.md", "notes.md"]  # people/Bob.md, bob-notes.md: none


def test_unhealthy_writes_2906(loaded):
    _, audit, _ = loaded
    u = audit["unhealthy_writes"]
    got = sorted(zip(u["agent_id"], u["pattern"], u["path"]))
    assert got == [
        ("agent-shared", "core_only_grows", "human.md"),
        ("agent-shared", "near_duplicate_files", "project-copy.md, project.md"),
        ("agent-shared", "repeated_correction", "workflow.md"),
        ("agent-shared", "session_file_in_core", "session-2026-11-28.md"),
    ]
    # negative controls present in the same repo: persona.md edited with deletions, a session
    # file under notes/ (projected, not core), "## Rules" and frontmatter lines added twice,
    # persona.md and human.md (different texts); the healthy agent's human.md grew twice only
    # (a few facts appended is memory working: the bar is GROWTH_COMMITS, ten changes)


def test_reflection_settings_as_letta_code_resolves_them(oracle):
    from memlab.kinds.letta_home._state import reflection_settings

    cases = [
        {},
        {"reflectionStepCount": 40},
        {"memoryReminderInterval": None},
        {"memoryReminderInterval": 10, "reflectionTrigger": "bogus"},
        {"memoryReminderInterval": "compaction", "reflectionTrigger": None},
        {"reflectionTrigger": "compaction-event", "reflectionStepCount": 0},
        {"reflectionSettingsByAgent": {"agent-1": {"trigger": "off", "stepCount": 7}}},
        {"reflectionSettingsByAgent": {"agent-1": {"stepCount": 2.5}}, "reflectionStepCount": 9},
    ]
    for settings in cases:
        want = oracle.ask({"op": "settings", "global": settings, "agents": ["agent-1", "x"]})
        for agent, w in want.items():
            got = reflection_settings(settings, agent)
            assert (got["trigger"], got["step_count"]) == (w["trigger"], w["stepCount"]), settings


def test_bad_state_is_a_problem_row(home, tmp_path):
    import shutil

    copy = tmp_path / ".letta"
    shutil.copytree(home, copy, symlinks=True)
    conv = copy / "transcripts" / "agent-healthy" / "conv-1"
    (conv / "state.json").write_text("{not json")
    (conv / "transcript.jsonl").write_text('{"kind": "assistant"}\nnot json\n')
    (copy / "settings.json").write_text("[1]")
    store = memlab.load(copy)
    kinds = set(store.problems["kind"].astype(str))
    assert {"bad_state", "bad_transcript_row", "bad_settings"} <= kinds
    row = store.conversations.set_index("agent_id").loc["agent-healthy"]
    # no state: Letta Code would rebuild it from the transcript as never reflected
    assert row["total_completed_steps"] == 1 and row["reflected_completed_steps"] == 0
    with pytest.raises(MemlabError):
        memlab.load(copy, bogus=1)


def test_discover_finds_the_home(home, tmp_path, monkeypatch):
    from memlab.sources.discover import discover

    inv = discover(home.parent)
    rows = inv[inv["kind"] == "letta_home"]
    assert rows["path"].tolist() == [str(home)]
    assert rows["name"].iloc[0] == "Letta Code home, 4 agent(s)"
    # the agents' repositories keep their own rows, the shared one too
    memfs = inv[inv["kind"] == "letta_memfs"]
    assert sorted(memfs["agent_id"]) == ["agent-busy", "agent-healthy", "agent-shared",
                                         "agent-shared", "agent-stalled"]
    # the user's own home: LETTA_HOME names a second home, LETTA_TRANSCRIPT_ROOT is said
    fake = tmp_path / "user"
    (fake / ".letta" / "agents" / "a" / "memory").mkdir(parents=True)
    (fake / ".letta" / "settings.json").write_text("{}\n")
    monkeypatch.setenv("HOME", str(fake))
    monkeypatch.setenv("LETTA_HOME", str(home))
    monkeypatch.setenv("LETTA_TRANSCRIPT_ROOT", str(tmp_path / "tr"))
    inv = discover()
    homes = inv[inv["kind"] == "letta_home"]
    assert sorted(homes["path"]) == sorted([str(fake / ".letta"), str(home)])
    assert homes["name"].str.contains("LETTA_TRANSCRIPT_ROOT").all()


def test_transcript_root_from_the_environment_only_for_the_users_own_home(home, monkeypatch,
                                                                          tmp_path):
    monkeypatch.setenv("LETTA_TRANSCRIPT_ROOT", str(tmp_path / "elsewhere"))
    assert memlab.load(home).meta["transcript_root"] == str(home / "transcripts")
    monkeypatch.setenv("HOME", str(home.parent))
    moved = memlab.load(home)
    assert moved.meta["transcript_root"] == str(tmp_path / "elsewhere")
    assert moved.conversations.empty
    assert set(moved.problems["kind"].astype(str)) == set()
    explicit = memlab.load(home, transcript_root=home / "transcripts")
    assert len(explicit.conversations) == 3


def test_cli_audit_text_and_json(home):
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "100"}
    run = subprocess.run([sys.executable, "-m", "memlab", "audit", str(home), "--as-of", AS_OF],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "REFLECTION STALLED in 1 conversation(s):" in run.stdout
    assert "agent-stalled/conv-1: steps since the last successful reflection 37 >= trigger 25" \
        in run.stdout
    assert "agent-shared/team-notes: Notes.md, notes.md" in run.stdout
    run = subprocess.run([sys.executable, "-m", "memlab", "audit", str(home), "--as-of", AS_OF,
                          "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["kind"] == "letta_home"
    assert doc["headline"]["reflection_stalled"] == 1
    assert doc["headline"]["leftover_worktrees"] == 1
    assert doc["tables"]["reflection_stalled"][0]["margin"] == 12


def test_fleet_lake_one_row_per_agent(home, tmp_path):
    lake = tmp_path / "lake"
    result = memlab.fleet([home], out=lake, workers=0, as_of=AS_OF, run_date="2026-11-30",
                          progress=False)
    head = result.headline()
    assert len(head) == 1 and head.iloc[0]["reflection_stalled"] == 1
    agents = memlab.read_lake(lake, "frames/agents")
    assert sorted(agents["agent_id"]) == ["agent-busy", "agent-healthy", "agent-shared",
                                          "agent-stalled"]
    by = agents.set_index("agent_id")
    assert by.loc["agent-stalled", "max_steps_since_success"] == 37
    assert by.loc["agent-stalled", "conversations_over_trigger"] == 1
    assert by.loc["agent-healthy", "conversations_over_trigger"] == 0
    assert by.loc["agent-healthy", "merges"] == 2
    assert by.loc["agent-healthy", "reflection_merge_share"] > 0
    assert pd.isna(by.loc["agent-shared", "max_steps_since_success"])  # no conversation


@pytest.mark.slow  # runs the audit notebook (papermill, nbconvert): about 30 s
def test_report_all_alerts_reflection_stalled(home, tmp_path):
    """`memlab report all` on a home: the audit report (with its section on reflection), the
    home's headline in the run record, and the alert a person sets on a stalled reflection."""
    from memlab.report.schedule import run_all

    config = tmp_path / "stores.yaml"
    config.write_text(f"as_of: '{AS_OF}'\nsimulation: false\nstores:\n  home: {home}\n"
                      "alerts:\n  - metric: reflection_stalled\n    above: 0\n"
                      "  - metric: case_collisions\n    above: 5\n")
    run = run_all(config, out=tmp_path / "2026-11-30", jobs=1)
    assert run.failures == []
    assert [a.line() for a in run.fired] == ["ALERT home: reflection_stalled above 0: 1"]
    html = (run.folder / "home" / "audit" / "01-audit.html").read_text()
    assert "Is reflection working?" in html and "agent-stalled" in html
    assert run.record["stores"]["home"]["kind"] == "letta_home"


def test_symlinks_are_problem_rows_not_followed(home, tmp_path):
    import shutil

    copy = tmp_path / ".letta"
    shutil.copytree(home / "transcripts", copy / "transcripts")
    (copy / "settings.json").write_text("{}\n")
    (copy / "agents").mkdir()
    (copy / "agents" / "elsewhere").symlink_to(home / "agents" / "agent-healthy")
    (copy / "transcripts" / "agent-x").symlink_to(tmp_path)
    store = memlab.load(copy)
    rows = store.problems[store.problems["kind"] == "symlink_not_followed"]
    assert sorted(p.rsplit("/", 1)[-1] for p in rows["file"]) == ["agent-x", "elsewhere"]
    assert store.agents.empty
