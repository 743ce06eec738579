"""Open only regular files, read only bounded ones, and walk folders without recursion.

Opening a FIFO for reading blocks until a writer appears, and reading a device such as
``/dev/zero`` never ends. Every loader opens store files through :func:`open_regular`, which
opens with ``O_NONBLOCK`` (so even a FIFO swapped in after a check cannot block the open), checks
the opened descriptor is a regular file, and only then reads. :func:`read_regular` with
``max_bytes`` refuses a file over the cap (:class:`FileTooLarge`) before reading a byte of it,
saying ``not read: over N bytes`` (:func:`over_cap`, the one wording of every size cap), and
:func:`iter_lines` streams a capped file line by line (reflogs) in bounded memory. Files under a
git folder that memlab reads itself (config, ``commondir``, ``shallow``, the layout policy,
hooks) go through these too.

Every walk of a store's folders goes through :func:`walk`: ``os.walk``'s top-down walk without
its recursion (Python 3.11's recurses once per folder level, so ~1,000 nested folders raise
RecursionError), never following symlinks, and stopping :data:`~memlab.constants.MAX_FOLDER_DEPTH`
levels down, where it tells the caller which folder it did not go into.

Every SQLite database memlab opens by URI (read-only, immutable) is named by :func:`sqlite_uri`,
which percent-encodes the path: a folder called ``run#2`` or ``what?`` is a path, not URI syntax.
"""

from __future__ import annotations

import os
import stat
import urllib.parse
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from memlab.constants import MAX_FOLDER_DEPTH

