"""Open only regular files: a FIFO, socket or device in a store never blocks memlab.

Opening a FIFO for reading blocks until a writer appears, and reading a device such as
``/dev/zero`` never ends. Every loader opens store files through :func:`open_regular`, which
opens with ``O_NONBLOCK`` (so even a FIFO swapped in after a check cannot block the open), checks
the opened descriptor is a regular file, and only then reads.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["NotRegularFile", "open_regular", "read_regular", "is_special", "kind_of"]


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or folder: memlab does not read it. ``reason`` is
    the message without the path (the caller's MemlabError names the path)."""

    def __init__(self, path: str | Path, kind: str) -> None:
        self.kind = kind
        self.reason = f"is a {kind}, not a regular file; memlab reads only regular files"
        super().__init__(f"{path} {self.reason}")


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


def read_regular(path: str | Path) -> bytes:
    """The bytes of a regular file; NotRegularFile for a FIFO, socket or device."""
    with open_regular(path) as fh:
        return fh.read()
