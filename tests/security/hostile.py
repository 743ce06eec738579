"""Builders for hostile inputs: memory repos whose config names marker programs, agent files
with separator-laden names, FIFOs. Each test builds what it needs in its own tmp_path.

The test's own git runs with no system or global config, so the fixture itself never trips a
marker; the hostile config is written last, after every commit the fixture makes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from memlab._escape import LINE_BREAKS
from memlab.reviews._proposal import Choice, Item, Proposal

#: Every separator a hostile author would try, plus CRLF and a few look-alikes.
SEPARATORS = [*LINE_BREAKS, "\r\n", "\x1f", "\x1b[2K\r", "\u202e"]

HOOKS = ("pre-commit", "post-commit", "commit-msg", "post-checkout", "post-index-change",
         "reference-transaction", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman",
         "post-merge", "pre-push")


def git_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Rex",
            "GIT_AUTHOR_EMAIL": "agent@letta.com", "GIT_COMMITTER_NAME": "Rex",
            "GIT_COMMITTER_EMAIL": "agent@letta.com", "GIT_AUTHOR_DATE": "2026-03-01T10:00:00Z",
            "GIT_COMMITTER_DATE": "2026-03-01T10:00:00Z", "LC_ALL": "C"}


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                           *args], cwd=repo, capture_output=True, env=git_env(repo.parent),
                          stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode().strip()


def fm(description: str, body: str) -> str:
    return f"---\ndescription: {description}\n---\n\n{body}"


def memory_repo(root: Path, *, attributes: str = "") -> str:
    """A small Letta memfs repo at ``root``; returns HEAD's sha."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "--initial-branch=main", ".")
    files = {".letta/config.json": '{"version": 1}\n',
             "system/persona.md": fm("Who I am", "I am Rex.\n"),
             "system/human.md": fm("The human", "Sam.\n")}
    if attributes:
        files[".gitattributes"] = attributes
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "init")
    return git(root, "rev-parse", "HEAD")


def marker_program(folder: Path, name: str) -> tuple[Path, Path]:
    """An executable that creates a marker file (and passes stdin through, like a filter)."""
    marker = folder / f"MARKER-{name}"
    script = folder / f"prog-{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script, marker


def install_hooks(hooks_dir: Path, tag: str) -> list[Path]:
    hooks_dir.mkdir(parents=True, exist_ok=True)
    markers = []
    for hook in HOOKS:
        script, marker = marker_program(hooks_dir.parent, f"{tag}-{hook}")
        (hooks_dir / hook).write_text(script.read_text())
        (hooks_dir / hook).chmod(0o755)
        markers.append(marker)
    return markers


def proposal(repo: Path, folder: Path, *, store_name: str = "rex", summary: str = "set it",
             item_id: str = "rules-0123456789", value: str = "New description") -> tuple[Path, Item]:
    """A one-item proposal (set the persona's description) for ``repo``, written to ``folder``."""
    head = git(repo, "rev-parse", "HEAD")
    blob = git(repo, "rev-parse", "HEAD:system/persona.md")
    item = Item(id=item_id, section="rules", action="set_key", summary=summary,
                target={"file": "system/persona.md"}, evidence={"why": summary},
                change={"op": "set_key", "file": "system/persona.md", "key": "description",
                        "value": value, "text": summary})
    prop = Proposal(store={"kind": "letta_memfs", "path": str(repo), "name": store_name,
                           "layout": "letta_v1"},
                    fingerprint={"head_sha": head, "branch": "main", "repo": str(repo),
                                 "files": {"system/persona.md": blob}},
                    made_at="2026-12-01T00:00:00Z", as_of="2026-12-01T00:00:00Z",
                    thresholds={}, items=[item],
                    choices=[Choice(id="choice-0123456789", section="rules", kind="rule",
                                    title=summary, options=[item_id], evidence={"why": summary},
                                    impact={"tokens_saved": 1, "share": 0.0, "risk": "low",
                                            "score": 1.0})])
    return prop.write(folder), item


def tick(md: Path, item_id: str) -> None:
    text = md.read_text(encoding="utf-8")
    assert f"- [ ] `{item_id}`" in text
    md.write_text(text.replace(f"- [ ] `{item_id}`", f"- [x] `{item_id}`"), encoding="utf-8")


def agent_file(path: Path, name: str, labels: list[str], *, value: str = "value") -> Path:
    """A minimal Letta Agent File (v2) with one agent and one block per label."""
    blocks = [{"id": f"block-{i}", "label": label, "value": f"{value} {i}", "limit": 5000,
               "description": "d"} for i, label in enumerate(labels)]
    doc = {"agents": [{"id": "agent-0", "name": name, "block_ids": [b["id"] for b in blocks],
                       "tool_ids": [], "tools": [], "memory_blocks": []}],
           "blocks": blocks, "tools": [], "groups": [], "files": [], "sources": [],
           "mcp_servers": [], "metadata": {}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def yaml_bomb(levels: int, key: str = "name") -> str:
    """A "billion laughs" YAML mapping: nine ``lol`` strings, each level nine aliases of the
    one before, and ``key`` naming the last level: 9**levels strings from a few hundred bytes."""
    names = "abcdefghijklmnopqrstuvwxyz"
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip(names[:levels - 1], names[1:levels]):
        lines.append(f"{name}: &{name} [" + ",".join(f"*{prev}" for _ in range(9)) + "]")
    lines.append(f"{key}: *{names[levels - 1]}")
    return "\n".join(lines) + "\n"
