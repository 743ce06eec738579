"""discover(): the agent inventory over a stand-in home folder with real git repositories."""

from __future__ import annotations

import hashlib
import os
from datetime import datetime
from pathlib import Path

import git
import pandas as pd
import pytest

from memlab.sources.discover import INVENTORY_COLUMNS, discover

T_OLD = "2026-03-01T12:00:00+00:00"
T_MID = "2026-05-10T08:30:00+00:00"
T_NEW = "2026-07-20T18:45:00+00:00"
PERSONA = "---\ndescription: who I am\n---\nI am Emma.\n"
HUMAN = "---\ndescription: the user\n---\nLikes tea.\n"
CONFIG = '{"version": 1}'


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _commit(repo: git.Repo, paths: list[str], message: str, when: str, who: str = "Agent") -> None:
    repo.index.add(paths)
    actor = git.Actor(who, f"{who.lower()}@example.invalid")
    stamp = datetime.fromisoformat(when)
    repo.index.commit(message, author=actor, committer=actor, author_date=stamp,
                      commit_date=stamp, skip_hooks=True)


def _repo(folder: Path, **config: str) -> git.Repo:
    repo = git.Repo.init(folder)
    with repo.config_writer() as cw:
        for key, value in config.items():
            cw.set_value("user", key, value)
    return repo


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")

    # Letta Code, cloud backend: one v1 repo with history, plus the folders that are not agents.
    agent = home / ".letta/agents/agent-aaa"
    memory = agent / "memory"
    _write(memory / "system/persona.md", PERSONA)
    _write(memory / ".letta/config.json", CONFIG)
    repo = _repo(memory, name="EmmaBot")
    _commit(repo, ["system/persona.md", ".letta/config.json"], "Initial commit", T_OLD)
    _write(memory / "system/human.md", HUMAN)
    _commit(repo, ["system/human.md"], "feat: add human", T_MID)
    _write(agent / "memory-worktrees/reflection-1/system/persona.md", "draft\n")
    _write(agent / "memory-worktrees/reflection-1/.git", "gitdir: ../../memory/.git/worktrees/r1\n")
    _write(agent / "memory-backup-20260601T000000/system/persona.md", "backup\n")

    # Letta v2 layout, repo with no commits yet; and an agent folder without memory/.
    v2 = home / ".letta/agents/agent-bbb/memory"
    _write(v2 / "MEMORY.md", "# index\n")
    git.Repo.init(v2)
    (home / ".letta/agents/agent-ccc").mkdir(parents=True)

    # Local backend, old memory/ prefix layout, no git at all.
    _write(home / ".letta/lc-local-backend/memfs/agent-ddd/memory/memory/system/persona.md", "x")

    # Souveraine repo with agent.yaml beside memory/.
    sv = home / ".souveraine/agents/sv-1"
    _write(sv / "agent.yaml", "uuid: sv-1\nname: Aster\n")
    _write(sv / "memory/system/persona.md", "---\ndescription: d\nlimit: 4000\n---\nAster\n")
    sv_repo = _repo(sv / "memory")
    _commit(sv_repo, ["system/persona.md"], "feat(init): initialize agent memory", T_NEW, "sv-1")

    # ~/.pi/unified inventory: a good agent (git at the agent root) and two odd ones.
    ani = home / ".pi/unified/agents/agent-e2b683bf"
    _write(ani / "agent.yaml", 'uuid: "agent-e2b683bf"\nname: "Ani"\nmodel: "kimi"\n')
    _write(ani / "system/persona.md", "Ani\n")
    _write(ani / "memory/journal/2026-07-01.md", "entry\n")
    ani_repo = _repo(ani)
    _commit(ani_repo, ["agent.yaml", "system/persona.md", "memory/journal/2026-07-01.md"],
            "Session update", T_MID)
    _write(home / ".pi/unified/agents/agent-bad/agent.yaml", "name: [unclosed\n")
    _write(home / ".pi/unified/agents/agent-other/agent.yaml", "uuid: agent-zzz\nname: Z\n")

    # An elfmem substrate inside a project repo: the last commit touching .elfmem is older
    # than the project's HEAD.
    proj = home / "code/proj"
    _write(proj / ".elfmem/memory/notes/knowledge.md", "## A\n<!-- id: a1 -->\n\nalpha\n")
    _write(proj / ".elfmem/ledger/2026-03.jsonl", '{"t":"2026-03-01","s":0,"ah":0,"k":"seed"}\n')
    _write(proj / "README.md", "project\n")
    proj_repo = _repo(proj)
    _commit(proj_repo, [".elfmem/memory/notes/knowledge.md", ".elfmem/ledger/2026-03.jsonl"],
            "memory", T_OLD)
    _commit(proj_repo, ["README.md"], "docs", T_NEW)
    # Not substrates: hidden folders, too deep, and an .elfmem with neither memory/ nor ledger/.
    _write(home / ".cache/tool/.elfmem/memory/notes/x.md", "## x\n")
    _write(home / "a/b/c/d/e/f/.elfmem/memory/notes/x.md", "## x\n")
    _write(home / "empty/.elfmem/config.yaml", "x: 1\n")

    # elfmem databases (content is irrelevant to the inventory).
    _write(home / ".elfmem/databases/main.db", "x" * 100)
    _write(home / ".elfmem/databases/main.db-wal", "w" * 10)
    _write(home / ".elfmem/databases/notes.txt", "not a db")
    return home


