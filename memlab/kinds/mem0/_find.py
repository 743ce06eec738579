"""Where mem0 keeps its history: ``~/.mem0/history.db``, or ``$MEM0_DIR/history.db`` (mem0's
``mem0/memory/setup.py`` reads ``MEM0_DIR``; memlab reads it only for the user's own home)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memlab.errors import MemlabError
from memlab.kinds._base import Search

__all__ = ["find_mem0", "mem0_dirs", "mem0_row"]


def mem0_dirs(search: Search) -> list[Path]:
    """The folders mem0 may keep ``history.db`` in, first the environment's."""
    out = []
    env = os.environ.get("MEM0_DIR") if search.real_home else None
    if env:
        out.append(Path(env).expanduser())
    out.append(search.home / ".mem0")
    seen: list[Path] = []
    for p in out:
        if p not in seen:
            seen.append(p)
    return seen


def find_mem0(search: Search) -> list[dict[str, Any]]:
    """One inventory row per ``history.db`` found; one memlab cannot read is a row naming the
    problem."""
    return [mem0_row(folder) for folder in mem0_dirs(search) if (folder / "history.db").is_file()]


def mem0_row(folder: Path) -> dict[str, Any]:
    """The inventory row of the mem0 store in ``folder`` (its ``history.db``): a row naming
    the problem when memlab cannot read it. mem0 keeps no git history, so none is asked."""
    from memlab.kinds.mem0._load import load_mem0

    db = folder / "history.db"
    st = db.stat()
    row: dict[str, Any] = {
        "kind": "mem0",
        "layout": "sqlite",
        "path": str(db),
        "agent_id": folder.name,
        "name": None,
        "files": 1,
        "bytes": st.st_size,
        "last_commit": None,
        "modified": st.st_mtime,
        "problem": None,
    }
    try:
        store = load_mem0(db)
        row["name"] = f"{int((~store.memories['deleted']).sum())} current memories"
    except MemlabError as exc:
        row["problem"] = str(exc)
    return row
