"""Load a Letta Code home (``~/.letta``) read-only: its agents, their memory repositories
(shared-memory repositories included, each loaded by :func:`memlab.load` as it loads alone),
every conversation's reflection state, the worktrees left under ``memory-worktrees/``, the
reflection and memory-worker merges, and every memory write (a commit's path) with its writer.

Nothing is written: files are read as regular files, git only through memlab's read-only calls
(``rev-list``, ``rev-parse``, ``for-each-ref``, ``log``; never ``status``), and a worktree's
uncommitted and untracked files are found by hashing them in Python against its HEAD
(:func:`memlab.sources._git.working_tree_changes`, through :func:`memlab.load`)."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.constants import MAX_FILE_BYTES
from memlab.errors import MemlabError, StoreNotFound
from memlab.kinds._memfs._locate import LOCAL_BACKEND, local_backend_dir
from memlab.kinds.letta_home._frames import agent_figures, frame
from memlab.kinds.letta_home._state import (
    read_conversation,
    read_local_agents,
    read_pass,
    read_settings,
    reflection_settings,
    sanitize_segment,
    worktree_name,
)
from memlab.store import Problems, Store

__all__ = [
    "load_letta_home",
    "home_markers",
    "agent_roots",
    "local_storage",
    "WRITER_KINDS",
]

#: Who wrote a memory commit, from the identities Letta Code gives git: ``agent``
#: (``<agent-id>@letta.com``, set as the repository's user by Letta Code, and the author of
#: every memory tool write), ``harness`` (``Letta Code <noreply@letta.com>``, HARNESS_GIT_ENV:
#: the merges of reflection and memory-worker branches) and ``human`` (anything else).
WRITER_KINDS = ("agent", "harness", "human")
_AGENT_EMAIL = re.compile(r"^(?P<id>[A-Za-z0-9._-]+)@letta\.com$")
_HARNESS_EMAIL = "noreply@letta.com"
_MERGE_SUBJECT = re.compile(r"^merge\((?P<what>reflection|memory)\):")
_REFLOG_MERGE = re.compile(r"^merge (?P<branch>letta/(?P<label>[A-Za-z0-9._-]+)/\S+): (?P<how>.*)$")


#: Folders of the transcript root that hold no agent's conversations: the memory subagents'
#: scratchpads (``resolveMemorySubagentScratchpad``: ``<root>/background/<subagent>``).
_NOT_AGENTS = ("background",)
#: Folders of an agent's transcript folder that are no conversation: the reflection passes over
#: several conversations (``multi-reflection-payloads``) and the memory handoffs of a
#: conversation's messages (``<root>/<agent>/memory-handoffs/<uuid>.json``).
_NOT_CONVERSATIONS = ("multi-reflection-payloads", "memory-handoffs")


def _own_home(home: Path) -> bool:
    """``home`` is the user's own ``~/.letta``, where Letta Code's environment variables apply."""
    try:
        return home.resolve() == (Path.home() / ".letta").resolve()
    except OSError:
        return False


def local_storage(home: Path) -> tuple[Path, bool]:
    """The local backend's storage folder of ``home`` (:func:`local_backend_dir`) and whether
    ``LETTA_LOCAL_BACKEND_DIR`` named it (for the user's own home only; another home is read as
    it is on disk)."""
    own = _own_home(home)
    return local_backend_dir(home, own=own), own and bool(os.environ.get("LETTA_LOCAL_BACKEND_DIR"))


def agent_roots(home: Path) -> list[tuple[str, Path]]:
    """(backend, folder of agent folders): ``agents/`` for the cloud backend's memory clones
    (``getAgentRootDir``) and the local backend's ``memfs/``
    (``getLocalBackendCrossAgentTreeRoot``)."""
    return [("cloud", home / "agents"), ("local", local_storage(home)[0] / "memfs")]


def home_markers(path: Path) -> str | None:
    """What makes ``path`` a Letta Code home: a folder of agent folders (``agents/``, or the
    local backend's ``lc-local-backend/memfs/``) holding at least one agent folder with
    ``memory/`` or ``memory-worktrees/``, or such a folder beside ``settings.json`` or
    ``transcripts/``; never a git repository itself (an agent's memory repository may hold an
    ``agents/`` folder of notes)."""
    if not path.is_dir() or (path / ".git").exists():
        return None
    roots = []
    for _, root in agent_roots(path):
        if root.is_dir():
            try:
                roots.append((root, root.relative_to(path).as_posix()))
            except ValueError:
                roots.append((root, str(root)))
    if not roots:
        return None
    for root, shown in roots:
        try:
            with os.scandir(root) as found:
                for entry in found:
                    if entry.is_dir(follow_symlinks=False):
                        sub = Path(entry.path)
                        if (sub / "memory").is_dir() or (sub / "memory-worktrees").is_dir():
                            return f"{shown}/{entry.name}/memory"
        except OSError:
            continue
    for marker in ("settings.json", "transcripts"):
        if (path / marker).exists():
            return f"{roots[0][1]}/ beside {marker}"
    return None


_SHARED = re.compile(r"[A-Za-z0-9._-]{1,64}")


def _shared_name(name: str) -> bool:
    """A shared-memory repository's folder beside ``memory/`` (Letta Code 0.34: names
    ``[A-Za-z0-9._-]{1,64}``, ``memory`` reserved); ``memory-worktrees`` and
    ``memory-backup-*`` are Letta Code's own copies of ``memory/``."""
    return bool(
        _SHARED.fullmatch(name)
        and name not in ("memory", "memory-worktrees")
        and not name.startswith("memory-backup")
    )


