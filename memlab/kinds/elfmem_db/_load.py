"""Read-only loader for elfmem SQLite databases, schema versions 1 to 9.

Every table and column is probed by name (``sqlite_master``, ``PRAGMA table_info``): elfmem's
migrations append columns (so a migrated database has them in a different order from a fresh
one), ``create_all`` adds whole tables without a version bump, and pre-0.4 databases lack
columns no migration ever added. Whatever a database lacks comes back as an all-NA column of
the documented dtype, so every store has the same frames and columns (docs/DESIGN.md).

The database is read through :mod:`memlab.sources._sqlite_snapshot`, which never changes
anything in its folder and still sees rows a live elfmem process has only in its ``-wal``.

Speed: tables are read through the ADBC SQLite driver straight into Arrow (large tables in
rowid ranges on parallel connections; the driver runs without the GIL) and typed there (dates
parsed, categories dictionary-encoded, lengths counted) before one conversion to pandas.
SQLite is dynamically typed and ADBC infers a column's Arrow type from its first batch, so each
query starts with one typed "priming" row that is dropped afterwards; a table whose values do not
fit (text in a REAL column, say) is re-read through :mod:`sqlite3` value by value, where every
value that cannot be typed becomes NA and is reported in ``store.problems``.

SQLite does not check that TEXT is UTF-8, and the ADBC driver passes the bytes into Arrow
``string`` arrays unchecked. Every text column is validated once after the read (Arrow's full
validation, a few milliseconds per 100 MB); a value that is not UTF-8 is read with U+FFFD in
place of its bad bytes and reported as a ``bad_text`` problem naming the table, the column and
the row's key. The :mod:`sqlite3` path does the same (:func:`~memlab.sources._sqlite_snapshot.
decode_text`).

This module reads the tables (``Reader``: the Arrow reads and the :mod:`sqlite3` path) and
builds the Store (:func:`load_elfmem`). What memlab knows of elfmem's schemas, and how a
database's version is told, is in :mod:`memlab.kinds.elfmem_db._schema`; the typing and
checking of values in :mod:`memlab.kinds.elfmem_db._values`; the frames made from typed
columns in :mod:`memlab.kinds.elfmem_db._frames`.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from memlab.errors import UnsupportedSchema
from memlab.kinds.elfmem_db._frames import (
    char_count,
    check_clock,
    config_frame,
    decode_embeddings,
    rows_frame,
)
from memlab.kinds.elfmem_db._schema import (
    BLOB,
    BOOL,
    CAT,
    FLOAT,
    FRAME_TABLES,
    INT,
    STR,
    SUPPORTED_SCHEMA_VERSIONS,
    UTC,
    columns_version,
    q,
    read_schema_version,
    release_guess,
)
from memlab.kinds.elfmem_db._values import Typer
from memlab.sources._sqlite_snapshot import BadText, Snapshot, decode_text, read_snapshot
from memlab.store import Problems, Store

__all__ = ["load_elfmem", "FRAME_TABLES", "SUPPORTED_SCHEMA_VERSIONS", "release_guess", "Reader"]

#: A table not read yet on the shared connection (then it is read on its own).
_UNREAD = object()
_PRIME = {STR: "''", CAT: "''", UTC: "''", FLOAT: "0.0", INT: "0", BOOL: "0", BLOB: "x''"}
_ARROW_WANT = {
    STR: pa.string(),
    CAT: pa.string(),
    UTC: pa.string(),
    FLOAT: pa.float64(),
    INT: pa.int64(),
    BOOL: pa.int64(),
    BLOB: pa.binary(),
}
# Threads for the Arrow reads (the driver runs without the GIL) and the rowid span above which
# a table is split between them.
# (tests/test_elfmem_db.py patches _SPLIT_ROWS and _fetch_arrow on this module, so the code that
# reads them lives here.)
_WORKERS = max(
    1,
    min(
        8,
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1),
    ),
)
_SPLIT_ROWS = 20_000


class Reader(Typer):
    """Reads and types the tables of one snapshot; collects problems on the way."""

    def __init__(self, snap: Snapshot, source: Path, problems: Problems) -> None:
        super().__init__(source, problems)
        self.snap = snap
        self.readers: dict[str, str] = {}
        self._arrow: dict[str, Any] = {}
        self._text_ok: set[str] = set()  # frames whose text the read threads found valid UTF-8
        self._conn = snap.connect()
        self._conn.text_factory = decode_text  # invalid UTF-8: a BadText, reported when typed

    def close(self) -> None:
        self._conn.close()

    # -- schema --------------------------------------------------------------------------
    def schema(self) -> dict[str, list[str]]:
        names = [
            r[0]
            for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        return {n: [r[1] for r in self._conn.execute(f"PRAGMA table_info({q(n)})")] for n in names}

    def rows(self, sql: str) -> list[tuple]:
        return self._conn.execute(sql).fetchall()

    # -- reading a table -----------------------------------------------------------------
    def prefetch(self, plan: dict[str, tuple[str, list[tuple[str, str]]]]) -> None:
        """Read the planned tables through Arrow: in parallel when there is much to read,
        else one after another on one connection.

        The ADBC driver releases the GIL while it steps SQLite, so large tables are split into
        rowid ranges and read on one connection per range. Results (or the error that will
        send a table down the exact path) are kept for :meth:`read`.
        """
        if importlib.util.find_spec("adbc_driver_sqlite") is None:
            for frame in plan:
                self._arrow[frame] = ImportError("adbc-driver-sqlite not installed")
            return
        tasks: list[tuple[str, str, list[tuple[str, str]], tuple[int, int] | None]] = []
        # rowid span of every table, None when one cannot be told (WITHOUT ROWID)
        rows: int | None = 0
        for frame, (table, cols) in plan.items():
            ranges, span = self._ranges(table)
            rows = None if rows is None or span is None else rows + span
            for part in ranges:
                tasks.append((frame, table, cols, part))
        if not tasks:
            return
        parts: dict[str, list[Any]] = {}
        if rows is not None and rows <= _SPLIT_ROWS:
            # Small tables (every table together under one split's size): threads would cost
            # more than they overlap, so read them one after another on this thread, on one
            # connection. A table that fails there is read again on a connection of its own,
            # so what a table gives never depends on the others.
            try:
                shared = _ArrowConnection(self.snap.uri)
            except Exception:  # noqa: BLE001 - each table then tries (and reports) on its own
                shared = None
            try:
                for frame, table, cols, part in tasks:
                    got: Any = _UNREAD
                    if shared is not None:
                        try:
                            got = _fetch_checked(self.snap.uri, table, cols, part, shared.conn)
                        except Exception:  # noqa: BLE001 - retried on its own connection below
                            got = _UNREAD
                    if got is _UNREAD:
                        try:
                            got = _fetch_checked(self.snap.uri, table, cols, part)
                        except Exception as exc:  # noqa: BLE001 - any driver failure: exact path
                            got = exc
                    parts.setdefault(frame, []).append(got)
            finally:
                if shared is not None:
                    shared.close()
        else:
            with ThreadPoolExecutor(max_workers=min(_WORKERS, len(tasks))) as pool:
                futures = [
                    (frame, pool.submit(_fetch_checked, self.snap.uri, table, cols, part))
                    for frame, table, cols, part in tasks
                ]
                for frame, future in futures:
                    try:
                        parts.setdefault(frame, []).append(future.result())
                    except Exception as exc:  # noqa: BLE001 - any driver failure: exact path
                        parts.setdefault(frame, []).append(exc)
        for frame, got in parts.items():
            errors = [g for g in got if isinstance(g, BaseException)]
            if errors:
                self._arrow[frame] = errors[0]
                continue
            tables = [t for t, _ in got]
            self._arrow[frame] = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
            if all(ok for _, ok in got):
                self._text_ok.add(frame)

    def _ranges(self, table: str) -> tuple[list[tuple[int, int] | None], int | None]:
        """The rowid ranges to read ``table`` in (``[None]``: whole) and its rowid span (at
        least its row count; None for a WITHOUT ROWID table)."""
        try:
            # Two queries: SQLite answers min() or max() of the rowid from the b-tree's ends,
            # but scans the whole table for both in one.
            lo = self._conn.execute("SELECT min(rowid) FROM " + q(table)).fetchone()[0]
            hi = self._conn.execute("SELECT max(rowid) FROM " + q(table)).fetchone()[0]
        except sqlite3.OperationalError:  # a WITHOUT ROWID table: read it whole
            return [None], None
        if lo is None:
            return [None], 0
        if hi - lo < 2 * _SPLIT_ROWS:
            return [None], hi - lo + 1
        parts = int(min(2 * _WORKERS, (hi - lo) // _SPLIT_ROWS))
        bounds = np.linspace(lo, hi + 1, parts + 1).astype(np.int64)
        return [(int(a), int(b) - 1) for a, b in zip(bounds[:-1], bounds[1:])], hi - lo + 1

    def read(
        self, frame: str, table: str, spec: list[tuple[str, str]], present: list[str]
    ) -> dict[str, pd.Series]:
        """Typed columns of ``table`` (only the spec columns it has)."""
        cols = [(c, k) for c, k in spec if c in present]
        if not cols:
            return {}
        got = self._arrow.pop(frame, None)
        if got is None:
            self.prefetch({frame: (table, cols)})
            got = self._arrow.pop(frame)
        if isinstance(got, pa.Table):
            self.readers[frame] = "arrow"
            if frame not in self._text_ok:
                got = self._check_text(table, cols, got)
            return {c: self._type_arrow(frame, c, k, got.column(c)) for c, k in cols}
        self.readers[frame] = f"sqlite3 ({str(got)[:160]})"
        return self._read_sqlite(frame, table, cols)

    def _read_sqlite(
        self, frame: str, table: str, cols: list[tuple[str, str]]
    ) -> dict[str, pd.Series]:
        rows = self._conn.execute(
            f"SELECT {', '.join(q(c) for c, _ in cols)} FROM {q(table)}"
        ).fetchall()
        columns = list(zip(*rows)) if rows else [() for _ in cols]
        keys = columns[0]
        for (c, k), values in zip(cols, columns):
            bad = [i for i, v in enumerate(values) if type(v) is BadText]
            if bad:
                self._report_text(table, c, cols[0][0], [keys[i] for i in bad])
        return {
            c: self._type_values(frame, c, k, list(values)) for (c, k), values in zip(cols, columns)
        }


class _ArrowConnection:
    """An ADBC SQLite database and a connection to it, closed together."""

    def __init__(self, uri: str) -> None:
        # The low-level bindings, not adbc_driver_sqlite.dbapi: the DB-API module imports
        # polars (when installed) and costs most of a second at start-up; these cost ms.
        import adbc_driver_manager as adm
        import adbc_driver_sqlite

        self._db = adbc_driver_sqlite.connect(uri)
        try:
            self.conn = adm.AdbcConnection(self._db)
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            self._db.close()

    def __enter__(self) -> "_ArrowConnection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _fetch_checked(
    uri: str,
    table: str,
    cols: list[tuple[str, str]],
    part: tuple[int, int] | None,
    conn: Any = None,
) -> tuple[pa.Table, bool]:
    """:func:`_fetch_arrow`, and whether every string in it is valid UTF-8 (the ADBC driver
    does not check; the validation runs here, on the read's thread, without the GIL)."""
    tbl = (
        _fetch_arrow(uri, table, cols, part)
        if conn is None
        else _fetch_arrow(uri, table, cols, part, conn)
    )
    try:
        for c, _ in cols:
            column = tbl.column(c)
            if pa.types.is_string(column.type):
                column.validate(full=True)
    except pa.ArrowInvalid:
        return tbl, False  # Reader._check_text finds, repairs and reports the values
    return tbl, True


def _fetch_arrow(
    uri: str,
    table: str,
    cols: list[tuple[str, str]],
    part: tuple[int, int] | None,
    conn: Any = None,
) -> pa.Table:
    """One table (or rowid range of it) as Arrow, on a connection of its own (or on
    ``conn``, an open ADBC connection to ``uri``)."""
    import adbc_driver_manager as adm

    prime = ", ".join(f"{_PRIME[k]} AS {q(c)}" for c, k in cols)
    select = ", ".join(q(c) for c, _ in cols)
    where = f" WHERE rowid BETWEEN {part[0]} AND {part[1]}" if part else ""
    sql = f"SELECT 0 AS __memlab_row, {prime} UNION ALL SELECT 1, {select} FROM {q(table)}{where}"
    if conn is None:
        with _ArrowConnection(uri) as own:
            return _fetch_arrow(uri, table, cols, part, own.conn)
    with adm.AdbcStatement(conn) as stmt:
        stmt.set_sql_query(sql)
        stream, _ = stmt.execute_query()
        tbl = pa.RecordBatchReader._import_from_c(stream.address).read_all()
    marker = tbl.column("__memlab_row")
    if marker[0].as_py() == 0:
        tbl = tbl.slice(1)
    else:  # SQLite put the priming row elsewhere: find it rather than trust the order
        tbl = tbl.filter(pc.equal(marker, 1))
    for c, k in cols:
        have = tbl.schema.field(c).type
        want = _ARROW_WANT[k]
        if have != want and not (k == FLOAT and pa.types.is_integer(have)):
            raise TypeError(f"{table}.{c} came back as {have}, expected {want}")
    tbl = tbl.drop_columns(["__memlab_row"])
    # Chunks of one table must agree on types to be concatenated.
    return tbl.cast(pa.schema([(c, _ARROW_WANT[k]) for c, k in cols]))


def _load(snap: Snapshot, path: Path, embeddings: bool) -> Store:
    problems = Problems()
    for kind, message in snap.problems:
        problems.add(path, kind, message)
    reader = Reader(snap, path, problems)
    try:
        schema = reader.schema()
        if "blocks" not in schema:
            found = ", ".join(sorted(schema)) or "none"
            raise UnsupportedSchema(
                f"no 'blocks' table, so not an elfmem database (tables: {found})",
                path=path,
                hint="point memlab at the elfmem .db file (often ~/.elfmem/databases/elfmem.db)",
            )
        _require_block_text(reader, schema["blocks"], path)
        raw_config = (
            reader.rows("SELECT key, value FROM system_config")
            if {"key", "value"} <= set(schema.get("system_config", []))
            else []
        )
        version, recorded = read_schema_version(raw_config, reader, path)

        frames: dict[str, pd.DataFrame] = {}
        extra = [("embedding", BLOB)] if embeddings else []
        plan = {}
        for name, (table, spec) in FRAME_TABLES.items():
            if table not in schema:
                continue
            spec = [*spec, *extra] if name == "blocks" else spec
            cols = [(c, k) for c, k in spec if c in schema[table]]
            if cols:
                plan[name] = (table, cols)
        reader.prefetch(plan)
        blocks = rows_frame(reader, "blocks", schema, extra)
        blocks["content_chars"] = char_count(blocks["content"])
        blocks["summary_chars"] = char_count(blocks["summary"])
        if embeddings:
            emb = blocks.pop("embedding")
            blocks["embedding"] = decode_embeddings(emb, reader, blocks["id"])
        frames["blocks"] = blocks
        for name in ("tags", "edges", "contradictions", "outcomes", "amendments", "sessions"):
            frames[name] = rows_frame(reader, name, schema)
        sessions = frames["sessions"]
        sessions["duration_s"] = (
            (sessions["ended_at"] - sessions["started_at"]).dt.total_seconds().astype("float64")
        )
        frames["config"] = config_frame(raw_config, reader)
        frames["config_raw"] = rows_frame(reader, "config_raw", schema)
        for name in ("frames", "peers", "co_retrieval"):
            frames[name] = rows_frame(reader, name, schema)
        check_clock(frames, reader)
        readers = dict(reader.readers)
    finally:
        reader.close()

    from_columns = columns_version(schema)
    if recorded and from_columns < version:
        problems.add(
            path,
            "schema_drift",
            f"schema_version says {version} but the columns stop at version "
            f"{from_columns}; missing columns are read as NA",
        )
    meta = {
        "schema_version": version,
        "schema_version_recorded": recorded,
        "schema_version_from_columns": from_columns,
        "tables": sorted(schema),
        "columns": schema,
        "journal_mode": snap.journal_mode,
        "elfmem_release": release_guess(version, schema),
        "snapshot": snap.info(),
        "readers": readers,
    }
    return Store(kind="elfmem_db", path=path, frames=frames, problems=problems.frame(), meta=meta)


def _require_block_text(reader: Reader, columns: list[str], path: Path) -> None:
    """A ``blocks`` table without a stored ``id`` or ``content`` column (dropped, or a generated
    column the file computes, which ``PRAGMA table_info`` does not list) holds no block text to
    read: :class:`~memlab.errors.UnsupportedSchema`, not blocks of "0 chars"."""
    missing = [c for c in ("id", "content") if c not in columns]
    if not missing:
        return
    generated = {r[1] for r in reader.rows("PRAGMA table_xinfo(blocks)") if r[6] in (2, 3)}
    why = "; ".join(
        f"{c!r} is a generated column (computed by the file, not stored text)"
        if c in generated
        else f"there is no {c!r} column"
        for c in missing
    )
    raise UnsupportedSchema(
        f"the 'blocks' table has no readable block text: {why}",
        path=path,
        hint="memlab reads the text elfmem stores in blocks.content; this "
        "file's blocks table is not elfmem's",
    )


def load_elfmem(path: str | Path, *, embeddings: bool = False) -> Store:
    """Load an elfmem SQLite database (schema 1-9) read-only into typed frames.

    Nothing in the database's folder is created or changed, even for a live WAL database;
    rows still only in its ``-wal`` are included. ``embeddings=True`` adds ``blocks.embedding``
    (float32 arrays, None where a block has none).

    Raises StoreNotFound (no such path), CorruptStore (not SQLite, truncated, damaged),
    UnsupportedSchema (no ``blocks`` table, or a schema version newer than 9).

    Example::

        store = memlab.load_elfmem("~/.elfmem/databases/elfmem.db")
        store.blocks.groupby("status", observed=True).content_chars.sum()
    """
    p = Path(path).expanduser()

    def loader(snap: Snapshot) -> Store:
        return _load(snap, p, embeddings)

    return read_snapshot(p, loader)
