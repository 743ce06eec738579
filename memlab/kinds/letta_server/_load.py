"""A Letta server's own database, read-only: every agent's blocks, their sharing and history.

``load_letta_server(dsn_or_path)`` reads

* a PostgreSQL database (``postgresql://user@host:port/db``; Letta 0.12-0.16.8, schema from
  Letta's alembic migrations, tables in schema ``public``) inside one ``READ ONLY``
  ``REPEATABLE READ`` transaction, so every frame comes from the same instant of a live server
  and nothing can be written. The database is untrusted (:mod:`memlab.kinds.letta_server._pg`):
  the session's ``search_path``, ``statement_timeout`` and ``lock_timeout`` are pinned at
  connection (``MEMLAB_PG_STATEMENT_TIMEOUT`` / ``MEMLAB_PG_LOCK_TIMEOUT``, milliseconds), a
  superuser or server-program role is refused, and so is a view, foreign table, rule, row
  policy or owner-defined type where Letta has a plain table
  (:class:`~memlab.errors.UnsafeDatabase`);
* an SQLite file (``~/.letta/sqlite.db``; Letta ≤ 0.11.7, schema from ``create_all``) through
  :mod:`memlab.sources._sqlite_snapshot`, the discipline elfmem databases are read with:
  nothing in its folder is created or changed, even for a live server.

Tables and columns are probed by name, so an older release that lacks a column (``hidden``
before 0.12) or a table (``blocks_tags``) loads with that column all NA / that frame empty, and
``meta["absent"]`` says which. A PostgreSQL database whose ``alembic_version`` is not one of
the 0.16.8 release's 166 revisions gets an ``unknown_schema`` problem row and is still read by
column name.

Frames (``kind="letta_server"``):

| frame | columns |
|---|---|
| organizations | organization_id, name, created_at, updated_at, is_deleted |
| users | user_id, name, organization_id, created_at, is_deleted |
| agents | agent_id, name, description, agent_type, model, context_window, system_chars, organization_id, project_id, template_id, base_template_id, hidden, is_deleted, created_at, updated_at, _created_by_id, _last_updated_by_id, n_blocks, tags |
| blocks | block_id, label, value, chars, limit, over_limit, description, read_only, metadata, is_template, template_name, hidden, is_deleted, tags, n_agents, shared, history_len, current_sequence, version, current_history_entry_id, organization_id, project_id, entity_id, base_template_id, template_id, deployment_id, preserve_on_migration, created_at, updated_at, _created_by_id, _last_updated_by_id |
| block_agents | block_id, agent_id, block_label |
| block_history | history_id, block_id, sequence_number, label, value, chars, limit, description, metadata, actor_type, actor_kind (agent / server_user / unknown), actor_id, is_current, organization_id, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id |
| block_tags | block_id, tag |

``actor_kind`` uses memfs's author kinds: ``letta_agent`` → ``agent``, ``letta_user`` →
``server_user``. Problems: ``history_gap`` (a block's sequence numbers are not 1..N),
``dangling_history_pointer``, ``unknown_actor``, ``dangling_link``, ``bad_json``,
``duplicate_key`` (a JSON column repeating a key: the last value is read, as Python reads it),
``unknown_schema``, and, for values a server cannot have written (SQLite keeps whatever it is
given): ``bad_text`` (text that is not UTF-8, read with U+FFFD for the bad bytes, or a BLOB where
text belongs, read as its UTF-8 text) and ``bad_value`` (a whole number that is not one:
``limit`` 2.5, ``version`` 1e300, text; read as NA). Each names the table, the column and the
row's id. A ``block`` or ``block_history`` value past
:data:`~memlab.constants.MAX_VALUE_BYTES` is measured by the database and not read: its
``value`` is null, its ``chars`` the database's own count (``length``; for an SQLite BLOB, its
bytes), an ``oversized`` problem row names it with its size, and ``meta["oversized_values"]``
lists them (``table``, ``id``, ``bytes``, ``chars``); a migration refuses such a store.

This module connects and composes; the pieces are its siblings: ``_db`` (one consistent read,
SQLite or PostgreSQL, behind :class:`~memlab.kinds.letta_server._db.Source`) and ``_pg`` (the
untrusted-PostgreSQL guards), ``_frames`` (the frames and their checks), ``_values`` (the
column types and their problems), ``_schema`` (the tables, and which release made them).

Example::

    store = memlab.load("postgresql://memlab_ro@db.internal:5432/letta")
    store.blocks.groupby("shared").chars.sum()
"""  # noqa: E501 (the frames table above is Markdown: one row a line)

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path
from typing import Any

import pandas as pd

from memlab._files import sqlite_uri
from memlab.kinds.letta_server._db import PostgresSource, Source, SQLiteSource, quote
from memlab.kinds.letta_server._frames import ACTOR_KINDS, build_frames, report_oversized
from memlab.kinds.letta_server._pg import connect, redact_dsn, refusal, timeouts
from memlab.kinds.letta_server._schema import LETTA_TABLES, REQUIRED_TABLES, letta_release
from memlab.sources._sqlite_snapshot import decode_text
from memlab.store import Problems, Store

__all__ = [
    "load_letta_server",
    "is_dsn",
    "redact_dsn",
    "is_letta_sqlite",
    "find_letta_server",
    "ACTOR_KINDS",
]

KIND = "letta_server"
_DSN_RE = re.compile(r"^postgres(ql)?(\+\w+)?://", re.I)