def _subdirs(folder: Path, problems: Problems | None = None) -> list[Path]:
    """The folders in ``folder``, sorted; a symbolic link is not followed and, given
    ``problems``, is a ``symlink_not_followed`` row (an agent's ``memory`` link excepted:
    :func:`memlab.load` reads it, as discover lists it)."""
    try:
        with os.scandir(folder) as found:
            entries = sorted(found, key=lambda e: e.name)
    except FileNotFoundError:
        return []
    except OSError as exc:
        if problems is not None:
            problems.add(folder, "not_listed", f"folder not listed: {exc.strerror}")
        return []
    out = []
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            out.append(Path(e.path))
        elif e.is_symlink() and problems is not None and e.name != "memory":
            problems.add(e.path, "symlink_not_followed", "a symbolic link: not followed")
    return out


def _writer(name: Any, email: Any, agent_id: str) -> tuple[str, str | None]:
    """(writer kind, the agent id when an agent wrote it)."""
    email = str(email or "")
    m = _AGENT_EMAIL.match(email)
    if email == _HARNESS_EMAIL:
        return "harness", None
    if m:
        return "agent", m["id"]
    return "human", None


def _git(repo: Path, *args: str) -> str:
    from memlab.sources._git import run_git

    return run_git(repo, *args, check=False).decode("utf-8", "replace")


def _rev_list(repo: Path, *revs: str) -> list[str]:
    out = _git(repo, "rev-list", *revs, "--")
    return [line for line in out.split() if line]


def _reflog(repo: Path, branch: str | None, problems: Problems) -> list[dict[str, Any]]:
    """Fast-forward and merge entries of the branch's reflog naming a ``letta/<label>/`` branch
    (``git merge <branch>`` records ``merge <branch>: Fast-forward``)."""
    from memlab._files import read_text

    if not branch:
        return []
    log = repo / ".git" / "logs" / "refs" / "heads" / branch
    if not log.is_file():
        return []
    try:
        text = read_text(log, max_bytes=MAX_FILE_BYTES)
    except (OSError, MemlabError) as exc:
        problems.add(log, "reflog_not_read", str(exc))
        return []
    rows = []
    for line in text.splitlines():
        head, _, message = line.partition("\t")
        parts = head.split(" ")
        if len(parts) < 4:
            continue
        m = _REFLOG_MERGE.match(message)
        if not m:
            continue
        try:
            at = pd.Timestamp(int(parts[-2]), unit="s", tz="UTC")
        except (ValueError, OverflowError):
            at = pd.NaT
        rows.append(
            {
                "old": parts[0],
                "new": parts[1],
                "at": at,
                "branch": m["branch"],
                "label": m["label"],
                "fast_forward": m["how"].startswith("Fast-forward"),
            }
        )
    return rows


