"""The one atomic writer: a file is replaced whole or not at all.

The new bytes go to a temp file created beside the target (``O_EXCL``, never following a link:
:func:`tempfile.mkstemp`), get their final mode, and are renamed onto the target
(:func:`os.replace`, atomic within one file system). On any error the temp file is removed and
the target is left as it was. A reader sees the old file or the new one, never half.

Standard library only, and no import from memlab: the migration plan script embeds this
module's source with :mod:`memlab._gitobj`'s, which stores loose objects through it.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import BinaryIO, Iterator

__all__ = ["replacing", "replacing_path", "write_atomic"]


@contextmanager
def _temp(target: str | os.PathLike, mode: int, prefix: str | None) -> Iterator[tuple[int, str]]:
    folder, name = os.path.split(os.fspath(target))
    if prefix is None:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    else:
        fd, tmp = tempfile.mkstemp(prefix=prefix, dir=folder or ".")
    try:
        yield fd, tmp
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


@contextmanager
def replacing_path(
    target: str | os.PathLike, *, mode: int = 0o644, prefix: str | None = None
) -> Iterator[str]:
    """The path of a new, empty temp file beside ``target``, for a writer that needs a path
    (SQLite, a Parquet engine); on a normal exit it is given ``mode`` and renamed onto
    ``target``, on an error removed. ``prefix``: the temp name's start (default
    ``.<target name>.``, its end then ``.tmp``)."""
    with _temp(target, mode, prefix) as (fd, tmp):
        os.close(fd)
        yield tmp


@contextmanager
def replacing(
    target: str | os.PathLike,
    *,
    mode: int = 0o644,
    prefix: str | None = None,
    fsync: bool = False,
) -> Iterator[BinaryIO]:
    """A binary file open for writing whose bytes replace ``target`` on a normal exit (as
    :func:`replacing_path`); ``fsync``: flushed to the disk before the rename."""
    with _temp(target, mode, prefix) as (fd, _tmp):
        with os.fdopen(fd, "wb") as fh:
            yield fh
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())


def write_atomic(
    target: str | os.PathLike,
    data: bytes,
    *,
    mode: int = 0o644,
    prefix: str | None = None,
    fsync: bool = False,
) -> None:
    """Replace ``target`` with ``data`` atomically (:func:`replacing`)."""
    with replacing(target, mode=mode, prefix=prefix, fsync=fsync) as fh:
        fh.write(data)
