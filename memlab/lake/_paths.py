"""Where a fleet run may write and delete: real folders and regular files inside the lake.

A lake folder can be shared or handed over, so its contents are untrusted: a table folder
(``headline``), a partition folder or ``_manifests`` replaced by a symlink sent the run's
writes, and its removal of a date's old files, to wherever the link pointed. The lake folder
itself is the user's choice (``--out``, followed as given); below it, memlab

- refuses a run, before it writes anything, when one of the lake's own folders is a symlink
  or not a folder (:func:`check_lake`: one error line naming it);
- creates folders one component at a time, each checked with ``lstat`` (:func:`real_folder`);
- writes each file through :mod:`memlab.io`'s atomic writer (a temp file made new, never
  through a planted link, then renamed into place: a rename replaces a link, never follows it);
- removes only a regular file whose every folder up to the lake is a real folder
  (:func:`remove_inside`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memlab._files import walk
from memlab.constants import MAX_FOLDER_DEPTH
from memlab.errors import FleetError

__all__ = [
    "check_lake",
    "regular_files",
    "real_folder",
    "remove_inside",
    "LAKE_FOLDERS",
]

#: The lake's own top-level folders (tables and manifests).
LAKE_FOLDERS = ("frames", "headline", "problems", "failures", "_manifests")
_HINT = (
    "memlab writes and deletes only in real folders inside the lake: replace the link with "
    "a folder, or give --out a new folder"
)


_READ_HINT = (
    "memlab reads a lake only through real folders inside it (a link could pull "
    "data from outside into a report): replace the link with a folder"
)


def _refuse(lake: Path, path: Path, what: str, hint: str = _HINT) -> FleetError:
    return FleetError(
        f"{path.relative_to(lake).as_posix()} inside the lake is {what}", path=lake, hint=hint
    )


def _kind(mode: int) -> str | None:
    """What a non-folder entry is, in words (None for a folder)."""
    if stat.S_ISDIR(mode):
        return None
    return "a symlink" if stat.S_ISLNK(mode) else "not a folder"


def check_lake(lake: Path, *, reading: bool = False) -> None:
    """Raise :class:`~memlab.errors.FleetError` if any folder of the lake's own tree (its
    tables and ``_manifests``, every level) is a symlink, or a name the tree needs as a folder
    is something else. Symlinked files are left alone (never read, written or removed: see
    :func:`regular_files`). ``reading``: the check before a read (its hint says so)."""
    hint = _READ_HINT if reading else _HINT
    for name in LAKE_FOLDERS:
        top = lake / name
        try:
            mode = os.lstat(top).st_mode
        except FileNotFoundError:
            continue
        if (what := _kind(mode)) is not None:
            raise _refuse(lake, top, what, hint)

        def too_deep(path: str, hint: str = hint) -> None:
            raise _refuse(lake, Path(path), f"more than {MAX_FOLDER_DEPTH} folders deep", hint)

        for dirpath, dirnames, _files in walk(top, too_deep=too_deep):
            for d in dirnames:  # walk lists a symlink to a folder here, and does not enter it
                if os.path.islink(os.path.join(dirpath, d)):
                    raise _refuse(lake, Path(dirpath) / d, "a symlink", hint)


def regular_files(folder: Path, suffix: str) -> list[Path]:
    """The regular files named ``*<suffix>`` under ``folder`` (sorted), found without
    following a link: a symlinked file or folder is not listed (what a lake reads, after
    :func:`check_lake`, is only what is inside it)."""
    out: list[Path] = []
    for dirpath, _dirnames, files in walk(folder):  # walk does not enter linked folders
        for name in files:
            full = Path(dirpath, name)
            if name.endswith(suffix) and stat.S_ISREG(os.lstat(full).st_mode):
                out.append(full)
    return sorted(out)


def real_folder(lake: Path, folder: Path) -> Path:
    """``folder`` (inside ``lake``), every component below the lake created if missing and
    checked to be a real folder; :class:`~memlab.errors.FleetError` otherwise."""
    rel = folder.relative_to(lake)
    cur = lake
    for part in rel.parts:
        if part in ("", ".", ".."):
            raise FleetError(f"{rel.as_posix()!r} is not a folder name inside the lake", path=lake)
        cur = cur / part
        try:
            os.mkdir(cur)
            continue
        except FileExistsError:
            pass
        if (what := _kind(os.lstat(cur).st_mode)) is not None:
            raise _refuse(lake, cur, what)
    return cur


def remove_inside(lake: Path, path: Path) -> bool:
    """Remove ``path`` if it is a regular file whose folders, up to ``lake``, are all real
    folders; return whether it was removed (anything else is left where it is)."""
    try:
        rel = path.relative_to(lake)
    except ValueError:
        return False
    cur = lake
    for part in rel.parts[:-1]:
        cur = cur / part
        try:
            if not stat.S_ISDIR(os.lstat(cur).st_mode):
                return False
        except OSError:
            return False
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        path.unlink()
    except OSError:
        return False
    return True
