"""The working tree as git would see it, read without git writing anything: names from the disk
as memlab shows them (:func:`shown_path`), blob ids hashed in Python (:func:`git_blob_id`) and
the files whose working copy differs from a commit (:func:`working_tree_changes`)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from memlab._files import walk
from memlab._gitobj import blob_sha, object_hasher
from memlab.constants import MAX_FOLDER_DEPTH
from memlab.sources._git_repo import RepoInfo, TreeEntry, ls_tree, run_git

__all__ = ["shown_path", "git_blob_id", "working_tree_changes"]


def shown_path(name: str) -> tuple[str, bool]:
    """A file name from the disk (``os.fsdecode``: undecodable bytes as surrogates) as memlab
    shows it, and whether it was not UTF-8: ``(name with U+FFFD for each bad byte, True)``.
    Such a name cannot go into a frame as it is (pandas' string dtype refuses surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", "replace"), True
    return name, False


def git_blob_id(data: bytes, *, sha256: bool = False) -> str:
    """The id ``git hash-object`` (without ``-w``, without filters) gives ``data``."""
    return blob_sha(data, sha256=sha256)


def _hash_file(path: Path, *, sha256: bool) -> str:
    """The blob id of a regular file's bytes; OSError for anything else (a FIFO would block)."""
    from memlab._files import open_regular

    with open_regular(path) as fh:
        h = object_hasher("blob", os.fstat(fh.fileno()).st_size, sha256=sha256)
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def working_tree_changes(
    info: RepoInfo,
    commit: str | None,
    tree: list[TreeEntry] | None = None,
    problems: list[tuple[str, str, str]] | None = None,
) -> pd.DataFrame:
    """Files whose working copy differs from ``commit`` (path, change), touching nothing.

    ``change`` is ``modified``, ``deleted``, ``untracked`` (not in the commit, not ignored),
    ``typechange`` or ``unreadable`` (a file, or a folder's files, memlab may not read, or a
    FIFO, socket or device, which is never opened). Files are hashed in Python as git would
    hash them without clean filters, in 1 MB pieces whatever their size
    (a repo with ``core.autocrlf`` may show line-ending-only differences). A folder more than
    :data:`~memlab.constants.MAX_FOLDER_DEPTH` levels down is not walked: its committed files
    are ``unreadable`` and ``problems`` gets ``(folder/, "too_deep", message)``. Committed paths
    no checkout can hold (a ``.git`` or ``..`` segment: git refuses them) are not compared.

    Names are matched as bytes, as git stores them, so a committed file whose name is not
    UTF-8 is not mistaken for a deleted one plus an untracked one; such a name is shown with
    U+FFFD, and an uncommitted one is added to ``problems`` (``(path, "non_utf8_path",
    message)``), as :func:`log_history` reports committed ones.
    """
    columns = ["path", "change"]
    if info.workdir is None:
        return pd.DataFrame({c: pd.Series(dtype="string") for c in columns})
    if tree is None:
        tree = ls_tree(info.path, commit) if commit else []
    from memlab.errors import UnsafePath
    from memlab.formats.letta_memfs import safe_relative_path

    def checkable(path: str) -> bool:
        try:
            safe_relative_path(path)
        except UnsafePath:
            return False
        return True

    tracked = {e.name_bytes: e for e in tree if e.type == "blob" and checkable(e.path)}
    sha256 = any(len(e.sha) == 64 for e in tree)
    root = info.workdir
    found: dict[bytes, Path] = {}
    unlisted: list[bytes] = []  # folders the walk could not list or did not enter, as b"rel/"

    def relative(folder: str) -> bytes:
        rel = os.fsencode(os.path.relpath(folder, root)).replace(os.sep.encode(), b"/")
        return b"" if rel == b"." else rel + b"/"

    def not_listed(exc: OSError) -> None:
        if exc.filename:
            unlisted.append(relative(exc.filename))

    def too_deep(folder: str) -> None:
        rel = relative(folder)
        unlisted.append(rel)
        if problems is not None:
            problems.append(
                (
                    rel.decode("utf-8", "replace"),
                    "too_deep",
                    f"a folder nested more than {MAX_FOLDER_DEPTH} levels below the "
                    "repository; memlab does not look inside it, so its files are not "
                    "compared with the commit",
                )
            )

    for dirpath, dirnames, filenames in walk(root, onerror=not_listed, too_deep=too_deep):
        rel_dir = os.path.relpath(dirpath, root)
        keep = []
        for d in dirnames:
            full = Path(dirpath, d)
            if d == ".git" or (full / ".git").exists() or full.is_symlink():
                if full.is_symlink():
                    filenames.append(d)  # a symlink to a folder is a file to git
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            if f == ".git":
                continue
            rel = f if rel_dir == "." else f"{rel_dir}/{f}".replace(os.sep, "/")
            found[os.fsencode(rel)] = Path(dirpath, f)

    def shown(name: bytes) -> tuple[str, bool]:
        try:
            return name.decode("utf-8"), False
        except UnicodeDecodeError:
            return name.decode("utf-8", "replace"), True

    rows: list[tuple[str, str]] = []
    for name, entry in tracked.items():
        local = found.get(name)
        if local is None:
            rows.append(
                (entry.path, "unreadable" if name.startswith(tuple(unlisted)) else "deleted")
            )
            continue
        is_link = local.is_symlink()
        if is_link != (entry.mode == "120000"):
            rows.append((entry.path, "typechange"))
            continue
        if is_link:
            current = git_blob_id(os.fsencode(os.readlink(local)), sha256=sha256)
        else:
            try:
                current = _hash_file(local, sha256=sha256)
            except OSError:
                rows.append((entry.path, "unreadable"))
                continue
        if current != entry.sha:
            rows.append((entry.path, "modified"))
    untracked = sorted(p for p in found if p not in tracked)
    from memlab._files import is_special

    # git reads every .gitignore on the way; one that is a FIFO would block it: no ignore rules.
    blocked = any(p.rsplit(b"/", 1)[-1] == b".gitignore" and is_special(found[p]) for p in found)
    if untracked:
        ignored: set[bytes] = set()
        if not blocked:
            out = run_git(
                info.path,
                "check-ignore",
                "--no-index",
                "-z",
                "--stdin",
                input=b"\0".join(untracked) + b"\0",
                check=False,
            )
            ignored = {p for p in out.split(b"\0") if p}
        for name in untracked:
            if name in ignored:
                continue
            path, bad = shown(name)
            rows.append((path, "untracked"))
            if bad and problems is not None:
                problems.append(
                    (
                        path,
                        "non_utf8_path",
                        "an uncommitted file whose name is not "
                        "UTF-8; shown with replacement characters",
                    )
                )
    df = pd.DataFrame(sorted(rows), columns=columns)
    return df.astype({"path": "string", "change": "category"})