def _repo_rows(
    agent_id: str, repo_name: str, role: str, folder: Path, problems: Problems, out: dict
) -> None:
    """Load one memory repository with :func:`memlab.load` and add its rows."""
    import memlab

    try:
        store = memlab.load(folder)
    except MemlabError as exc:
        problems.add(folder, "repo_not_loaded", f"{type(exc).__name__}: {exc}")
        out["repos"].append(
            {"agent_id": agent_id, "repo": repo_name, "role": role, "path": str(folder)}
        )
        return
    hist = store.frames.get("history", pd.DataFrame())
    files = store.frames.get("files", pd.DataFrame())
    branch = store.meta.get("branch")
    refs = [r for r in _git(folder, "show-ref").split() if r.startswith("refs/letta-backup/")]
    policy = store.meta.get("layout_policy")
    out["repos"].append(
        {
            "agent_id": agent_id,
            "repo": repo_name,
            "role": role,
            "path": str(folder),
            "kind": store.kind,
            "layout": store.meta.get("layout"),
            "layout_policy": policy,
            "branch": branch,
            "head": store.meta.get("head_sha"),
            "commits": int(hist["sha"].nunique()) if "sha" in hist else 0,
            "files": len(files),
            "backup_refs": len(refs),
            "uncommitted": len(store.frames.get("uncommitted", ())),
            "problems": len(store.problems),
        }
    )
    for row in store.problems.itertuples(index=False):
        problems.add(
            f"{folder}/{row.file}" if row.file else folder, str(row.kind), row.message, row.line
        )
    out["stores"][(agent_id, repo_name)] = store
    for f in files.itertuples(index=False):
        out["files"].append(
            {
                "agent_id": agent_id,
                "repo": repo_name,
                "path": f.path,
                "in_prompt": f.in_prompt,
                "body": f.body,
            }
        )
    head = store.meta.get("head_sha")
    if head:
        from memlab.sources._git import ls_tree

        for e in ls_tree(folder, head):
            if e.type == "blob":
                out["tree"].append({"agent_id": agent_id, "repo": repo_name, "path": e.path})
    if hist.empty:
        return
    gone: dict[tuple[str, str], int] = {}
    if branch:
        added, gone = _added_lines(folder, branch)
        out["added"].extend({"agent_id": agent_id, "repo": repo_name, **r} for r in added)
    on_main = set(_rev_list(folder, branch)) if branch else set(hist["sha"])
    merged: dict[str, tuple[str, str]] = {}  # commit -> (label, merge sha)
    merges = out["merges"]
    commits = hist.drop_duplicates("sha")
    for c in commits.itertuples(index=False):
        subject = str(c.message).split("\n", 1)[0]
        m = _MERGE_SUBJECT.match(subject)
        parents = list(c.parents) if isinstance(c.parents, (list, tuple)) else []
        if not m or c.sha not in on_main:
            continue
        label = "reflection" if m["what"] == "reflection" else "memory-worker"
        brought = _rev_list(folder, parents[1], f"^{parents[0]}") if len(parents) > 1 else []
        for sha in brought:
            merged.setdefault(sha, (label, c.sha))
        merges.append(
            {
                "agent_id": agent_id,
                "repo": repo_name,
                "merge": c.sha,
                "label": label,
                "how": "merge commit",
                "at": c.committed_at,
                "subject": subject,
                "commits": len(brought),
                "_brought": brought,
            }
        )
    for r in _reflog(folder, branch, problems):
        label = "memory-worker" if r["label"] == "memory-worker" else r["label"]
        if not r["fast_forward"]:
            continue  # the merge commit is counted from its subject
        brought = _rev_list(folder, r["new"], f"^{r['old']}") if r["old"].strip("0") else []
        for sha in brought:
            merged.setdefault(sha, (label, r["new"]))
        merges.append(
            {
                "agent_id": agent_id,
                "repo": repo_name,
                "merge": r["new"],
                "label": label,
                "how": "fast-forward",
                "at": r["at"],
                "subject": r["branch"],
                "commits": len(brought),
                "_brought": brought,
            }
        )
    for h in hist.itertuples(index=False):
        kind, writer_agent = _writer(h.author_name, h.author_email, agent_id)
        via = merged.get(h.sha, (None, None))[0]
        subject = str(h.message).split("\n", 1)[0]
        out["writes"].append(
            {
                "agent_id": agent_id,
                "repo": repo_name,
                "role": role,
                "sha": h.sha,
                "committed_at": h.committed_at,
                "author_name": h.author_name,
                "author_email": h.author_email,
                "writer": kind,
                "writer_agent": writer_agent,
                "on_main": h.sha in on_main,
                "is_merge": isinstance(h.parents, (list, tuple)) and len(h.parents) > 1,
                "via": via if via else ("direct" if h.sha in on_main else None),
                "subject": subject,
                "path": h.path,
                "change_type": h.change_type,
                "lines_added": h.lines_added,
                "lines_deleted": h.lines_deleted,
                "lines_removed": (
                    gone.get((h.sha, h.path), 0) if branch and h.sha in on_main else None
                ),
            }
        )


