"""Git access for review and apply, through GitPython.

Reading uses object reads and ``git log`` only (no ``git status`` without
``--no-optional-locks``, no index refresh). Writing, in apply, builds the commit with plumbing
(``hash-object``, a private index, ``write-tree``, ``commit-tree``, ``update-ref``): plumbing runs
no hooks, and the compare-and-swap in ``update-ref`` refuses to move a branch that moved under us.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memlab.errors import RepoError, MissingExtra
from memlab.store import Store


def _git_module() -> Any:
    try:
        import git
    except ImportError as exc:  # pragma: no cover - GitPython is a core dependency
        raise MissingExtra("GitPython", "all", feature="review of git repositories") from exc
    return git


_READ_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def open_repo(path: str | Path) -> Any:
    """The git repository at ``path`` (its root, or a folder inside it)."""
    git = _git_module()
    try:
        repo = git.Repo(Path(path).expanduser(), search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise RepoError("not a git repository", path=path,
                        hint="apply works on memory repos (Letta memfs, Souveraine, elfmem "
                             "substrate); run it on the repo the proposal was made from") from exc
    repo.git.update_environment(**_READ_ENV)
    return repo


def store_repo(store: Store) -> Any | None:
    """The repo a memfs store was read from, or None for stores read from plain folders."""
    root = store.meta.get("repo") or store.path
    if not store.meta.get("head_sha"):
        return None
    return open_repo(root)


def read_blob(repo: Any, sha: str) -> bytes:
    return repo.odb.stream(bytes.fromhex(sha)).read()


def blob_at(repo: Any, commit: str, path: str) -> str | None:
    """The blob sha of ``path`` in ``commit``, or None when the path is not there."""
    try:
        out = repo.git.ls_tree(commit, "--", path)
    except _git_module().GitCommandError:  # a bad commit: treat as absent
        return None
    for line in out.splitlines():
        meta, _, name = line.partition("\t")
        if name == path:
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                return parts[2]
    return None


def head_sha(repo: Any) -> str | None:
    try:
        return repo.head.commit.hexsha
    except ValueError:
        return None


def current_branch(repo: Any) -> str | None:
    return None if repo.head.is_detached else repo.active_branch.name


def path_commits(repo: Any, path: str) -> list[tuple[str, str]]:
    """(sha, ISO author date) of every commit on HEAD's history that touched ``path``,
    oldest first (no rename following: a renamed identity file starts a new history)."""
    try:
        out = repo.git.log("--format=%H %aI", "--reverse", "HEAD", "--", path)
    except _git_module().GitCommandError:  # no HEAD to walk: no history
        return []
    return [tuple(line.split(" ", 1)) for line in out.splitlines() if line.strip()]


def dirty_paths(repo: Any, pathspec: str | None = None) -> list[str]:
    """Tracked files whose index or working copy differs from HEAD (untracked files ignored)."""
    args = ["--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=no"]
    if pathspec:
        args += ["--", pathspec]
    out = repo.git.execute(["git", *args], env={**os.environ, **_READ_ENV},
                           strip_newline_in_stdout=False)
    entries = [e for e in out.split("\0") if e]
    paths = []
    skip = False
    for entry in entries:
        if skip:  # the source name of a rename entry
            skip = False
            continue
        status, name = entry[:2], entry[3:]
        paths.append(name)
        if "R" in status or "C" in status:
            skip = True
    return paths
