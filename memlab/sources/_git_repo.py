"""The repository and its objects, read without writing: :func:`run_git` (every read-only git
command of the loaders, hardened by :mod:`memlab._git`), what a repository is
(:func:`find_repo`), the commit a ref names, a commit's tree (:func:`ls_tree`) and blobs
(:func:`read_blobs`, :func:`blob_sizes`). :mod:`memlab.sources._git` gathers the plumbing."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from memlab import _git as _hardened
from memlab._files import FileTooLarge, read_text
from memlab.constants import MAX_FILE_BYTES
from memlab.errors import RepoError
from memlab.io import parse_ls_tree, shown_name, tree_name

__all__ = [
    "READ_CONFIG",
    "run_git",
    "RepoInfo",
    "find_repo",
    "resolve_commit",
    "TreeEntry",
    "ls_tree",
    "read_blobs",
    "blob_sizes",
]

# Settings for reading history; memlab._git adds the hardening (environment and overrides).
# core.bigFileThreshold: git diffs no blob over memlab's cap (numstat gives "-", as for a binary
# file, from the object's size alone), so a huge committed file never makes git load it.
READ_CONFIG = (
    "log.showSignature=false",
    "core.quotePath=false",
    "diff.renameLimit=2000",
    "log.mailmap=false",
    f"core.bigFileThreshold={MAX_FILE_BYTES}",
)


def run_git(repo: Path, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
    """Run one read-only git command in ``repo`` through :func:`memlab._git.run` (hardened:
    no program the repository's config names can run); stdout as bytes. RepoError on failure."""
    return _hardened.run(repo, *args, input=input, check=check, config=READ_CONFIG)


@dataclass
class RepoInfo:
    """What a repository is, read without writing anything."""

    path: Path  # the folder asked for
    workdir: Path | None  # None for a bare repository
    git_dir: Path
    bare: bool
    shallow: bool
    head_sha: str | None  # None: no commits yet
    branch: str | None  # None: detached HEAD (or no HEAD at all)
    shallow_boundary: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return self.head_sha is None


def find_repo(path: str | Path) -> RepoInfo | None:
    """The git repository rooted exactly at ``path``, or None when ``path`` is not one."""
    path = Path(path)
    probe = run_git(
        path,
        "rev-parse",
        "--is-bare-repository",
        "--is-shallow-repository",
        "--absolute-git-dir",
        check=False,
    )
    # Paths as the file system names them (os.fsdecode): the repo may sit in a folder whose
    # name is not UTF-8.
    lines = os.fsdecode(probe).splitlines()
    if len(lines) < 3 or lines[0] not in ("true", "false"):
        return None
    bare, shallow, git_dir = lines[0] == "true", lines[1] == "true", Path(lines[2])
    workdir = None
    if not bare:
        top = os.fsdecode(run_git(path, "rev-parse", "--show-toplevel", check=False)).rstrip("\n")
        workdir = Path(top) if top else None
        if workdir is None or workdir.resolve() != path.resolve():
            return None  # `path` is a folder inside a repo, not the repo itself
    head = (
        run_git(path, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).decode().strip()
    )
    ref = run_git(path, "symbolic-ref", "-q", "HEAD", check=False).decode().strip()
    branch = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else (ref or None)
    boundary: list[str] = []
    if shallow:
        shallow_file = git_dir / "shallow"
        if shallow_file.exists():
            try:
                text = read_text(shallow_file, max_bytes=MAX_FILE_BYTES)
            except FileTooLarge as exc:
                raise RepoError(
                    f".git/shallow {exc.reason}",
                    path=path,
                    hint="git lists one commit a line there; load a full clone",
                ) from None
            except OSError as exc:
                raise RepoError(f"cannot read .git/shallow: {exc}", path=path) from None
            boundary = [s for s in text.split() if s]
    return RepoInfo(path, workdir, git_dir, bare, shallow, head or None, branch, boundary)


def resolve_commit(repo: Path, ref: str) -> str:
    """The commit sha ``ref`` names, or RepoError saying the ref is unknown."""
    if not ref or ref.startswith("-") or any(c in ref for c in "\x00\n\r "):
        raise RepoError(f"{ref!r} is not a valid git ref", path=repo)
    out = (
        run_git(
            repo,
            "rev-parse",
            "-q",
            "--verify",
            "--end-of-options",
            f"{ref}^{{commit}}",
            check=False,
        )
        .decode()
        .strip()
    )
    if not out:
        raise RepoError(
            f"unknown ref {ref!r}",
            path=repo,
            hint="name a branch, tag or commit of this repository (git branch -a)",
        )
    return out


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str  # blob / tree / commit (a submodule)
    sha: str
    size: int | None
    path: str  # memlab.io.shown_name: a name that is not UTF-8 has U+FFFD in its place
    #: The name's bytes when they are not UTF-8 (``path`` then shows them with U+FFFD), else None.
    raw: bytes | None = field(default=None, compare=False, repr=False)

    @property
    def name_bytes(self) -> bytes:
        """The path exactly as git stores it."""
        return self.raw if self.raw is not None else self.path.encode("utf-8")


_FULL_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def ls_tree(repo: Path, commit: str) -> list[TreeEntry]:
    """Every blob and submodule in ``commit``'s tree, recursively, with sizes.

    A full commit id names one tree forever, so its listing is read from git once per process
    and repository (the loader and the audit each ask for HEAD's); a ref or short id is read
    every time."""
    if _FULL_SHA.fullmatch(commit):
        return list(_ls_tree_of_sha(str(repo), commit))
    return _ls_tree(repo, commit)


@functools.lru_cache(maxsize=32)
def _ls_tree_of_sha(repo: str, sha: str) -> tuple[TreeEntry, ...]:
    return tuple(_ls_tree(Path(repo), sha))


def _ls_tree(repo: Path, commit: str) -> list[TreeEntry]:
    out = run_git(repo, "ls-tree", "-r", "-z", "--long", "--full-tree", commit)
    entries = []
    for r in parse_ls_tree(out, long=True):
        name = tree_name(r.raw)
        shown = shown_name(name)
        entries.append(
            TreeEntry(r.mode, r.type, r.sha, r.size, shown, None if shown == name else r.raw)
        )
    return entries


def read_blobs(
    repo: Path, shas: Iterable[str], *, max_bytes: int | None = None
) -> dict[str, bytes]:
    """Contents of the given objects in one ``git cat-file --batch`` call; missing ones absent.

    With ``max_bytes``, an object larger than that is absent too: its bytes are passed over in
    1 MB pieces and never held (callers that know sizes, from ``ls-tree -l`` or
    :func:`blob_sizes`, leave such objects out of ``shas`` so git does not send them at all)."""
    wanted = list(dict.fromkeys(s for s in shas if s))
    if not wanted:
        return {}
    result: dict[str, bytes] = {}
    # Read blob by blob as git writes them: each blob's bytes exist once (no whole-output
    # buffer, no slice of it), so a 1 GB blob costs 1 GB here, not three.
    with _hardened.pipe(
        repo, "cat-file", "--batch", input=("\n".join(wanted) + "\n").encode(), config=READ_CONFIG
    ) as out:
        for sha in wanted:
            header = out.readline().split()
            if len(header) < 3 or header[1] == b"missing":
                continue
            size = int(header[2])
            if max_bytes is not None and size > max_bytes:
                left = size
                while left > 0:
                    got = len(out.read(min(left, 1 << 20)))
                    if not got:
                        break
                    left -= got
            else:
                result[sha] = out.read(size)
            out.read(1)  # the newline after each object
    return result


def blob_sizes(repo: Path, shas: Iterable[str]) -> dict[str, int]:
    """Object sizes from ``git cat-file --batch-check`` (no content read)."""
    wanted = list(dict.fromkeys(s for s in shas if s))
    if not wanted:
        return {}
    out = run_git(
        repo,
        "cat-file",
        "--batch-check=%(objectname) %(objectsize)",
        input=("\n".join(wanted) + "\n").encode(),
    )
    sizes = {}
    for line in out.decode().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
    return sizes
