"""Shared-memory repositories (Letta Code 0.34, cloud agents): mounted at
``~/.letta/agents/<id>/<repo>/`` beside ``memory/``, validated under the ``shared-memory``
policy. memlab lists them as stores of the agent, loads each, and judges it as Letta Code's
own hook does (the oracle: the hook Letta Code installs, run in a clone)."""

from __future__ import annotations

import os
import subprocess

import memlab
from memlab.sources._bundle import unpack_bundle
from memlab.sources.discover import discover

from test_memfs_v2_sample import BUNDLE

AGENT = "agent-4b9e2c71-0d3a-4f58-9e6b-7a1c2d3e4f50"
ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
       "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": f"{AGENT}@letta.com",
       "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": f"{AGENT}@letta.com"}


def _home(tmp_path):
    agent = tmp_path / "home" / ".letta" / "agents" / AGENT
    agent.mkdir(parents=True)
    unpacked = unpack_bundle(BUNDLE, tmp_path / "unpacked")
    subprocess.run(["git", "clone", "-q", str(unpacked), str(agent / "memory")], check=True, env=ENV)
    team = agent / "team-notes"
    team.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(team)], check=True, env=ENV)
    (team / "glossary.md").write_text("---\nname: Glossary\ndescription: shared terms\n---\nLTM\n")
    (team / "handbook.md").write_text("no frontmatter at all\n")
    (team / "skills").mkdir()
    (team / "skills" / "x.md").write_text("skills are not memory\n")
    subprocess.run(["git", "-C", str(team), "add", "-A"], check=True, env=ENV)
    subprocess.run(["git", "-C", str(team), "commit", "-qm", "init", "--no-verify"], check=True,
                   env=ENV)
    (agent / "memory-worktrees").mkdir()  # Letta Code's own worktrees: never a store
    return tmp_path / "home", agent


def test_discover_lists_shared_repos_as_the_agents_stores(tmp_path):
    home, agent = _home(tmp_path)
    inv = discover(home)
    rows = inv[inv["agent_id"] == AGENT]
    assert sorted(rows["path"]) == [str(agent / "memory"), str(agent / "team-notes")]
    assert rows.set_index("path").loc[str(agent / "team-notes"), "shared_repo"] == "team-notes"
    store = memlab.load_memfs(agent / "memory")
    assert store.meta["shared_memory_repos"] == ["team-notes"]


def test_shared_repo_is_judged_under_the_shared_memory_policy(letta_code, tmp_path):
    home, agent = _home(tmp_path)
    store = memlab.load_memfs(agent / "team-notes")
    assert store.meta["shared_memory"] == "team-notes"
    assert store.meta["layout_policy"] == "shared-memory"
    rows = memlab.audit(store).tables["constraints"]
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(agent / "team-notes"), str(clone)], check=True, env=ENV)
    hook = letta_code.install_hooks(clone, "shared-memory")
    run = subprocess.run([str(hook)], cwd=clone, capture_output=True, text=True, env=ENV)
    said = [line[2:] for line in run.stdout.splitlines() if line.startswith("  ")]
    assert run.returncode == 1
    assert rows["message"].tolist() == said == [
        "handbook.md: missing frontmatter (must start with ---)"]