def is_dsn(source: Any) -> bool:
    """True for a PostgreSQL connection URI (``postgresql://`` or ``postgres://``)."""
    return isinstance(source, str) and bool(_DSN_RE.match(source.strip()))


def is_letta_sqlite(path: str | Path) -> bool:
    """True when the SQLite file at ``path`` has a Letta server's tables (read-only peek)."""
    import sqlite3

    from memlab.sources._sqlite_snapshot import read_snapshot

    sql = "SELECT name FROM sqlite_master WHERE type='table'"
    p = Path(path).expanduser().resolve()
    try:  # the cheap look: immutable=1 takes no lock and creates no side file
        uri = sqlite_uri(p, mode="ro", immutable="1")
        conn = sqlite3.connect(uri, uri=True)
        try:
            names = {r[0] for r in conn.execute(sql)}
        finally:
            conn.close()
    except sqlite3.Error:  # mid-write or damaged: the snapshot route says which

        def tables(snap) -> set[str]:
            conn = snap.connect()
            try:
                return {r[0] for r in conn.execute(sql)}
            finally:
                conn.close()

        names = read_snapshot(p, tables)
    return set(REQUIRED_TABLES) <= names


def _load(src: Source, path: Path, where: str, meta: dict) -> Store:
    problems = Problems()
    frames, absent = build_frames(src, where, problems)
    oversized = report_oversized(src, problems, where)
    revision = None
    if "alembic_version" in src.columns:
        got = src.rows(f"SELECT {quote('version_num')} FROM {src.table_sql('alembic_version')}")
        revision = str(got[0][0]) if got else None
    meta.update(
        {
            "flavour": src.flavour,
            "tables": sorted(src.columns),
            "absent": absent,
            "alembic_revision": revision,
            "letta_release": letta_release(src, revision, problems, where),
            "history_rows": int(len(frames["block_history"])),
            "history_empty": bool(frames["block_history"].empty),
            "oversized_values": oversized,
        }
    )
    return Store(kind=KIND, path=path, frames=frames, problems=problems.frame(), meta=meta)


def load_letta_server(dsn_or_path: str | Path) -> Store:
    """Load a Letta server database read-only (see the module docstring for frames and rules).

    ``dsn_or_path`` is a ``postgresql://`` URI or the path of a Letta SQLite file. Raises
    SourceError (cannot connect, a timeout, a lock), UnsafeDatabase (a role or a relation memlab
    will not read through), UnrecognizedStore (no Letta tables), UnsupportedSchema (a block
    table without id/label/value), MissingExtra (no psycopg for a DSN), InvalidArgument (a bad
    ``MEMLAB_PG_*`` timeout).

    Example::

        store = memlab.load_letta_server("postgresql://memlab_ro@localhost:5432/letta")
        store.block_history.groupby("actor_kind", observed=True).size()
    """
    if is_dsn(dsn_or_path):
        dsn = str(dsn_or_path).strip()
        shown = redact_dsn(dsn)
        conn = connect(dsn)
        try:
            import psycopg

            try:
                parts = urllib.parse.urlsplit(dsn)
                name = f"{parts.path.lstrip('/') or 'postgres'}@{parts.hostname or 'localhost'}"
                statement, lock = timeouts()
                return _load(
                    PostgresSource(conn, shown, list(LETTA_TABLES)),
                    Path(shown),
                    shown,
                    {
                        "dsn": shown,
                        "name": name,
                        "transaction": "read only, repeatable read",
                        "statement_timeout_ms": statement,
                        "lock_timeout_ms": lock,
                    },
                )
            except psycopg.Error as exc:
                raise refusal(exc, shown) from exc
        finally:
            if not conn.closed:  # closed: the client deadline ended it (nothing to roll back)
                conn.rollback()
                conn.close()
    from memlab.sources._sqlite_snapshot import read_snapshot

    p = Path(dsn_or_path).expanduser()

    def reader(snap) -> Store:
        conn = snap.connect()
        conn.text_factory = decode_text  # text that is not UTF-8: a BadText, reported by row
        try:
            return _load(
                SQLiteSource(conn),
                p,
                str(p),
                {"snapshot": snap.info(), "journal_mode": snap.journal_mode},
            )
        finally:
            conn.close()

    return read_snapshot(p, reader)


def find_letta_server(search) -> list[dict[str, Any]]:
    """Inventory rows for :func:`memlab.sources.discover.discover`: one per agent of the local
    Letta server's SQLite database (``~/.letta/sqlite.db``, letta <= 0.11.7), read-only. A
    database memlab cannot read is one row naming the problem. PostgreSQL servers are not
    discovered (they are found by their DSN, not on disk)."""
    from memlab.errors import MemlabError

    db = search.home / ".letta" / "sqlite.db"
    if not db.is_file():
        return []
    st = db.stat()
    base = {
        "kind": KIND,
        "layout": "sqlite",
        "path": str(db),
        "files": 1,
        "bytes": st.st_size,
        "last_commit": None,
        "modified": st.st_mtime,
        "problem": None,
    }
    try:
        if not is_letta_sqlite(db):
            return []
        store = load_letta_server(db)
    except MemlabError as exc:
        return [{**base, "agent_id": db.name, "name": None, "problem": str(exc)}]
    live = store.agents[~store.agents["is_deleted"].fillna(False).astype(bool)]
    return [
        {**base, "agent_id": str(a), "name": None if pd.isna(n) else str(n)}
        for a, n in zip(live["agent_id"], live["name"])
    ]
