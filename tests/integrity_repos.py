"""Real git for the integrity tests: run git as a user would (their identity, no global config),
make commits, and read a repository's ``integrity`` table through memlab's audit."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import memlab

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
       "GIT_AUTHOR_NAME": "User user-1", "GIT_AUTHOR_EMAIL": "user-1@letta.ai",
       "GIT_COMMITTER_NAME": "User user-1", "GIT_COMMITTER_EMAIL": "user-1@letta.ai"}


def git(repo: Path, *args: str, check: bool = True, env: dict | None = None) -> str:
    proc = subprocess.run(["git", "-C", str(repo), "-c", "core.hooksPath=/dev/null",
                           "-c", "init.defaultBranch=main", *args],
                          check=False, capture_output=True, text=True, env=env or ENV)
    if check and proc.returncode:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str], env: dict | None = None) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", message, env=env)
    return git(repo, "rev-parse", "HEAD")


def block(text: str) -> str:
    return f"---\ndescription: a block\n---\n{text}\n"


def seeded_server(root: Path, n: int = 3) -> Path:
    """A bare server-side memory repository (what Letta's git endpoint serves) with a history of
    ``n`` + 1 commits on ``main``, pushed from a seeding clone."""
    server = root / "server.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(server))
    seed = root / "seed"
    git(root, "clone", "-q", str(server), str(seed))
    commit(seed, "Initial commit", {".letta/config.json": "{}\n", "system/human.md": block("Maya")})
    for i in range(n):
        commit(seed, f"Update system/notes{i} block",
               {f"system/notes{i}.md": block("line\n" * (5 + i))})
    git(seed, "push", "-q", "origin", "main")
    return server


def agent_clone(server: Path, root: Path, agent: str = "agent-1") -> Path:
    clone = root / ".letta" / "agents" / agent / "memory"
    clone.parent.mkdir(parents=True, exist_ok=True)
    git(root, "clone", "-q", str(server), str(clone))
    return clone


def rows(path) -> list[dict]:
    return memlab.audit(path).tables["integrity"].to_dict("records")
