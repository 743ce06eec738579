"""Plumbing used by the writers (a migration's apply, review's apply): reading a commit, a
blob or a tree (:func:`rev_parse`, :func:`read_blob`, :func:`tree_entries`, :func:`flat_tree`,
:func:`symbolic_branch`), writing objects from Python (:func:`hash_object`,
:func:`commit_tree`, :func:`write_object`, in :func:`object_format`) and moving a branch
(:func:`update_ref`). Part of :mod:`memlab._git`, which re-exports the public names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

from memlab._git_check import check_repo, common_dir, git_dir
from memlab._git_process import run_unvetted
from memlab._git_run import returncode, run
from memlab._gitobj import Signature, commit_body, write_loose
from memlab.errors import RepoError
from memlab.io import parse_ls_tree, tree_name

__all__ = [
    "rev_parse",
    "read_blob",
    "tree_entries",
    "hash_object",
    "commit_tree",
    "update_ref",
    "object_format",
    "write_object",
    "flat_tree",
    "symbolic_branch",
]


def rev_parse(repo: Path, rev: str) -> str | None:
    """The commit ``rev`` names, or None (``rev`` is never read as an option)."""
    out = run(
        repo,
        "rev-parse",
        "-q",
        "--verify",
        "--end-of-options",
        f"{rev}^{{commit}}",
        check=False,
        ceiling=False,
    )
    return out.decode().strip() or None


def read_blob(repo: Path, sha: str) -> bytes | None:
    """A blob's bytes (no filters, no textconv), or None when the repository lacks it."""
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha or ""):
        return None
    proc = run_unvetted(
        repo, ["cat-file", "blob", sha], check=False, ceiling=False, overrides=check_repo(repo)
    )
    return proc.stdout if proc.returncode == 0 else None


def tree_entries(
    repo: Path, commit: str, paths: Sequence[str] = (), *, recursive: bool = False
) -> dict[str, tuple[str, str, str]]:
    """``{path: (mode, type, sha)}`` of ``commit``'s tree (only ``paths`` when given); a path
    is :func:`memlab.io.tree_name` of git's bytes (lossless, so a tree written back keeps them)."""
    args = ["ls-tree", "-z", "--full-tree"] + (["-r"] if recursive else []) + [commit]
    if paths:
        args += ["--", *paths]
    out = run(repo, *args, ceiling=False)
    return {tree_name(r.raw): (r.mode, r.type, r.sha) for r in parse_ls_tree(out)}


def _repo_git_dir(repo: Path) -> Path:
    gdir = git_dir(Path(repo))
    if gdir is None:
        raise RepoError("not a git repository", path=repo)
    return gdir


def hash_object(repo: Path, data: bytes, kind: str = "blob") -> str:
    """Store ``data`` as an object of the repository at ``repo`` (never through a clean filter:
    written from Python by :mod:`memlab._gitobj`); its id."""
    return write_object(_repo_git_dir(repo), kind, data)


def commit_tree(
    repo: Path, tree: str, parents: Sequence[str], message: str, signature: Signature
) -> str:
    """Store a commit of ``tree`` as ``git commit-tree -F`` would (never signed, no hooks),
    written from Python by :mod:`memlab._gitobj`; its id."""
    return write_object(
        _repo_git_dir(repo), "commit", commit_body(tree, parents, signature, message)
    )


def update_ref(repo: Path, ref: str, new: str, old: str, *, message: str = "memlab") -> bool:
    """Compare-and-swap ``ref`` from ``old`` (40 zeros: must not exist) to ``new``; False when
    the ref was not ``old`` any more."""
    return returncode(repo, "update-ref", "-m", message, ref, new, old) == 0


_formats: dict[tuple, str] = {}


def object_format(gdir: Path) -> str:
    """``"sha1"`` or ``"sha256"``: the object ids of the repository whose git folder is ``gdir``
    (asked of git once per folder and state of its config file)."""
    config = common_dir(Path(gdir)) / "config"
    try:
        st = os.stat(config)
        key: tuple = (str(config.resolve()), st.st_ino, st.st_mtime_ns, st.st_size)
    except OSError:
        key = (str(config),)
    if key not in _formats:
        out = run(gdir, "rev-parse", "--show-object-format", check=False, ceiling=False)
        _formats[key] = "sha256" if out.decode("ascii", "replace").strip() == "sha256" else "sha1"
    return _formats[key]


def write_object(gdir: Path, kind: str, body: bytes) -> str:
    """Store one loose object in the git folder ``gdir`` from Python (no git process, so nothing
    can run), in the repository's object format; its id. Atomic
    (:func:`memlab._gitobj.write_loose`)."""
    return write_loose(
        common_dir(gdir) / "objects", kind, body, sha256=object_format(gdir) == "sha256"
    )


def flat_tree(repo: Path, commit: str) -> dict[str, tuple[str, str]]:
    """``{path: (mode, sha)}`` of every non-tree entry of ``commit``, recursively."""
    return {
        p: (m, s)
        for p, (m, t, s) in tree_entries(repo, commit, recursive=True).items()
        if t != "tree"
    }


def symbolic_branch(repo: Path) -> str | None:
    """The branch HEAD names (None when detached)."""
    out = run(repo, "symbolic-ref", "-q", "HEAD", check=False, ceiling=False)
    ref = out.decode("utf-8", "replace").strip()
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None
