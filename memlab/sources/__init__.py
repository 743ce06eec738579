"""Read-only loaders, one per on-disk format, and :func:`load`, which picks the right one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memlab.errors import SourceError, StoreNotFound, UnrecognizedStore
from memlab.store import Store

__all__ = ["load", "detect"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def detect(path: str | Path) -> str:
    """Name the loader for ``path``: 'elfmem_db', 'letta_server', 'memfs' or 'agent_file'.

    Decided from content, not from the file name alone, so a renamed database still loads. A
    ``postgresql://`` DSN and an SQLite file with a Letta server's tables are 'letta_server'.
    """
    from memlab.sources.letta_server import is_dsn, is_letta_sqlite

    if is_dsn(path):
        return "letta_server"
    p = Path(path).expanduser()
    if not p.exists() and not p.is_symlink():
        raise StoreNotFound("no such file or folder", path=p)
    if p.is_dir():
        if not os.access(p, os.R_OK | os.X_OK):
            raise SourceError("cannot read this folder (permission denied)", path=p,
                              hint="memlab needs read and execute permission on it")
        markers = (".git", ".elfmem", "agent.yaml", "system", ".letta")
        if p.name == ".elfmem" or any((p / m).exists() for m in markers):
            return "memfs"
        raise UnrecognizedStore("a folder with no .git, .elfmem, agent.yaml or system/ inside", path=p)
    from memlab._files import NotRegularFile, open_regular

    try:
        with open_regular(p) as fh:
            head = fh.read(64)
    except NotRegularFile as exc:
        raise UnrecognizedStore(exc.reason, path=p) from exc
    except OSError as exc:
        raise StoreNotFound(f"cannot open: {exc.strerror}", path=p) from exc
    if head.startswith(_SQLITE_MAGIC) or p.suffix in {".db", ".sqlite", ".sqlite3"}:
        # A .db that is not SQLite is reported by the SQLite loader as corrupt, which says more
        # than "unrecognised".
        if head.startswith(_SQLITE_MAGIC) and is_letta_sqlite(p):
            return "letta_server"
        return "elfmem_db"
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if p.suffix in {".af", ".json"} or stripped[:1] in (b"{", b"[", b'"'):
        return "agent_file"
    raise UnrecognizedStore("not an SQLite database, a JSON agent file or a memory folder", path=p)


def load(path: str | Path, **kwargs: Any) -> Store:
    """Load any store memlab knows, read-only. Keyword arguments go to the specific loader.

    Example::

        store = memlab.load("~/.elfmem/databases/elfmem.db")
        store.blocks.status.value_counts()
    """
    kind = detect(path)
    if kind == "letta_server":
        from memlab.sources.letta_server import load_letta_server

        return load_letta_server(path, **kwargs)
    p = Path(path).expanduser()
    if kind == "elfmem_db":
        from memlab.sources.elfmem_db import load_elfmem

        return load_elfmem(p, **kwargs)
    if kind == "agent_file":
        from memlab.sources.agent_file import load_agent_file

        return load_agent_file(p, **kwargs)
    from memlab.sources.memfs import load_memfs

    return load_memfs(p, **kwargs)
