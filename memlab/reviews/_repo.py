"""Git access for review and apply, through memlab's one hardened git module.

Every call goes through :mod:`memlab._git`: no program the repository's config names (fsmonitor,
hooks, filters, diff drivers, pagers, credential helpers) can run, and a repository whose config
includes other files, or whose git folder holds a FIFO, is refused with the key or file named.
Reading uses object reads and ``git log`` only; the working tree is compared with HEAD by hashing
files in Python (never ``git status``, which would refresh the index and run clean filters and
fsmonitor), so files whose stat data is stale but whose content is unchanged are clean.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import cast

from memlab import _git
from memlab.errors import RepoError
from memlab.store import Store

__all__ = [
    "Repo",
    "open_repo",
    "store_repo",
    "read_blob",
    "blob_at",
    "mode_at",
    "head_sha",
    "current_branch",
    "commit_info",
    "path_commits",
    "dirty_paths",
]


@dataclass(frozen=True)
class Repo:
    """A memory repository's working tree root (all git calls go through :mod:`memlab._git`)."""

    root: Path

    @property
    def working_tree_dir(self) -> str:
        return str(self.root)


def open_repo(path: str | Path) -> Repo:
    """The git repository at ``path`` (its root, or a folder inside it), checked for safety."""
    root = _git.find_root(Path(path).expanduser())
    if root is None:
        raise RepoError(
            "not a git repository",
            path=path,
            hint="apply works on memory repos (Letta memfs, Souveraine, elfmem "
            "substrate); run it on the repo the proposal was made from",
        )
    _git.check_repo(root)
    return Repo(root)


def store_repo(store: Store) -> Repo | None:
    """The repo a memfs store was read from, or None for stores read from plain folders."""
    root = store.meta.get("repo") or store.path
    if not store.meta.get("head_sha"):
        return None
    return open_repo(root)


def read_blob(repo: Repo, sha: str) -> bytes:
    """A blob's bytes; ValueError when the repository does not have it."""
    data = _git.read_blob(repo.root, sha)
    if data is None:
        raise ValueError(f"no blob {sha}")
    return data


def blob_at(repo: Repo, commit: str, path: str) -> str | None:
    """The blob sha of ``path`` in ``commit``, or None when the path is not there."""
    try:
        found = _git.tree_entries(repo.root, commit, [path])
    except RepoError:  # a bad commit: treat as absent
        return None
    entry = found.get(path)
    return entry[2] if entry is not None and entry[1] == "blob" else None


def mode_at(repo: Repo, commit: str, path: str) -> str | None:
    try:
        entry = _git.tree_entries(repo.root, commit, [path]).get(path)
    except RepoError:
        return None
    return entry[0] if entry else None


def head_sha(repo: Repo) -> str | None:
    return _git.rev_parse(repo.root, "HEAD")


def current_branch(repo: Repo) -> str | None:
    out = _git.run(repo.root, "symbolic-ref", "-q", "HEAD", check=False, ceiling=False)
    ref = out.decode("utf-8", "replace").strip()
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None


def commit_info(repo: Repo, sha: str) -> tuple[list[str], str, str] | None:
    """(parents, tree, message) of a commit, or None."""
    out = _git.run(
        repo.root,
        "log",
        "-1",
        "--no-show-signature",
        "--format=%P%x00%T%x00%B",
        "--end-of-options",
        sha,
        "--",
        check=False,
        ceiling=False,
    )
    parts = out.decode("utf-8", "replace").split("\0", 2)
    if len(parts) < 3:
        return None
    return parts[0].split(), parts[1].strip(), parts[2]


def path_commits(repo: Repo, path: str) -> list[tuple[str, str]]:
    """(sha, ISO author date) of every commit on HEAD's history that touched ``path``,
    oldest first (no rename following: a renamed identity file starts a new history)."""
    out = _git.run(
        repo.root,
        "log",
        "--no-ext-diff",
        "--no-textconv",
        "--format=%H %aI",
        "--reverse",
        "HEAD",
        "--",
        path,
        check=False,
        ceiling=False,
    )
    return [
        cast(tuple[str, str], tuple(line.split(" ", 1)))
        for line in out.decode("utf-8", "replace").splitlines()
        if line.strip()
    ]


def dirty_paths(repo: Repo, pathspec: str | None = None) -> list[str]:
    """Tracked files whose index or working copy differs from HEAD (untracked files ignored).

    The index is compared with ``diff-index --cached`` (no working tree read); the working
    tree by hashing each tracked file in Python as git would without filters. A file that was
    only touched (stat data stale, bytes unchanged) is not dirty.
    """
    from memlab.sources import _git as read_git

    head = head_sha(repo)
    if head is None:
        return []
    args = ["diff-index", "--cached", "--no-ext-diff", "--name-only", "-z", head]
    if pathspec:
        args += ["--", pathspec]
    staged = [
        p.decode("utf-8", "replace")
        for p in _git.run(repo.root, *args, ceiling=False).split(b"\0")
        if p
    ]
    info = read_git.RepoInfo(
        repo.root,
        repo.root,
        _git.git_dir(repo.root) or repo.root / ".git",
        False,
        False,
        head,
        None,
    )
    changes = read_git.working_tree_changes(info, head)
    worktree = [
        str(p)
        for p, c in zip(changes["path"], changes["change"])
        if c != "untracked" and (not pathspec or str(p).startswith(pathspec))
    ]
    return sorted(set(staged) | set(worktree))
