"""The ``mem0`` store kind: mem0's ``history.db`` event log (``mem0ai`` on PyPI), with the
current memories' payloads from the local Qdrant folder beside it where there is one.

* detect: an SQLite file with mem0's ``history`` table (``memory_id``, ``event``, the old and
  new memory text, in any of its three shapes: ``_load.history_schema``); asked before the
  generic elfmem SQLite kind, and an elfmem database (a ``blocks`` table, no ``history``) is
  never claimed; a folder holding such a ``history.db`` beside a ``qdrant/`` folder is claimed
  as one store (a fleet walk then does not offer Qdrant's ``storage.sqlite`` on its own);
* load: ``_load.load_mem0`` (read-only snapshot; frames ``history``, ``memories``, ``messages``,
  ``payloads``);
* audit: ``_audit.audit_mem0``;
* find: ``~/.mem0/history.db`` and ``$MEM0_DIR/history.db`` (``_find.find_mem0``);
* migrate: to a Letta Code memfs v2 repository, the event log replayed as commits at their
  own times (``_migrate.plan_mem0_letta``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from memlab._files import sqlite_uri
from memlab.kinds._base import KindBase, Probe

__all__ = ["Mem0"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def _history_columns(probe: Probe) -> set[str] | None:
    """The columns of the file's ``history`` table (empty: no such table), or None when the
    file cannot be read as SQLite now (truncated, mid-write)."""
    try:  # immutable=1: no lock taken, no side file made
        conn = sqlite3.connect(sqlite_uri(probe.path.resolve(), mode="ro", immutable="1"), uri=True)
        try:
            return {r[1] for r in conn.execute('PRAGMA table_info("history")')}
        finally:
            conn.close()
    except sqlite3.Error:
        return None


class Mem0(KindBase):
    """A mem0 ``history.db``."""

    name = "mem0"
    display = "mem0 history database"
    priority = 5  # before letta_server (0) and elfmem_db (-10, any SQLite file)
    load_ref = "memlab.kinds.mem0._load:load_mem0"
    audit_ref = "memlab.kinds.mem0._audit:audit_mem0"
    find_ref = "memlab.kinds.mem0._find:find_mem0"
    migrations = MappingProxyType({"letta": "memlab.kinds.mem0._migrate:plan_mem0_letta"})
    default_target = "letta"
    verify = "memlab.kinds.mem0._migrate:Mem0Parity"  # its own check of a migrated copy
    copy_of = None
    reports = ("audit",)
    headline = (
        "memories_current",
        "memories_deleted",
        "rewrites_per_surviving_memory",
        "events_per_surviving_memory",
        "deletions_without_time",
        "near_duplicate_pairs",
        "problems",
    )

    def findings(self) -> Mapping[str, tuple[str, ...]]:
        """Untimed deletions and near-duplicate pairs, by memory id."""
        return MappingProxyType(
            {"untimed_deletions": ("memory_id",), "near_duplicates": ("memory_a", "memory_b")}
        )

    def walked_folder(self, folder: Path) -> Mapping[str, Any] | None:
        """The row :meth:`find` gives the folder's ``history.db`` (a walk meets the folder
        holding it beside the local Qdrant folder): mem0 keeps no git history, so no
        repository is no problem (discover's own row would say one)."""
        from memlab.kinds.mem0._find import mem0_row

        return mem0_row(folder)

    def detect(self, probe: Probe) -> str | None:
        """SQLite with mem0's ``history`` table; an unreadable SQLite file named
        ``history.db`` is claimed too, so mem0's loader names what is wrong with it."""
        if probe.is_dir:
            # a folder holding mem0's history.db beside its local Qdrant folder is one store
            # (so a fleet walk does not offer Qdrant's own storage.sqlite as a store of its own)
            db = probe.path / "history.db"
            if not ((probe.path / "qdrant").is_dir() and db.is_file()):
                return None
            inner = self.detect(Probe(db))
            return None if inner is None else f"holds history.db and qdrant/ ({inner})"
        if not probe.head.startswith(_SQLITE_MAGIC):
            return None
        cols = _history_columns(probe)
        if cols is None:
            return (
                "named history.db (unreadable SQLite)" if probe.path.name == "history.db" else None
            )
        from memlab.kinds.mem0._load import history_schema

        shape = history_schema(cols)
        return None if shape is None else f"SQLite with mem0's history table ({shape})"