@pytest.fixture(scope="module")
def inventory(home) -> pd.DataFrame:
    return discover(home)


def test_one_row_per_agent_and_nothing_else(inventory, home):
    assert list(inventory.columns) == list(INVENTORY_COLUMNS)
    rows = sorted(zip(inventory["kind"].astype(str), inventory["agent_id"]))
    assert rows == [
        ("elfmem_db", "main"),
        ("elfmem_substrate", "proj"),
        ("letta_memfs", "agent-aaa"), ("letta_memfs", "agent-bbb"), ("letta_memfs", "agent-ddd"),
        ("souveraine", "agent-bad"), ("souveraine", "agent-e2b683bf"),
        ("souveraine", "agent-other"), ("souveraine", "sv-1"),
    ]
    paths = inventory["path"].tolist()
    assert not any("memory-worktrees" in p or "memory-backup" in p for p in paths)
    assert str(home / ".letta/agents/agent-aaa/memory") in paths
    assert str(home / "code/proj") in paths


def test_layouts_names_and_sizes(inventory):
    by_id = inventory.set_index("agent_id")
    assert by_id.loc["agent-aaa", "layout"] == "letta_v1"
    assert by_id.loc["agent-bbb", "layout"] == "letta_v2"
    assert by_id.loc["agent-ddd", "layout"] == "letta_v1_memory_prefix"
    assert by_id.loc["proj", "layout"] == "elfmem_substrate"
    assert pd.isna(by_id.loc["main", "layout"])
    assert by_id.loc["agent-aaa", "name"] == "EmmaBot"  # from the repo's git user.name
    assert by_id.loc["sv-1", "name"] == "Aster"
    assert by_id.loc["agent-e2b683bf", "name"] == "Ani"
    # persona.md, human.md and .letta/config.json; .git is not counted.
    assert by_id.loc["agent-aaa", "files"] == 3
    assert by_id.loc["agent-aaa", "bytes"] == len(PERSONA) + len(HUMAN) + len(CONFIG)
    assert (by_id.loc["main", "files"], by_id.loc["main", "bytes"]) == (2, 110)
    assert by_id.loc["proj", "files"] == 2  # only what is under .elfmem/
    assert str(inventory["last_commit"].dtype) == "datetime64[ns, UTC]"
    assert inventory["modified"].notna().all()


def test_last_commit_is_utc_and_scoped(inventory):
    by_id = inventory.set_index("agent_id")
    assert by_id.loc["agent-aaa", "last_commit"] == pd.Timestamp(T_MID)
    assert by_id.loc["sv-1", "last_commit"] == pd.Timestamp(T_NEW)
    assert by_id.loc["agent-e2b683bf", "last_commit"] == pd.Timestamp(T_MID)
    # The project's HEAD is newer, but the substrate was last committed at T_OLD.
    assert by_id.loc["proj", "last_commit"] == pd.Timestamp(T_OLD)
    assert pd.isna(by_id.loc["agent-bbb", "last_commit"])
    assert pd.isna(by_id.loc["main", "last_commit"])


def test_problems_are_named_not_hidden(inventory):
    by_id = inventory.set_index("agent_id")["problem"]
    assert by_id["agent-bbb"] == "no commits yet"
    assert by_id["agent-ddd"] == "not in a git repository"
    assert "not valid YAML" in by_id["agent-bad"]
    assert "differs from the folder name" in by_id["agent-other"]
    assert by_id[["agent-aaa", "sv-1", "agent-e2b683bf", "proj", "main"]].isna().all()


def test_discover_is_read_only(home):
    def snapshot():
        out = {}
        for dirpath, _dirs, files in os.walk(home):
            for f in files:
                p = Path(dirpath) / f
                out[str(p)] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        return out

    before = snapshot()
    discover(home)
    assert snapshot() == before


def test_empty_home(tmp_path):
    frame = discover(tmp_path)
    assert frame.empty and list(frame.columns) == list(INVENTORY_COLUMNS)


def test_depth_limit_is_configurable(home):
    deep = discover(home, max_depth=8)
    assert "f" in set(deep["agent_id"])


def test_a_root_that_does_not_exist_is_an_error_not_an_empty_inventory(tmp_path):
    from memlab.errors import StoreNotFound

    with pytest.raises(StoreNotFound, match="no such folder"):
        discover(tmp_path / "typo")