_MAX_ADDED_LINE = 500


def _added_lines(
    repo: Path, branch: str
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], int]]:
    """The lines each non-merge commit of ``branch`` added (``git log -p -U0``), per path,
    and per (commit, path) how many lines it removed for good."""
    rows: list[dict[str, Any]] = []
    sha, path = None, None
    out = _git(
        repo,
        "log",
        "--no-merges",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "-p",
        "-U0",
        "--format=%x1e%H",
        f"refs/heads/{branch}",
        "--",
    )
    removed: set[tuple[str, str, str]] = set()
    old: str | None = None  # the path lines are removed from (a deleted file's too)
    for line in out.split("\n"):
        if line.startswith("\x1e"):
            sha, path, old = line[1:].strip(), None, None
        elif line.startswith("+++ ") or line.startswith("--- "):
            if line.startswith("+++ "):
                path = line[6:] if line.startswith("+++ b/") else None
            else:
                old = line[6:] if line.startswith("--- a/") else None
        elif line.startswith("-") and sha and (old or path):
            removed.add((sha, old or path or "", line[1:]))
        elif line.startswith("+") and sha and path and len(line) <= _MAX_ADDED_LINE:
            rows.append({"sha": sha, "path": path, "line": line[1:]})
    # a line a commit removes and adds back in the same file was not written anew, nor removed
    # (the last line of a file without a final newline shows so when text is appended to it)
    added = {(r["sha"], r["path"], r["line"]) for r in rows}
    gone: dict[tuple[str, str], int] = {}
    for sha_, path_, text in removed - added:
        gone[(sha_, path_)] = gone.get((sha_, path_), 0) + 1
    # a line the same commit removed from any path was moved (a file renamed, a section moved
    # to another file: git shows --no-renames moves as a removal and an addition), not written
    moved = {(sha_, text) for sha_, _, text in removed}
    kept = [r for r in rows if (r["sha"], r["line"]) not in moved]
    return kept, gone


def _worktree_rows(agent_id: str, agent_dir: Path, problems: Problems, out: dict) -> None:
    import memlab

    for wt in _subdirs(agent_dir / "memory-worktrees", problems):
        label, created, branch = worktree_name(wt.name)
        row: dict[str, Any] = {
            "agent_id": agent_id,
            "name": wt.name,
            "path": str(wt),
            "label": label,
            "created_at": created,
            "expected_branch": branch,
        }
        if label is None:
            problems.add(wt, "unknown_worktree", "not a name Letta Code gives a worktree")
        if not (wt / ".git").exists():
            row["registered"] = False
            out["worktrees"].append(row)
            continue
        try:
            store = memlab.load(wt)
        except MemlabError as exc:
            problems.add(wt, "worktree_not_loaded", f"{type(exc).__name__}: {exc}")
            row["registered"] = False
            out["worktrees"].append(row)
            continue
        changes = store.frames.get("uncommitted", pd.DataFrame(columns=["path", "change"]))
        untracked = changes[changes["change"] == "untracked"]["path"].astype(str).tolist()
        dirty = changes[changes["change"] != "untracked"]["path"].astype(str).tolist()
        head = store.meta.get("head_sha")
        main = out["main_branch"].get(agent_id)
        ahead = len(_rev_list(wt, head, f"^refs/heads/{main}")) if head and main else None
        row.update(
            registered=True,
            branch=store.meta.get("branch"),
            head=head,
            commits_ahead=ahead,
            uncommitted=dirty,
            untracked=untracked,
            n_uncommitted=len(dirty),
            n_untracked=len(untracked),
        )
        out["worktrees"].append(row)