__all__ = [
    "NotRegularFile",
    "FileTooLarge",
    "LineTooLong",
    "open_regular",
    "read_regular",
    "read_head",
    "read_text",
    "iter_lines",
    "over_cap",
    "is_special",
    "kind_of",
    "walk",
    "sqlite_uri",
]


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or folder: memlab does not read it. ``reason`` is
    the message without the path (the caller's MemlabError names the path)."""

    def __init__(self, path: str | Path, kind: str) -> None:
        self.kind = kind
        self.reason = f"is a {kind}, not a regular file; memlab reads only regular files"
        super().__init__(f"{path} {self.reason}")


def over_cap(limit: int, size: int | None = None) -> str:
    """What every size cap says: ``not read: over N bytes`` (and the size, when known)."""
    return f"not read: over {limit:,} bytes" + (f" ({size:,} bytes)" if size is not None else "")


class FileTooLarge(OSError):
    """The file is larger than the cap the caller set; none of it was read. ``size`` is its
    size in bytes, ``limit`` the cap, ``reason`` the message without the path
    (:func:`over_cap`: ``not read: over N bytes (S bytes)``)."""

    def __init__(self, path: str | Path, size: int, limit: int) -> None:
        self.size, self.limit = size, limit
        self.reason = over_cap(limit, size)
        super().__init__(f"{path}: {self.reason}")


class LineTooLong(FileTooLarge):
    """:func:`iter_lines` met a line longer than its cap (``limit``); ``line`` is its number
    (1-based), ``size`` how much of it was seen before stopping."""

    def __init__(self, path: str | Path, line: int, size: int, limit: int) -> None:
        super().__init__(path, size, limit)
        self.line = line
        self.reason = f"not read: line {line} is over {limit:,} bytes"
        self.args = (f"{path}: {self.reason}",)


def kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISDIR(mode):
        return "folder"
    return "special file"


def is_special(path: str | Path) -> bool:
    """True when ``path`` (followed through symlinks) exists and is not a regular file or folder."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def open_regular(path: str | Path) -> BinaryIO:
    """Open ``path`` for binary reading if it is a regular file; NotRegularFile otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        try:  # a socket cannot be opened at all: say what it is rather than ENXIO
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise NotRegularFile(path, kind_of(mode)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, kind_of(mode))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | Path, *, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file; NotRegularFile for a FIFO, socket or device.

    With ``max_bytes``, a file larger than that raises :class:`FileTooLarge` without being read
    (its size is taken from the open descriptor; a file that grows while it is read is cut at
    ``max_bytes + 1`` bytes and refused the same way)."""
    with open_regular(path) as fh:
        if max_bytes is None:
            return fh.read()
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise FileTooLarge(path, size, max_bytes)
        data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise FileTooLarge(path, max(size, len(data)), max_bytes)
        return data


def read_head(path: str | Path, n: int) -> bytes:
    """At most the first ``n`` bytes of a regular file (NotRegularFile otherwise): for a file
    memlab only sniffs (a ``.git`` file's ``gitdir:`` line), however large the file is."""
    with open_regular(path) as fh:
        return fh.read(n)


def read_text(path: str | Path, *, max_bytes: int, errors: str = "replace") -> str:
    """:func:`read_regular` with a cap, decoded as UTF-8 (``errors`` as in ``bytes.decode``)."""
    return read_regular(path, max_bytes=max_bytes).decode("utf-8", errors)


def iter_lines(
    path: str | Path, *, max_bytes: int, max_line_bytes: int, chunk: int = 1 << 16
) -> Iterator[bytes]:
    """The lines of a regular file (without their ``\\n``), read a chunk at a time: memory
    stays within ``max_line_bytes`` plus one chunk however large the file is.

    Raises :class:`FileTooLarge` before reading a byte when the file is over ``max_bytes`` (a
    file that grows while it is read is stopped at ``max_bytes + 1`` bytes the same way), and
    :class:`LineTooLong` at a line over ``max_line_bytes``: "not read" is said, never a line
    silently cut. The lines before the failure have been yielded; the caller decides whether
    they stand (a problem row naming the file) or not."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise FileTooLarge(path, size, max_bytes)
        seen, number = 0, 0
        pending = bytearray()
        while True:
            block = fh.read(chunk)
            if not block:
                break
            seen += len(block)
            if seen > max_bytes:
                raise FileTooLarge(path, max(size, seen), max_bytes)
            start = 0
            while True:
                end = block.find(b"\n", start)
                if end < 0:
                    pending += block[start:]
                    if len(pending) > max_line_bytes:
                        raise LineTooLong(path, number + 1, len(pending), max_line_bytes)
                    break
                pending += block[start:end]
                number += 1
                if len(pending) > max_line_bytes:
                    raise LineTooLong(path, number, len(pending), max_line_bytes)
                yield bytes(pending)
                pending.clear()
                start = end + 1
        if pending:
            yield bytes(pending)


def walk(
    top: str | Path,
    *,
    onerror: Callable[[OSError], None] | None = None,
    too_deep: Callable[[str], None] | None = None,
    max_depth: int = MAX_FOLDER_DEPTH,
) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)`` top-down, symlinks not followed, without recursion and at most
    ``max_depth`` folder levels below ``top``.

    Yields ``(dirpath, dirnames, filenames)`` as ``os.walk`` does: ``dirnames`` holds the
    sub-folders (a symlink to a folder included, as ``os.walk`` lists it, but never entered) and
    the caller may prune it in place; the walk goes into what is left, in its order. A folder
    that cannot be listed is passed to ``onerror`` (the OSError, ``filename`` set). A folder
    that would be entered ``max_depth + 1`` levels below ``top`` is not: its path is passed to
    ``too_deep`` and nothing inside it is listed.
    """
    stack: list[tuple[str, int]] = [(os.fspath(top), 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            if exc.filename is None:
                exc.filename = folder
            if onerror is not None:
                onerror(exc)
            continue
        dirs: list[str] = []
        files: list[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry.name)
        yield folder, dirs, files
        below = []
        for name in dirs:
            sub = os.path.join(folder, name)
            if os.path.islink(sub):
                continue
            if depth >= max_depth:
                if too_deep is not None:
                    too_deep(sub)
                continue
            below.append((sub, depth + 1))
        stack.extend(reversed(below))


def sqlite_uri(path: str | Path, **params: str) -> str:
    """A SQLite ``file:`` URI for ``path`` (made absolute) with the query ``params``
    (``mode="ro"``, ``immutable="1"``), percent-encoded so '?', '#' or '%' in a name are not
    taken for URI syntax (unencoded, ``file:/tmp/run#2/x.db?mode=ro`` opens ``/tmp/run``)."""
    # The file system's bytes, so a name that is not UTF-8 (m\xff.db) is the same file to SQLite.
    quoted = urllib.parse.quote(os.fsencode(Path(path).resolve()), safe="/")
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quoted}?{query}" if query else f"file:{quoted}"
