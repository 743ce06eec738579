"""A repository's reflogs, read as files, line by line, with caps: the evidence the ``integrity``
table is built from (:mod:`memlab.audits._integrity`).

A reflog line is ``<old> <new> <name> <<email>> <unix time> <tz>\\t<message>``; the message says
what git did (``commit (amend): …``, ``reset: moving to …``, ``rebase (finish): …``,
``pull --rebase (finish): …``, ``checkout: moving from … to …``, ``fetch: forced-update``,
``branch: Created from …``, ``clone: from …``). Lines are parsed by splitting, never by a
backtracking pattern, and streamed: a reflog over :data:`MAX_REFLOG_BYTES` is not read at all
(its size is asked of the open file: a sparse 1 GiB file costs nothing) and is named as
``not read: over N bytes``; a line over :data:`MAX_LINE_BYTES` is skipped; at most the last
:data:`MAX_REFLOG_LINES` lines of a file are kept. Files are opened with
:func:`memlab._files.open_regular` (no FIFO, device or symlink is read).
"""

from __future__ import annotations

import os
import re
import stat
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from memlab._files import NotRegularFile, open_regular

__all__ = [
    "Entry",
    "Reflogs",
    "read_reflogs",
    "action",
    "MAX_REFLOG_BYTES",
    "MAX_LINE_BYTES",
    "MAX_REFLOG_LINES",
    "worktree_heads",
    "worktree_gitdirs",
]

#: A reflog larger than this is not read (a busy branch's reflog is a few hundred KB).
MAX_REFLOG_BYTES = 64 << 20
#: A reflog line longer than this is skipped (git writes a message of one line, ~100 bytes).
MAX_LINE_BYTES = 64 << 10
#: Lines kept per reflog file (the newest).
MAX_REFLOG_LINES = 20_000

_SHA = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")
_ZERO = frozenset({"0" * 40, "0" * 64})


@dataclass(frozen=True)
class Entry:
    """One reflog line: the ref moved from ``old`` to ``new`` at ``when`` (unix seconds; None when
    the line's time is not a time) because of ``message``. ``old``/``new`` are None for git's
    all-zero id (the ref did not exist / was deleted)."""

    ref: str
    old: str | None
    new: str | None
    when: int | None
    message: str
    line: int


@dataclass
class Reflogs:
    """Every reflog of a repository: ``entries[ref]`` oldest first; ``unread`` names the files
    not read and why; ``files`` counts the reflog files found (empty ones included)."""

    entries: dict[str, list[Entry]] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)
    files: int = 0

    @property
    def lines(self) -> int:
        return sum(len(v) for v in self.entries.values())


def action(message: str) -> str:
    """What a reflog message says git did: the text before its first ``:``
    (``commit (amend)``, ``reset``, ``rebase (finish)``, ``pull --rebase (finish)``,
    ``fetch``…)."""
    return message.split(":", 1)[0].strip()


def _parse(ref: str, raw: bytes, number: int) -> Entry | None:
    head, _, msg = raw.rstrip(b"\n").partition(b"\t")
    parts = head.split(b" ", 2)
    if len(parts) < 3 or not _SHA.fullmatch(parts[0]) or not _SHA.fullmatch(parts[1]):
        return None
    tail = parts[2].rsplit(b" ", 2)
    when = None
    if len(tail) == 3 and tail[1].isdigit() and len(tail[1]) <= 11:  # up to year ~5000
        when = int(tail[1])
    old, new = parts[0].decode(), parts[1].decode()
    return Entry(
        ref,
        None if old in _ZERO else old,
        None if new in _ZERO else new,
        when,
        msg.decode("utf-8", "replace")[:300],
        number,
    )


def _read_one(ref: str, path: Path, out: Reflogs) -> None:
    try:
        fh = open_regular(path)
    except NotRegularFile as exc:
        out.unread.append(f"{path.name} ({ref}): not read: {exc.reason}")
        return
    except OSError as exc:
        out.unread.append(f"{ref}: not read: {exc.strerror}")
        return
    with fh:
        size = os.fstat(fh.fileno()).st_size
        out.files += 1
        if size > MAX_REFLOG_BYTES:
            out.unread.append(
                f"reflog of {ref}: not read: over {MAX_REFLOG_BYTES} bytes ({size} bytes)"
            )
            return
        kept: deque[Entry] = deque(maxlen=MAX_REFLOG_LINES)
        number, budget = 0, MAX_REFLOG_BYTES + 1
        while budget > 0:
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            budget -= len(raw)
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n") and budget > 0:  # skip the rest of it
                    raw = fh.readline(MAX_LINE_BYTES + 1)
                    budget -= len(raw)
                continue
            entry = _parse(ref, raw, number)
            if entry is not None:
                kept.append(entry)
        if budget <= 0:  # grew while read
            out.unread.append(f"reflog of {ref}: not read: over {MAX_REFLOG_BYTES} bytes")
            return
    if kept:
        out.entries.setdefault(ref, []).extend(kept)


def _safe_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def worktree_gitdirs(common: Path) -> list[tuple[str, Path]]:
    """(name, git folder) of the main worktree and every linked one (``worktrees/<id>``)."""
    found = [("", common)]
    base = common / "worktrees"
    if _safe_dir(base):
        try:
            names = sorted(os.listdir(base))
        except OSError:
            names = []
        for name in names:
            if _safe_dir(base / name):
                found.append((name, base / name))
    return found


def read_reflogs(common: Path) -> Reflogs:
    """Every reflog under the repository whose common git folder is ``common``: each worktree's
    ``logs/HEAD`` (named ``HEAD`` and ``worktrees/<id>/HEAD``) and ``logs/refs/**``."""
    from memlab._files import walk

    out = Reflogs()
    for name, gdir in worktree_gitdirs(common):
        head = gdir / "logs" / "HEAD"
        if os.path.lexists(head):
            _read_one(f"worktrees/{name}/HEAD" if name else "HEAD", head, out)
    base = common / "logs" / "refs"
    if _safe_dir(base):
        for dirpath, _dirs, files in walk(base):
            for fname in sorted(files):
                path = Path(dirpath, fname)
                ref = "refs/" + path.relative_to(base).as_posix()
                if path.is_symlink():
                    out.unread.append(f"reflog of {ref}: not read: a symlink")
                    continue
                _read_one(ref, path, out)
    return out


def worktree_heads(common: Path) -> list[tuple[str, str]]:
    """(worktree, what its ``HEAD`` file says: ``ref: refs/heads/x`` or a commit id) of every
    worktree, read as files (4 KB at most each)."""
    heads = []
    for name, gdir in worktree_gitdirs(common):
        try:
            with open_regular(gdir / "HEAD") as fh:
                text = fh.read(4096).decode("utf-8", "replace").strip()
        except OSError:
            continue
        heads.append((name or "main", text))
    return heads