def _pass_row(storage: Path, record: dict[str, Any], problems: Problems) -> dict[str, Any]:
    """A reflection pass of the local backend: its subagent's record and conversation (the
    folder is ``Buffer.from("default:<id>").toString("base64url")``, as Letta Code names it)."""
    key = base64.urlsafe_b64encode(f"default:{record['id']}".encode()).decode().rstrip("=")
    folder = storage / "conversations" / key
    row = {
        "agent_id": record["parent"],
        "subagent_id": record["id"],
        "subagent_name": record["name"],
        "conversation_found": folder.is_dir(),
    }
    return row | (read_pass(folder, problems) if folder.is_dir() else {})


def load_letta_home(path: str | Path, *, transcript_root: str | Path | None = None) -> Store:
    """A Letta Code home as a store (kind ``letta_home``), read-only.

    ``transcript_root`` is where the conversations' reflection state lives: by default
    ``<home>/transcripts``, or ``LETTA_TRANSCRIPT_ROOT`` (trimmed, as ``getTranscriptRoot``
    reads it) when ``path`` is the user's own ``~/.letta``.

    Frames: ``agents`` (one row per agent: each ``agents/<id>/`` of the cloud backend, and each
    agent of the local backend, ``lc-local-backend/memfs/<id>/`` or its record in
    ``lc-local-backend/agents/``; with its backend, its reflection trigger and, for the local
    backend, how many reflection subagents were started for it: one per pass),
    ``memory_repos`` (its ``memory/`` and each shared-memory repository beside it, each loaded
    by :func:`memlab.load`; ``backup_refs`` counts ``refs/letta-backup/*``), ``conversations``
    (per conversation: the reflection state as Letta Code reads it, the transcript's rows, the
    ``payload-auto-*.json`` files its passes left and how many came after the last success),
    ``worktrees`` (every folder under ``memory-worktrees/``: label, creation time from its
    name, branch, commits not on the memory branch, uncommitted and untracked paths),
    ``passes`` (the local backend's reflection passes, one per reflection subagent: when it
    started, the conversation it reflected on, its last tool call and result and its last
    text, as its conversation holds them), ``merges`` (reflection and memory-worker merges
    into the memory branch: merge commits and reflog fast-forwards, with the commits and lines
    they brought) and ``writes`` (every commit's paths with the writer: agent, harness or
    human)."""
    home = Path(path).expanduser()
    if not home.is_dir():
        raise StoreNotFound("not a folder", path=home)
    problems = Problems()
    meta: dict[str, Any] = {"name": home.name}
    root = Path(transcript_root).expanduser() if transcript_root else home / "transcripts"
    env_root = (os.environ.get("LETTA_TRANSCRIPT_ROOT") or "").strip()
    if transcript_root is None and env_root and _own_home(home):
        root = Path(env_root)
        meta["transcript_root_from"] = "LETTA_TRANSCRIPT_ROOT"
    meta["transcript_root"] = str(root)
    storage, storage_from_env = local_storage(home)
    if storage_from_env:
        meta["local_backend_from"] = "LETTA_LOCAL_BACKEND_DIR"
    meta["local_backend"] = str(storage) if storage.is_dir() else None
    settings = read_settings(home / "settings.json", problems)
    meta["settings"] = settings is not None
    out: dict[str, Any] = {
        "repos": [],
        "merges": [],
        "writes": [],
        "worktrees": [],
        "files": [],
        "tree": [],
        "added": [],
        "stores": {},
        "main_branch": {},
    }
    agents: list[dict[str, Any]] = []
    conversations: list[dict[str, Any]] = []
    records = read_local_agents(storage / "agents", problems) if storage.is_dir() else []
    named = {r["id"]: r for r in records if not r["subagent"]}
    passes: dict[str, int] = {}
    pass_rows: list[dict[str, Any]] = []
    for r in records:
        if r["subagent"] and r["type"] == "reflection" and r["parent"]:
            passes[r["parent"]] = passes.get(r["parent"], 0) + 1
            pass_rows.append(_pass_row(storage, r, problems))
    folders: list[tuple[str, str, Path | None]] = [
        (backend, d.name, d)
        for backend, base in agent_roots(home)
        for d in _subdirs(base, problems)
    ]
    seen = {ident for _, ident, _ in folders}
    # an agent of the local backend with no memory folder (memfs off) is an agent all the same
    folders += [("local", i, None) for i in sorted(named) if i not in seen]
    transcript_agents = {p.name: p for p in _subdirs(root, problems) if p.name not in _NOT_AGENTS}
    for backend, agent_id, agent_dir in folders:
        memory = agent_dir / "memory" if agent_dir else None
        has_memory = bool(memory and memory.is_dir())
        if memory is not None and has_memory:
            _repo_rows(agent_id, "memory", "memory", memory, problems, out)
            rows = [r for r in out["repos"] if r["agent_id"] == agent_id]
            out["main_branch"][agent_id] = rows[-1].get("branch") if rows else None
        shared = 0
        for sub in _subdirs(agent_dir, problems) if agent_dir else []:
            if not _shared_name(sub.name) or not (sub / ".git").exists():
                continue
            shared += 1
            _repo_rows(agent_id, sub.name, "shared", sub, problems, out)
        if agent_dir:
            _worktree_rows(agent_id, agent_dir, problems, out)
        rs = reflection_settings(settings, agent_id)
        n_conv = 0
        folder = transcript_agents.pop(sanitize_segment(agent_id), None)
        for conv in _subdirs(folder, problems) if folder else []:
            if conv.name in _NOT_CONVERSATIONS:
                continue
            n_conv += 1
            conversations.append(
                {"agent_id": agent_id, "conversation_id": conv.name}
                | read_conversation(conv, problems)
            )
        agents.append(
            {
                "agent_id": agent_id,
                "backend": backend,
                "name": named[agent_id]["name"] if agent_id in named else None,
                "path": str(agent_dir) if agent_dir else None,
                "memory": has_memory,
                "shared_repos": shared,
                "conversations": n_conv,
                "worktrees": sum(1 for w in out["worktrees"] if w["agent_id"] == agent_id),
                "reflection_subagents": passes.get(agent_id, 0) if backend == "local" else None,
                "trigger": rs["trigger"],
                "step_count": rs["step_count"],
                "settings_source": rs["source"],
            }
        )
    for name, folder in sorted(transcript_agents.items()):
        problems.add(
            folder,
            "transcripts_without_agent",
            f"reflection state for {name}, no agents/{name}/ nor {LOCAL_BACKEND}/memfs/{name}/",
        )
    conv = frame("conversations", conversations)
    # passes started after the last success: the payload files written since (each pass writes
    # one when it starts, buildAutoReflectionPayload)
    since, last = [], []
    for c, succeeded in zip(conversations, conv["last_reflection_succeeded_at"]):
        times = [pd.Timestamp(t, unit="s", tz="UTC") for t in c["payload_times"]]
        last.append(max(times) if times else pd.NaT)
        since.append(len([t for t in times if pd.isna(succeeded) or t > succeeded]))
    conv["payloads_since_success"] = pd.array(since, dtype="Int64")
    conv["last_payload_at"] = pd.Series(last, dtype="datetime64[ns, UTC]")
    # a pass started and not finished successfully: started after the last success (or with
    # none); only finalizeAutoReflectionPayload(success) moves the success time
    started, succeeded = conv["last_reflection_started_at"], conv["last_reflection_succeeded_at"]
    conv["started_since_success"] = (
        started.notna() & (succeeded.isna() | (started > succeeded))
    ).astype("boolean")
    writes = frame("writes", out["writes"])
    for m in out["merges"]:
        brought = set(m.pop("_brought"))
        sel = writes[writes["sha"].isin(brought) & (writes["repo"] == m["repo"])]
        sel = sel[sel["agent_id"] == m["agent_id"]]
        m["lines_changed"] = int(
            sel["lines_added"].fillna(0).sum() + sel["lines_deleted"].fillna(0).sum()
        )
    merges = frame("merges", out["merges"]).sort_values(["agent_id", "at"], kind="stable")
    frames = {
        "agents": agent_figures(frame("agents", agents), conv, merges, writes),
        "memory_repos": frame("memory_repos", out["repos"]),
        "conversations": conv,
        "worktrees": frame("worktrees", out["worktrees"]),
        "merges": merges.reset_index(drop=True),
        "passes": frame("passes", pass_rows).sort_values(
            ["agent_id", "started_at"], kind="stable", ignore_index=True
        ),
        "writes": writes,
        "files": frame("files", out["files"]),
        "tree": frame("tree", out["tree"]),
        "added_lines": frame("added_lines", out["added"]),
    }
    meta["repo_problems"] = sum(len(s.problems) for s in out["stores"].values())
    return Store("letta_home", home, frames, problems.frame(), meta)
