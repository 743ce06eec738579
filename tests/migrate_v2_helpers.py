"""Helpers shared by the memfs v2 migration tests: git in a test repo, a tree's files, and
Letta Code's own v2 hook run on a throwaway clone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

AGENT = {"GIT_AUTHOR_NAME": "Sample Agent", "GIT_AUTHOR_EMAIL": "agent-1@letta.com",
         "GIT_COMMITTER_NAME": "Sample Agent", "GIT_COMMITTER_EMAIL": "agent-1@letta.com"}


def _git(repo: Path, *args: str, env: dict | None = None, check: bool = True):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=check)


def _repos(dest: Path) -> list[Path]:
    if (dest / ".git").exists():
        return [dest]
    return sorted(p for p in dest.iterdir() if (p / ".git").exists())


def _head_files(repo: Path) -> dict[str, str]:
    names = _git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").stdout.split("\0")
    out = {}
    for n in names:
        if n:
            data = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{n}"],
                                  capture_output=True, check=True).stdout
            out[n] = data.decode("utf-8", "replace")
    return out


def _hook_accepts_noop_and_refuses_limit(repo: Path, letta_code, tmp_path: Path) -> None:
    clone = tmp_path / f"clone-{repo.name}"
    _git(tmp_path, "clone", "-q", str(repo), str(clone))
    letta_code.install_hooks(clone, "root-marker")
    env = {**AGENT, "PATH": f"{letta_code.payload / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    done = _git(clone, "commit", "--allow-empty", "-qm", "noop", env=env, check=False)
    assert done.returncode == 0, done.stderr
    # and the hook does run: v2 refuses a limit in frontmatter
    target = sorted(p for p in _head_files(clone) if "/" not in p and p.endswith(".md")
                    and p != "MEMORY.md")[0]
    text = (clone / target).read_text(encoding="utf-8")
    (clone / target).write_text(text.replace("---\n", "---\nlimit: 5\n", 1), encoding="utf-8")
    _git(clone, "add", target)
    refused = _git(clone, "commit", "-qm", "x", env=env, check=False)
    assert refused.returncode != 0 and "unknown frontmatter key 'limit'" in refused.stderr
