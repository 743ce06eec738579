"""Where elfmem databases live on a machine (the ``elfmem_db`` kind's ``find``):
``~/.elfmem/databases/*.db``, with their ``-wal`` and ``-shm`` files counted in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

from memlab.kinds._base import Search
from memlab.sources._discover_rows import not_regular, unread_row

__all__ = ["find_elfmem_databases"]


def find_elfmem_databases(search: Search) -> Iterator[dict[str, Any]]:
    """elfmem SQLite databases: ``~/.elfmem/databases/*.db``."""
    folder = search.home / ".elfmem" / "databases"
    try:
        with os.scandir(folder) as it:
            dbs = sorted(
                Path(e.path)
                for e in it
                if e.name.endswith(".db") and not e.is_dir(follow_symlinks=False)
            )
    except OSError:
        return
    for db in dbs:
        note = not_regular(db)
        if note is not None:
            yield unread_row(db.stem, "elfmem_db", None, db, note)
            continue
        files = [db] + [
            db.with_name(db.name + s)
            for s in ("-wal", "-shm")
            if db.with_name(db.name + s).is_file()
        ]
        stats = [f.stat() for f in files]
        yield {
            "agent_id": db.stem,
            "kind": "elfmem_db",
            "layout": None,
            "path": str(db),
            "name": None,
            "files": len(files),
            "bytes": sum(s.st_size for s in stats),
            "last_commit": None,
            "modified": max(s.st_mtime for s in stats),
            "problem": None,
        }
