"""Builders of real memory repositories (GitPython over real git) that follow the conventions
of Letta Code, the Letta server, Souveraine and elfmem, for tests and the memfs notebook.

Each builder returns a :class:`Built` naming the commits a test wants to point at. Commits
that break the Letta pre-commit hook are made with ``--no-verify``, as an agent bypassing the
hook would; dates are fixed, so every run builds the same history (same shas).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import git

from memlab.formats.blockfile import Block, format_blockfile, format_ledger
from memlab.formats.letta_memfs import render_memfs_file, render_memfs_v2_file

# Identities as they appear in real repos (formats-letta.md §1.5).
SERVER = ("User user-2b7c9e10-44aa-4f7e-9d1c-0c6a5b3e8f21",
          "user-2b7c9e10-44aa-4f7e-9d1c-0c6a5b3e8f21@letta.ai")
AGENT = ("EmmaBot", "agent-5afcfa48-3f0e-4b1a-9c57-1f1f2e3d4c5b@letta.com")
AGENT_TRUNCATED = ("EmmaBot", "agent-5afcfa48@letta.com")  # typed by hand by the agent
REFLECTION = ("Reflection Subagent", "agent-9d1e7c22-8b4f-4a3e-b6d0-7e5f4c3b2a19@letta.com")
HUMAN = ("Jane Doe", "4242+janedoe@users.noreply.github.com")
SYSTEM = ("Letta System", "system@letta.ai")
SOUV_ID = "agent-e2b683bf-5b3e-4e0c-ac62-2bbb47ea8351"
SOUVERAINE = (SOUV_ID, f"{SOUV_ID}@souveraine.local")

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"


@dataclass
class Built:
    path: Path
    shas: dict[str, str] = field(default_factory=dict)
    facts: dict[str, object] = field(default_factory=dict)


class _Writer:
    """Write files and commit them with a given identity and time, through real git."""

    def __init__(self, path: Path, *, branch: str = "main") -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.repo = git.Repo.init(path, initial_branch=branch)
        with self.repo.config_writer() as cw:
            cw.set_value("commit", "gpgsign", "false")
            cw.set_value("core", "hooksPath", "/dev/null")
            cw.set_value("user", "name", "builder")
            cw.set_value("user", "email", "builder@example.invalid")

    def write(self, rel: str, content: str | bytes) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")

    def _env(self, who: tuple[str, str], when: dt.datetime) -> dict[str, str]:
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S+0000")
        return {"GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1], "GIT_AUTHOR_DATE": stamp,
                "GIT_COMMITTER_NAME": who[0], "GIT_COMMITTER_EMAIL": who[1],
                "GIT_COMMITTER_DATE": stamp}

    def commit(self, message: str, who: tuple[str, str], when: dt.datetime, *,
               files: dict[str, str | bytes] | None = None, remove: tuple[str, ...] = (),
               no_verify: bool = False) -> str:
        for rel, content in (files or {}).items():
            self.write(rel, content)
        if files:
            self.repo.git.add("--", *files)
        if remove:
            self.repo.git.rm("-q", "--", *remove)
        args = ["-q", "-m", message, "--allow-empty"]
        if no_verify:
            args.append("--no-verify")
        self.repo.git.commit(*args, env=self._env(who, when))
        return self.repo.head.commit.hexsha

    def merge(self, branch: str, message: str, who: tuple[str, str], when: dt.datetime) -> str:
        self.repo.git.merge("--no-ff", "-q", "-m", message, branch, env=self._env(who, when))
        return self.repo.head.commit.hexsha

    def checkout(self, *args: str) -> None:
        self.repo.git.checkout("-q", *args)


def _t(day: str, hour: int = 10) -> dt.datetime:
    return dt.datetime.fromisoformat(f"{day}T{hour:02d}:00:00+00:00")


def _persona(extra: str = "") -> str:
    return render_memfs_file("Who I am, what I value, how I work",
                             "I am EmmaBot, a careful coding agent.\n" + extra)


def build_letta_v1(path: Path) -> Built:
    """A current-layout repo (March-April 2026) with every kind of author and seeded breaches.

    Breaches (all by the agent, with --no-verify): edit a read_only file, drop a read_only flag,
    add an unknown key, add a flat skill. The server also writes an unknown key (the server runs
    no hook, so that is not a bypass). One file is over its ``limit`` (letta#3241).
    """
    w = _Writer(path)
    b = Built(path)
    read_only_fs = render_memfs_file("How my memory filesystem works",
                                     "Files under system/ are always in context.\n", read_only=True)
    policies = render_memfs_file("Rules set by my operator", "Never push to main.\n", read_only=True)
    b.shas["init"] = w.commit("Initial commit", SERVER, _t("2026-03-25"), files={
        ".letta/config.json": json.dumps({"version": 1}) + "\n",
        ".gitignore": "*.tmp\n",
        "system/persona.md": _persona(),
        "system/human.md": render_memfs_file("What I know about the human",
                                             "Name: Sam.\nPrefers short answers.\n"),
        "system/memory_filesystem.md": read_only_fs,
        "system/policies.md": policies,
        "reference/README.md": render_memfs_file("What lives in reference/", "Long notes.\n"),
    })
    b.shas["agent_notes"] = w.commit("feat: add project notes and search skill", AGENT, _t("2026-03-26"), files={
        "projects/alpha.md": "# Alpha\nA CLI for audits.\n",
        "system/human.md": render_memfs_file("What I know about the human",
                                             "Name: Sam.\nPrefers short answers.\nWorks in UTC.\n"
                                             "Uses pytest.\nDislikes emojis.\n"),
        "skills/search/SKILL.md": "---\nname: search\ndescription: Search the repo well\n---\n\nUse rg.\n",
    })
    b.shas["server_update"] = w.commit("Update system/persona block", SERVER, _t("2026-03-27"),
                                       files={"system/persona.md": _persona("I write tests first.\n")})
    b.shas["agent_truncated"] = w.commit("fix: correct the human's time zone", AGENT_TRUNCATED,
                                         _t("2026-03-28"), files={
        "system/human.md": render_memfs_file("What I know about the human",
                                             "Name: Sam.\nPrefers short answers.\nWorks in CET.\n"
                                             "Uses pytest.\nDislikes emojis.\n")})
    # A reflection subagent works in its own worktree branch, merged back with merge(reflection).
    w.checkout("-b", "letta/reflection/refl-1")
    b.shas["reflection"] = w.commit("chore: consolidate project notes \U0001f52e", REFLECTION,
                                    _t("2026-03-29"), files={
        "projects/alpha.md": "# Alpha\nA CLI for audits of agent memory.\nShips weekly.\n",
        "reference/README.md": render_memfs_file("What lives in reference/",
                                                 "Long notes.\nSee projects/ for work.\n")})
    w.checkout("main")
    issues_body = "".join(f"- issue {i:04d}: flaky test in module {i % 17}, owner unknown\n"
                          for i in range(110))
    b.facts["issues_chars"] = len(issues_body)
    b.shas["over_limit"] = w.commit("feat: track active issues", AGENT, _t("2026-03-30"), files={
        "system/active-issues.md": render_memfs_file("Open issues I am tracking", issues_body,
                                                     limit=5000)})
    b.shas["merge"] = w.merge("letta/reflection/refl-1",
                              "merge(reflection): consolidated project notes", AGENT, _t("2026-03-31"))
    w.repo.git.branch("-D", "letta/reflection/refl-1")
    # Breaches of the hook, each committed with --no-verify.
    b.shas["edit_read_only"] = w.commit("fix: update filesystem notes", AGENT, _t("2026-04-01"),
                                        no_verify=True, files={
        "system/memory_filesystem.md": read_only_fs.replace("always in context.", "always in context; "
                                                            "reference/ is listed by path.")})
    b.shas["drop_read_only"] = w.commit("chore: relax operator policies", AGENT, _t("2026-04-02"),
                                        no_verify=True, files={
        "system/policies.md": render_memfs_file("Rules set by my operator", "Push when tests pass.\n")})
    b.shas["unknown_key"] = w.commit("feat: tag the human block", AGENT, _t("2026-04-03"),
                                     no_verify=True, files={
        "system/human.md": "---\ndescription: What I know about the human\nmetadata: {source: chat}\n"
                           "---\n\nName: Sam.\nPrefers short answers.\nWorks in CET.\nUses pytest.\n"
                           "Dislikes emojis.\n"})
    b.shas["human"] = w.commit("docs: add architecture diagram", HUMAN, _t("2026-04-04"), files={
        "reference/diagram.png": PNG, "notes/todo.md": "- review alpha\n"})
    b.shas["flat_skill"] = w.commit("feat: add quick skill", AGENT, _t("2026-04-05"), no_verify=True,
                                    files={"skills/quick.md": "---\nname: quick\ndescription: q\n---\nGo.\n"})
    b.shas["server_metadata"] = w.commit("Create system/notes/tasks block", SERVER, _t("2026-04-06"), files={
        "system/notes/tasks.md": "---\ndescription: Tasks\nmetadata:\n  priority: high\n---\n\n- ship\n"})
    # A reflection branch still open (not merged).
    w.checkout("-b", "letta/reflection/refl-2")
    b.shas["reflection_open"] = w.commit("chore: draft a reflection \U0001f52e", REFLECTION,
                                         _t("2026-04-07"), files={"notes/reflection.md": "Thoughts.\n"})
    w.checkout("main")
    # Uncommitted drift: an edit, a new file, and an ignored scratch file.
    w.write("system/human.md", "---\ndescription: What I know about the human\n---\n\nName: Sam.\n")
    w.write("notes/draft.md", "draft\n")
    w.write("scratch.tmp", "ignored\n")
    b.facts.update(suspects={"edit_read_only", "drop_read_only", "unknown_key", "flat_skill"},
                   agent_email=AGENT[1])
    return b


def build_letta_memory_prefix(path: Path) -> Built:
    """An early-February 2026 repo: files under memory/, raw files before frontmatter (Feb 6),
    and an agent commit after the hook arrived (Feb 10) that lacks the then-required limit."""
    w = _Writer(path)
    b = Built(path)
    b.shas["init"] = w.commit("Initial commit", SERVER, _t("2026-02-03"), files={
        ".letta/config.json": json.dumps({"version": 1}) + "\n",
        "memory/system/persona.md": "I am Scout.\n",
        "memory/system/human.md": "The human is Ana.\n",
        "memory/reference/notes.md": "Loose notes.\n",
    })
    b.shas["frontmatter"] = w.commit("Update system/persona block", SERVER, _t("2026-02-07"), files={
        "memory/system/persona.md": "---\ndescription: Who I am\nlimit: 2000\n---\nI am Scout.\n"})
    b.shas["no_limit"] = w.commit("feat: remember deploy steps", AGENT, _t("2026-02-12"),
                                  no_verify=True, files={
        "memory/system/deploy.md": render_memfs_file("How to deploy", "make release\n")})
    b.shas["with_limit"] = w.commit("fix: give human block frontmatter", AGENT, _t("2026-02-14"), files={
        "memory/system/human.md": render_memfs_file("Who the human is", "The human is Ana.\n", limit=2000)})
    w.repo.git.mv("memory/reference/notes.md", "notes.md")
    b.shas["rename"] = w.commit("chore: move loose notes to the root", HUMAN, _t("2026-02-16"))
    return b


def build_letta_v2(path: Path) -> Built:
    """A memfs v2 repo: a root MEMORY.md index; root-level files are core memory."""
    w = _Writer(path)
    b = Built(path)
    b.shas["init"] = w.commit("Initial commit", SERVER, _t("2026-08-20"), files={
        "MEMORY.md": "# Memory\n- persona.md\n- human.md\n- projects/\n",
        "persona.md": render_memfs_v2_file("persona", "Who I am", "I am Vee.\n"),
        "human.md": render_memfs_v2_file("human", "The human", "Kai, a designer.\n"),
        "projects/MEMORY.md": "# Projects\n- alpha.md\n",
        "projects/alpha.md": render_memfs_v2_file("alpha", "Project alpha", "A poster app.\n"),
        "notes/loose.md": "not projected: notes/ has no MEMORY.md\n",
        "skills/draw/SKILL.md": "---\nname: draw\ndescription: Draw posters\n---\n\nUse SVG.\n",
    })
    b.shas["agent"] = w.commit("feat: note the human's tools", AGENT, _t("2026-08-21"), files={
        "human.md": render_memfs_v2_file("human", "The human", "Kai, a designer.\nUses Figma.\n")})
    return b


AGENT_YAML = {
    "uuid": SOUV_ID, "name": "Ani", "model": "fireworks/kimi-k2p5-turbo",
    "created_at": "2026-05-01T10:00:00Z",
    "memory": {"git_remote": None, "auto_commit": True},
    "blocks": [{"label": "persona", "file": "system/persona.md"},
               {"label": "journal", "file": "memory/journal/2026-05-01.md"}],
    "tags": ["primary"],
}


def build_souveraine(path: Path, *, agent_yaml_in_repo: bool = False,
                     agent_yaml: dict | None = None) -> Built:
    """A Souveraine agent dir: agent.yaml (beside memory/, or inside the repo) + memory/ repo."""
    repo_dir = path if agent_yaml_in_repo else path / "memory"
    w = _Writer(repo_dir)
    b = Built(path)
    text = json.dumps(agent_yaml or AGENT_YAML, indent=2) + "\n"  # JSON is YAML
    init = {
        "system/persona.md": "---\ndescription: Ani's identity and voice\nlimit: 4000\n"
                             "read_only: \"false\"\n---\n\nI am Ani.\n",
        "system/state.md": "---\ndescription: Current state\nlimit: 2000\n---\n\nIdle.\n",
        "skills/rust-expert/SKILL.md": "---\nname: rust-expert\ndescription: Rust help\n---\n\nBorrow.\n",
    }
    if agent_yaml_in_repo:
        init["agent.yaml"] = text
    else:
        (path / "agent.yaml").write_text(text)
    b.shas["init"] = w.commit("feat(init): initialize agent memory", SOUVERAINE, _t("2026-05-01"),
                              files=init)
    b.shas["journal"] = w.commit("memory append: memory/journal/2026-05-01", SOUVERAINE,
                                 _t("2026-05-01", 12), files={
        "memory/journal/2026-05-01.md": "---\ndescription: Journal for May 1\n---\n\nMet Casey.\n"})
    b.shas["ledger"] = w.commit("memory write: ledger/decisions", SOUVERAINE, _t("2026-05-02"), files={
        "ledger/decisions.md": "---\ndescription: Decisions\nread_only: false\ntags: [ledger]\n---\n\n"
                               "Use git.\n",
        "memory/subconscious/inbox.md": "---\ndescription: Inbox\n---\n\nNothing yet.\n"})
    b.shas["state"] = w.commit("memory write: system/state", SOUVERAINE, _t("2026-05-03"), files={
        "system/state.md": "---\ndescription: Current state\nlimit: 2000\n---\n\n" + "busy " * 500 + "\n"})
    return b


def build_substrate(path: Path) -> Built:
    """A project folder whose .elfmem/ substrate is committed to git."""
    w = _Writer(path)
    b = Built(path)
    notes = format_blockfile([
        Block(title="Prefer small commits", body="Small commits review faster.", id="a1b2c3d4e5f60718",
              tags=["git"], created="2026-07-01T09:00:00+00:00", cls="pattern"),
        Block(title="Tests first", body="Write the failing test first.", id="0f1e2d3c4b5a6978",
              created="2026-07-02T09:00:00+00:00", relations=[("supports", "a1b2c3d4e5f60718")]),
    ])
    ledger = format_ledger([{"t": "2026-07-01T09:00:00+00:00", "s": 1, "ah": 0.5, "k": "learn",
                             "id": "a1b2c3d4e5f60718"}])
    b.shas["init"] = w.commit("elfmem: initial substrate", HUMAN, _t("2026-07-01"), files={
        "README.md": "A project.\n",
        ".elfmem/memory/self.md": "I value clarity.\n",
        ".elfmem/memory/notes/practice.md": notes,
        ".elfmem/ledger/2026-07.jsonl": ledger,
    })
    return b


def snapshot(path: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``path`` (``.git`` included) with its bytes and mode, to prove a load
    changed nothing."""
    out = {}
    for dirpath, dirs, files in os.walk(path):
        for name in dirs:
            out[str(Path(dirpath, name).relative_to(path)) + "/"] = (b"", 0)
        for name in files:
            full = Path(dirpath, name)
            if full.is_symlink():
                out[str(full.relative_to(path))] = (os.readlink(full).encode(), 0)
            else:
                out[str(full.relative_to(path))] = (full.read_bytes(), full.stat().st_mode)
    return out
