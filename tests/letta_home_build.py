"""Letta Code homes (``~/.letta``) for the tests, built with Letta Code 0.34.12's own functions.

:class:`HomeOracle` runs ``tests/letta_home_oracle.mjs`` with the wheel's Node: the bundle's
``appendTranscriptDeltaJsonl``, ``buildAutoReflectionPayload``, ``finalizeAutoReflectionPayload``
(the reflection state), ``createReflectionMemoryWorktree``,
``finalizeReflectionMemoryWorktree``'s body and ``integrateMemoryWorkerWorktree`` (worktrees,
branches, merges), evaluated unchanged. Where Letta Code has no function of its own (a
reflection subagent's ``git commit`` in its worktree, an agent's memory write, a person's
commit), real git is run as Letta Code's prompts and code have it: in the worktree, as the
repository's configured user (``<agent-id>@letta.com``, as ``ensureLocalGitConfig`` sets it).

Time is simulated: each request carries ``now`` (the bundle's ``new Date()`` and git's commit
dates follow it), and the payload files a pass writes get that time as their mtime, as if
written then.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

from letta_code import NodeOracle, _payload, letta_code_env

ORACLE = Path(__file__).with_name("letta_home_oracle.mjs")
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class HomeOracle(NodeOracle):
    """letta_home_oracle.mjs on the wheel's Node, with git's user and system config kept out."""

    name = "Letta home oracle"

    def __init__(self) -> None:
        payload = _payload(letta_code_env())
        assert payload is not None
        super().__init__(ORACLE, payload, env={**os.environ, **GIT_ENV})


def git(repo: Path, *args: str, at: datetime | None = None, **env: str) -> str:
    e = {**os.environ, **GIT_ENV, **env}
    if at is not None:
        e["GIT_AUTHOR_DATE"] = e["GIT_COMMITTER_DATE"] = iso(at)
    return subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
                          check=True, capture_output=True, text=True, env=e).stdout


class Home:
    """One test home: ``<root>/.letta`` with HOME=<root> for the bundle's functions."""

    def __init__(self, oracle: HomeOracle, root: Path) -> None:
        self.oracle = oracle
        self.root = root
        self.letta = root / ".letta"
        self.letta.mkdir(parents=True, exist_ok=True)

    def ask(self, op: str, at: datetime | None, **kw):
        return self.oracle.ask({"op": op, "home": str(self.root),
                                **({"now": iso(at)} if at else {}), **kw})

    # -- memory repositories ---------------------------------------------------------------
    def memory(self, agent: str, repo: str = "memory") -> Path:
        return self.letta / "agents" / agent / repo

    def init_repo(self, agent: str, files: dict[str, str], at: datetime, *, repo: str = "memory",
                  name: str = "Letta Agent") -> Path:
        path = self.memory(agent, repo)
        path.mkdir(parents=True)
        git(path, "init", "-q", "-b", "main")
        git(path, "config", "user.email", f"{agent}@letta.com")  # ensureLocalGitConfig
        git(path, "config", "user.name", name)
        self.write(path, files, "chore: initialize local memory", at)
        return path

    def write(self, repo: Path, files: dict[str, str | None], message: str, at: datetime,
              **author: str) -> None:
        for rel, text in files.items():
            f = repo / rel
            if text is None:
                f.unlink()
                continue
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text, encoding="utf-8")
        git(repo, "add", "-A")
        env = {}
        if author:
            env = {"GIT_AUTHOR_NAME": author["name"], "GIT_AUTHOR_EMAIL": author["email"],
                   "GIT_COMMITTER_NAME": author["name"], "GIT_COMMITTER_EMAIL": author["email"]}
        git(repo, "commit", "-q", "-m", message, at=at, **env)

    # -- conversations and reflection ------------------------------------------------------
    def steps(self, agent: str, conv: str, n: int, at: datetime, start: int = 0) -> None:
        lines = []
        for i in range(start, start + n):
            lines.append({"kind": "user", "text": f"question {i}", "id": f"u{i}",
                          "messageId": f"msg-u{i}"})
            lines.append({"kind": "assistant", "text": f"answer {i}", "id": f"a{i}",
                          "messageId": f"msg-a{i}"})
        self.ask("append", at, agentId=agent, conversationId=conv, lines=lines)

    def start(self, agent: str, conv: str, at: datetime) -> dict:
        started = self.ask("start", at, agentId=agent, conversationId=conv)
        ts = at.timestamp()
        os.utime(started["payloadPath"], (ts, ts))
        return started

    def finish(self, agent: str, conv: str, started: dict, at: datetime, success: bool) -> None:
        self.ask("finish", at, agentId=agent, conversationId=conv,
                 payloadPath=started["payloadPath"],
                 endSnapshotLine=started["endSnapshotLine"], success=success)

    def worktree(self, agent: str, at: datetime, label: str = "reflection") -> dict:
        return self.ask("worktree", at, parentMemoryDir=str(self.memory(agent)), label=label)

    def finalize(self, worktree: dict, at: datetime) -> dict:
        return self.ask("finalize", at, worktree=worktree, options={"shouldMerge": True})

    def integrate(self, worktree: dict, at: datetime) -> dict:
        return self.ask("integrate", at, worktree=worktree)


def days(n: float) -> timedelta:
    return timedelta(days=n)


def tree_digest(root: Path) -> str:
    """Every path under ``root`` with its mode and, for a regular file, its bytes: equal
    digests mean memlab changed nothing there."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames) + [d + "/" for d in dirnames]:
            full = Path(dirpath, name.rstrip("/"))
            st = full.lstat()
            h.update(f"{full.relative_to(root)}\0{st.st_mode}\0".encode())
            if full.is_file() and not full.is_symlink():
                h.update(full.read_bytes())
    return h.hexdigest()
