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
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from memlab.errors import UnsupportedSchema
from memlab.sources._sqlite_snapshot import BadText, Snapshot, decode_text, read_snapshot
from memlab.constants import INT64_MAX
from memlab.store import Problems, Store, utc_datetimes

__all__ = ["load_elfmem", "FRAME_TABLES", "SUPPORTED_SCHEMA_VERSIONS", "release_guess"]

SUPPORTED_SCHEMA_VERSIONS = range(1, 10)

# Column kinds: how a stored value becomes a typed pandas value.
STR, CAT, UTC, FLOAT, INT, BOOL, BLOB = "str", "cat", "utc", "float", "int", "bool", "blob"

_DTYPES = {STR: "string", CAT: "category", UTC: "datetime64[ns, UTC]", FLOAT: "float64",
           INT: "Int64", BOOL: "boolean", BLOB: "object"}

#: frame name -> (SQLite table, [(column, kind), ...]) in the order of docs/DESIGN.md.
FRAME_TABLES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "blocks": ("blocks", [
        ("id", STR), ("content", STR), ("category", CAT), ("source", CAT), ("created_at", UTC),
        ("status", CAT), ("archive_reason", CAT), ("pinned", BOOL), ("superseded_by", STR),
        ("confidence", FLOAT), ("reinforcement_count", INT), ("decay_lambda", FLOAT),
        ("last_reinforced_at", FLOAT), ("self_alignment", FLOAT), ("embedding_model", STR),
        ("token_count", INT), ("summary", STR), ("last_session_id", STR),
        ("outcome_evidence", FLOAT), ("success_count", FLOAT), ("failure_count", FLOAT),
        ("source_peer", STR), ("share", CAT), ("envelope_json", STR), ("last_scored_at", UTC),
        ("cue", STR), ("volatility_class", CAT),
    ]),
    "tags": ("block_tags", [("block_id", STR), ("tag", STR)]),
    "edges": ("edges", [
        ("from_id", STR), ("to_id", STR), ("weight", FLOAT), ("reinforcement_count", INT),
        ("created_at", UTC), ("relation_type", CAT), ("origin", CAT),
        ("last_active_hours", FLOAT), ("note", STR), ("declared_by", STR),
    ]),
    "contradictions": ("contradictions", [
        ("block_a_id", STR), ("block_b_id", STR), ("score", FLOAT), ("resolved", BOOL),
        ("created_at", UTC), ("kind", CAT), ("cue_similarity", FLOAT),
    ]),
    "outcomes": ("block_outcomes", [
        ("id", STR), ("block_id", STR), ("signal", FLOAT), ("weight", FLOAT), ("source", STR),
        ("confidence_before", FLOAT), ("confidence_after", FLOAT), ("created_at", UTC),
    ]),
    "amendments": ("block_amendments", [
        ("id", INT), ("block_id", STR), ("timestamp", UTC), ("pre_content", STR),
        ("post_content", STR), ("pre_summary", STR), ("post_summary", STR),
        ("drift_score", FLOAT), ("rationale", STR), ("acceptor", CAT), ("reverted_at", UTC),
    ]),
    "sessions": ("sessions", [
        ("id", STR), ("task_type", STR), ("started_at", UTC), ("ended_at", UTC),
        ("start_active_hours", FLOAT),
    ]),
    "config_raw": ("system_config", [("key", STR), ("value", STR)]),
    "frames": ("frames", [
        ("name", STR), ("weights_json", STR), ("filters_json", STR), ("guarantees_json", STR),
        ("template", STR), ("token_budget", INT), ("cache_json", STR), ("source", STR),
        ("created_at", UTC),
    ]),
    "peers": ("peer_roster", [
        ("did", STR), ("name", STR), ("public_key", STR), ("trust", FLOAT), ("is_self", BOOL),
        ("first_contact", UTC), ("last_active", UTC), ("blocks_imported", INT),
        ("blocks_exported", INT), ("messages_in", INT), ("messages_out", INT), ("notes", STR),
        ("delivery_path", STR),
    ]),
    "co_retrieval": ("co_retrieval_staging", [("from_id", STR), ("to_id", STR), ("count", INT)]),
}

# Known values first, so the category order is the same in every store; values elfmem never
# wrote are kept (appended), never turned into NA.
_KNOWN_CATEGORIES = {
    ("blocks", "status"): ["inbox", "active", "archived"],
    ("blocks", "archive_reason"): ["superseded", "decayed", "forgotten"],
    ("blocks", "share"): ["private", "public", "peer"],
    ("contradictions", "kind"): ["contradiction", "near_duplicate"],
    ("amendments", "acceptor"): ["agent", "user", "system"],
}

# system_config keys with a type of their own; every other key is a string column.
_CONFIG_TYPED = [("schema_version", INT), ("total_active_hours", FLOAT),
                 ("last_curate_at", FLOAT), ("last_consolidated_at", UTC),
                 ("prune_threshold", FLOAT), ("top_k", INT)]
_TOKEN_KEYS = ["llm_calls", "llm_input_tokens", "llm_output_tokens", "embedding_calls",
               "embedding_tokens"]

# Schema version -> the elfmem releases that write it (PyPI wheels read; see tests/elfmem_schemas).
_RELEASES = {1: "0.4.0-0.8.0", 2: "0.9.1-0.13.2", 3: "0.13.3-0.15.3", 4: "0.17.0",
             5: "0.18.0-0.19.2", 6: "unreleased 0.20.0 development build",
             7: "unreleased 0.20.0 development build", 8: "unreleased 0.20.0 development build",
             9: ">=0.20.0"}

_PRIME = {STR: "''", CAT: "''", UTC: "''", FLOAT: "0.0", INT: "0", BOOL: "0", BLOB: "x''"}
_ARROW_WANT = {STR: pa.string(), CAT: pa.string(), UTC: pa.string(), FLOAT: pa.float64(),
               INT: pa.int64(), BOOL: pa.int64(), BLOB: pa.binary()}
# Threads for the Arrow reads (the driver runs without the GIL) and the rowid span above which
# a table is split between them.
_WORKERS = max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else (os.cpu_count() or 1)))
_SPLIT_ROWS = 20_000


def release_guess(schema_version: int, columns: dict[str, list[str]]) -> str:
    """Best guess of the elfmem release range that wrote a database with this schema."""
    if schema_version == 1 and ("summary" not in columns.get("blocks", [])
                                or "relation_type" not in columns.get("edges", [])):
        return "<0.4.0 (0.1.0 shape)"
    return _RELEASES.get(schema_version, "unknown")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class _Reader:
    """Reads and types the tables of one snapshot; collects problems on the way."""

    def __init__(self, snap: Snapshot, source: Path, problems: Problems) -> None:
        self.snap = snap
        self.source = source
        self.problems = problems
        self.readers: dict[str, str] = {}
        self._arrow: dict[str, Any] = {}
        self._text_ok: set[str] = set()  # frames whose text the read threads found valid UTF-8
        self._conn = snap.connect()
        self._conn.text_factory = decode_text  # invalid UTF-8: a BadText, reported when typed

    def close(self) -> None:
        self._conn.close()

    def problem(self, kind: str, message: str) -> None:
        self.problems.add(self.source, kind, message)

    # -- schema --------------------------------------------------------------------------
    def schema(self) -> dict[str, list[str]]:
        names = [r[0] for r in self._conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: [r[1] for r in self._conn.execute(f"PRAGMA table_info({_q(n)})")]
                for n in names}

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
        rows = 0  # rowid span of every table, None when one cannot be told (WITHOUT ROWID)
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
                    try:
                        if shared is None:
                            raise RuntimeError("no shared connection")
                        got = _fetch_checked(self.snap.uri, table, cols, part, shared.conn)
                    except Exception:  # noqa: BLE001
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
                futures = [(frame, pool.submit(_fetch_checked, self.snap.uri, table, cols, part))
                           for frame, table, cols, part in tasks]
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
            lo, hi = (self._conn.execute(f"SELECT {fn}(rowid) FROM {_q(table)}").fetchone()[0]
                      for fn in ("min", "max"))
        except sqlite3.OperationalError:  # a WITHOUT ROWID table: read it whole
            return [None], None
        if lo is None:
            return [None], 0
        if hi - lo < 2 * _SPLIT_ROWS:
            return [None], hi - lo + 1
        parts = int(min(2 * _WORKERS, (hi - lo) // _SPLIT_ROWS))
        bounds = np.linspace(lo, hi + 1, parts + 1).astype(np.int64)
        return [(int(a), int(b) - 1) for a, b in zip(bounds[:-1], bounds[1:])], hi - lo + 1

    def read(self, frame: str, table: str, spec: list[tuple[str, str]], present: list[str]
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

    def _read_sqlite(self, frame: str, table: str, cols: list[tuple[str, str]]
                     ) -> dict[str, pd.Series]:
        select = ", ".join(_q(c) for c, _ in cols)
        rows = self._conn.execute(f"SELECT {select} FROM {_q(table)}").fetchall()
        columns = list(zip(*rows)) if rows else [() for _ in cols]
        keys = columns[0]
        for (c, k), values in zip(cols, columns):
            bad = [i for i, v in enumerate(values) if type(v) is BadText]
            if bad:
                self._report_text(table, c, cols[0][0], [keys[i] for i in bad])
        return {c: self._type_values(frame, c, k, list(values))
                for (c, k), values in zip(cols, columns)}

    def _check_text(self, table: str, cols: list[tuple[str, str]], tbl: pa.Table) -> pa.Table:
        """``tbl`` with every string value that is not valid UTF-8 repaired (U+FFFD for the bad
        bytes) and reported; ``tbl`` itself when all are valid (the common case: one full
        validation per column)."""
        found: dict[str, list[int]] = {}
        for c, _ in cols:
            column = tbl.column(c)
            if not pa.types.is_string(column.type):
                continue
            try:  # one call for every chunk: the loop over chunks runs in C++
                column.validate(full=True)
                continue
            except pa.ArrowInvalid:
                pass
            fixed, bad, start = [], [], 0
            for chunk in column.chunks:
                positions = _bad_utf8(chunk)
                fixed.append(_repair_utf8(chunk, positions) if positions else chunk)
                bad.extend(start + i for i in positions)
                start += len(chunk)
            if bad:
                found[c] = bad
                tbl = tbl.set_column(tbl.schema.get_field_index(c), c,
                                     pa.chunked_array(fixed, type=column.type))
        for c, bad in found.items():
            key = cols[0][0]
            self._report_text(table, c, key, tbl.column(key).take(bad[:5]).to_pylist(), len(bad))
        return tbl

    # -- typing --------------------------------------------------------------------------
    def _type_arrow(self, frame: str, col: str, kind: str, arr: pa.ChunkedArray) -> pd.Series:
        if kind == STR:
            return arr.to_pandas(types_mapper=_string_mapper)
        if kind == CAT:
            return self._arrow_categories(frame, col, arr)
        if kind == FLOAT:
            return pd.Series(arr.cast(pa.float64()).to_numpy(zero_copy_only=False),
                             dtype="float64")
        if kind == INT:
            return arr.to_pandas(types_mapper=_int_mapper)
        if kind == BOOL:
            return arr.to_pandas(types_mapper=_int_mapper).astype("boolean")
        if kind == UTC:
            try:
                ts = pc.cast(arr, pa.timestamp("ns", tz="UTC"))
                # numpy gives the UTC instants (NaT where null); the dtype makes them tz-aware
                return pd.Series(ts.to_numpy(zero_copy_only=False), dtype="datetime64[ns, UTC]")
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                # Naive SQLite CURRENT_TIMESTAMP text, or junk: the lenient path reports junk.
                return self._timestamps(frame, col, arr.to_pandas(types_mapper=_string_mapper))
        if kind == BLOB:
            return pd.Series(pd.arrays.ArrowExtensionArray(arr))
        raise AssertionError(kind)

    def _type_values(self, frame: str, col: str, kind: str, values: list) -> pd.Series:
        """The exact path: Python values of any SQLite storage class -> typed, bad -> NA."""
        if kind in (STR, CAT, UTC):
            text = pd.Series([_as_text(v) for v in values], dtype="string")
            if kind == STR:
                return text
            if kind == CAT:
                return self._categories(frame, col, text.astype("category"))
            return self._timestamps(frame, col, text)
        if kind == BLOB:
            return pd.Series(values, dtype="object")  # checked when decoded
        raw = pd.Series(values, dtype="object")
        # numpy arrays rather than Series for the masks: the same values, without pandas'
        # per-operation cost (system_config types its keys one value at a time)
        nums = pd.to_numeric(raw.to_numpy(), errors="coerce")
        missing = pd.isna(nums)
        bad = missing & pd.notna(raw.to_numpy())
        if kind in (INT, BOOL):
            # not whole, or past Int64 (inf, 1e300, 10**22): NA and reported, never a crash
            # (float64 compare: INT64_MAX + 1 is exactly 2**63, the first value that overflows)
            frac = ~missing & ~((np.abs(nums) < INT64_MAX + 1) & (nums == np.floor(nums)))
            bad |= frac
            if frac.any():
                nums = np.where(frac, np.nan, nums.astype("float64"))
        if bad.any():
            self._report_bad(frame, col, raw[bad], "not a number" if kind == FLOAT
                             else "not an integer")
        if kind == FLOAT:
            return pd.Series(nums.astype("float64"), dtype="float64")
        ints = pd.array(nums.astype("float64"), dtype="Int64") if len(nums) else \
            pd.array([], dtype="Int64")
        out = pd.Series(ints, dtype="Int64")
        return out.astype("boolean") if kind == BOOL else out

    def _timestamps(self, frame: str, col: str, text: pd.Series) -> pd.Series:
        parsed = utc_datetimes(text)
        bad = parsed.isna() & text.notna()
        if bad.any():
            self._report_bad(frame, col, text[bad], "not an ISO-8601 time")
        return parsed

    def _arrow_categories(self, frame: str, col: str, arr: pa.ChunkedArray) -> pd.Series:
        """:meth:`_categories` of an Arrow column, coded once in the final category order
        (the same categories, codes and dtype as ordering the dictionary afterwards)."""
        encoded = pc.dictionary_encode(arr.combine_chunks())
        dictionary = encoded.dictionary.to_pylist()
        known = _KNOWN_CATEGORIES.get((frame, col))
        if known and frame == "blocks" and col == "status" and not set(dictionary) <= set(known):
            # a status elfmem does not write: the general path reports it
            return self._categories(frame, col, _arrow_categorical(arr))
        order = (known + sorted(set(dictionary) - set(known))) if known else sorted(dictionary)
        codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype("int64")
        if dictionary:
            position = {value: i for i, value in enumerate(order)}
            remap = np.array([position[value] for value in dictionary], dtype="int64")
            codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
        dtype = pd.CategoricalDtype(pd.Index(order, dtype="string"))
        return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype))

    def _categories(self, frame: str, col: str, values: pd.Series) -> pd.Series:
        known = _KNOWN_CATEGORIES.get((frame, col))
        cats = [str(c) for c in values.cat.categories]
        order = (known + sorted(set(cats) - set(known))) if known else sorted(cats)
        if known and frame == "blocks" and col == "status":
            unknown = values[values.notna() & ~values.isin(known)]
            if len(unknown):
                self.problem("unknown_value",
                             f"{len(unknown)} blocks have a status elfmem does not write: "
                             f"{sorted(set(map(str, unknown)))}; kept as is")
        # not astype(): pandas treats unordered dtypes with the same set as equal, keeping the
        # old order
        return values.cat.set_categories(pd.Index(order, dtype="string"))

    def _report_text(self, table: str, col: str, key: str, keys: list, n: int | None = None
                     ) -> None:
        n = len(keys) if n is None else n
        shown = ", ".join(repr(str(k)) if k is not None else "NULL" for k in keys[:5])
        more = f" and {n - 5} more" if n > 5 else ""
        self.problem("bad_text", f"{table}.{col}: {n} value(s) are not valid UTF-8, read with "
                                 f"U+FFFD for the bad bytes (rows with {key} {shown}{more})")

    def _report_bad(self, frame: str, col: str, bad: pd.Series, what: str) -> None:
        examples = ", ".join(repr(v) for v in bad.head(3).tolist())
        self.problem("bad_value", f"{frame}.{col}: {len(bad)} value(s) {what}, read as NA "
                                  f"(e.g. {examples})")


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


def _fetch_checked(uri: str, table: str, cols: list[tuple[str, str]],
                   part: tuple[int, int] | None, conn: Any = None) -> tuple[pa.Table, bool]:
    """:func:`_fetch_arrow`, and whether every string in it is valid UTF-8 (the ADBC driver
    does not check; the validation runs here, on the read's thread, without the GIL)."""
    tbl = _fetch_arrow(uri, table, cols, part) if conn is None else \
        _fetch_arrow(uri, table, cols, part, conn)
    try:
        for c, _ in cols:
            column = tbl.column(c)
            if pa.types.is_string(column.type):
                column.validate(full=True)
    except pa.ArrowInvalid:
        return tbl, False  # _Reader._check_text finds, repairs and reports the values
    return tbl, True


def _fetch_arrow(uri: str, table: str, cols: list[tuple[str, str]],
                 part: tuple[int, int] | None, conn: Any = None) -> pa.Table:
    """One table (or rowid range of it) as Arrow, on a connection of its own (or on
    ``conn``, an open ADBC connection to ``uri``)."""
    import adbc_driver_manager as adm

    prime = ", ".join(f"{_PRIME[k]} AS {_q(c)}" for c, k in cols)
    select = ", ".join(_q(c) for c, _ in cols)
    where = f" WHERE rowid BETWEEN {part[0]} AND {part[1]}" if part else ""
    sql = (f"SELECT 0 AS __memlab_row, {prime} "
           f"UNION ALL SELECT 1, {select} FROM {_q(table)}{where}")
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


#: Rows at or below which a failing slice of a string array is checked value by value.
_UTF8_LEAF = 256


def _bad_utf8(chunk: pa.Array) -> list[int]:
    """Positions of the values of a string array that are not valid UTF-8: one full validation
    when every value is valid, else halves validated again down to small slices."""
    try:
        chunk.validate(full=True)
        return []
    except pa.ArrowInvalid:
        pass
    if len(chunk) <= _UTF8_LEAF:
        out = []
        for i, v in enumerate(chunk.view(pa.binary()).to_pylist()):
            if v is not None:
                try:
                    v.decode("utf-8")
                except UnicodeDecodeError:
                    out.append(i)
        return out
    mid = len(chunk) // 2
    return _bad_utf8(chunk.slice(0, mid)) + [mid + i for i in _bad_utf8(chunk.slice(mid))]


def _repair_utf8(chunk: pa.Array, positions: list[int]) -> pa.Array:
    """``chunk`` with the values at ``positions`` decoded with U+FFFD for their bad bytes."""
    raw = chunk.view(pa.binary())
    mask = np.zeros(len(chunk), dtype=bool)
    mask[positions] = True
    repaired = pa.array([raw[i].as_py().decode("utf-8", "replace").encode("utf-8")
                         for i in positions], type=pa.binary())
    return pc.replace_with_mask(raw, pa.array(mask), repaired).cast(chunk.type)


def _string_mapper(t: pa.DataType):
    return pd.StringDtype("pyarrow") if t in (pa.string(), pa.large_string()) else None


def _int_mapper(t: pa.DataType):
    return pd.Int64Dtype() if pa.types.is_integer(t) else None


def _as_text(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    if isinstance(v, float) and math.isnan(v):
        return None
    return str(v)


def _arrow_categorical(arr: pa.ChunkedArray) -> pd.Series:
    encoded = pc.dictionary_encode(arr.combine_chunks())
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype("int64")
    cats = pd.Index(encoded.dictionary.to_pylist(), dtype="string")
    return pd.Series(pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(cats)))


def _empty_column(kind: str, n: int) -> pd.Series:
    if kind == CAT:
        return pd.Series(pd.Categorical([None] * n,
                                        dtype=pd.CategoricalDtype(pd.Index([], dtype="string"))))
    if kind == BLOB:
        return pd.Series([None] * n, dtype="object")
    return pd.Series(index=pd.RangeIndex(n), dtype=_DTYPES[kind])


def _frame(reader: _Reader, name: str, schema: dict[str, list[str]],
           extra: list[tuple[str, str]] = ()) -> pd.DataFrame:
    table, spec = FRAME_TABLES[name]
    spec = [*spec, *extra]
    present = schema.get(table)
    if present is None:
        return pd.DataFrame({c: _empty_column(k, 0) for c, k in spec})
    typed = reader.read(name, table, spec, present)
    n = len(next(iter(typed.values()))) if typed else \
        reader.rows(f"SELECT COUNT(*) FROM {_q(table)}")[0][0]
    cols = {}
    for c, k in spec:
        s = typed.get(c)
        cols[c] = _empty_column(k, n) if s is None else s
    return _assemble(cols, n)


def _assemble(cols: dict[str, pd.Series], n: int) -> pd.DataFrame:
    """The frame of typed columns of ``n`` rows each, in row order: what resetting each
    Series' index and aligning them gives."""
    if all(len(s) == n and s.dtype != object for s in cols.values()):
        # The arrays under one RangeIndex: the same frame for much less. (An object array would
        # have its type inferred again, so a frame with a BLOB column keeps the Series.)
        return pd.DataFrame({c: s.array for c, s in cols.items()}, index=pd.RangeIndex(n))
    return pd.DataFrame({c: s.reset_index(drop=True) for c, s in cols.items()})


def _decode_embeddings(blobs: pd.Series, reader: _Reader, ids: pd.Series) -> pd.Series:
    """float32 vectors from elfmem's ``np.float32(...).tobytes()`` blobs; None where absent."""
    out = np.empty(len(blobs), dtype=object)
    if isinstance(blobs.dtype, pd.ArrowDtype):
        arr = pa.array(blobs.array)
        chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
        matrix = _same_width_matrix(chunks)
        if matrix is not None:
            # Rows are views of one float32 matrix: one copy of the data, no object per blob.
            present = np.concatenate([c.is_valid().to_numpy(zero_copy_only=False)
                                      for c in chunks]) if chunks else np.zeros(0, bool)
            for i, row in zip(np.flatnonzero(present), matrix):
                out[i] = row
            return pd.Series(out, dtype="object")
        values = arr.to_pylist()
    else:
        values = blobs.tolist()
    bad = []
    for i, v in enumerate(values):
        if v is None:
            continue
        if not isinstance(v, bytes) or len(v) % 4 or not v:
            bad.append(str(ids.iloc[i]))
            continue
        out[i] = np.frombuffer(v, dtype="<f4").astype(np.float32)
    if bad:
        reader.problem("bad_embedding", f"blocks.embedding: {len(bad)} value(s) are not whole "
                                        f"float32 vectors, read as None (ids {bad[:3]})")
    return pd.Series(out, dtype="object")


def _same_width_matrix(chunks: list[pa.Array]) -> np.ndarray | None:
    """All non-null blobs as one (n, dims) float32 matrix, if they share one width that is a
    whole number of float32s and sit back to back in each chunk's data buffer; else None."""
    width, total = None, 0
    for chunk in chunks:
        if chunk.type != pa.binary():
            return None
        valid = chunk.is_valid()
        lengths = pc.binary_length(chunk).filter(valid)
        if len(lengths) == 0:
            continue
        lo, hi = pc.min_max(lengths).values()
        if lo.as_py() != hi.as_py() or lo.as_py() % 4 or lo.as_py() == 0:
            return None
        if width not in (None, lo.as_py()):
            return None
        width = lo.as_py()
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1,
                                offset=4 * chunk.offset)
        # Null slots may in principle own bytes; only a gapless buffer can be read as a block.
        if int(offsets[-1] - offsets[0]) != width * len(lengths):
            return None
        total += len(lengths)
    if width is None:
        return None
    matrix = np.empty((total, width // 4), dtype=np.float32)
    row = 0
    for chunk in chunks:
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1,
                                offset=4 * chunk.offset)
        start, stop = int(offsets[0]), int(offsets[-1])
        k = (stop - start) // width
        if k:
            matrix[row:row + k] = np.frombuffer(chunk.buffers()[2], dtype="<f4",
                                                count=(stop - start) // 4, offset=start
                                                ).reshape(k, width // 4)
            row += k
    return matrix


def _config(raw: list[tuple[Any, Any]], reader: _Reader) -> pd.DataFrame:
    """system_config as one typed row; lifetime_token_usage unpacked into counts."""
    values = {str(k): v for k, v in raw}
    cols: dict[str, pd.Series] = {}
    for key, kind in _CONFIG_TYPED:
        v = values.get(key)
        typed = _plain_number(kind, v)
        cols[key] = reader._type_values("config", key, kind, [v]) if typed is None else typed
    usage: dict[str, Any] = {}
    text = values.get("lifetime_token_usage")
    if text is not None:
        try:
            parsed = json.loads(text)
            if not isinstance(parsed, dict):
                raise ValueError(f"a JSON {type(parsed).__name__}, not an object")
            usage = parsed
        except (ValueError, TypeError, RecursionError) as exc:
            reader.problem("bad_json", f"system_config.lifetime_token_usage is not a JSON "
                                       f"object ({exc}); token and call counts read as NA")
    for key in _TOKEN_KEYS:
        v = usage.get(key)
        if isinstance(v, bool) or (v is not None and not isinstance(v, (int, float, str))):
            v = repr(v)
        typed = _plain_number(INT, v)
        cols[key] = reader._type_values("config", f"lifetime_token_usage.{key}", INT, [v]) \
            if typed is None else typed
    for key in sorted(usage):
        if key not in _TOKEN_KEYS:
            cols[f"lifetime_{key}"] = pd.Series([_as_text(usage[key]) if not isinstance(
                usage[key], (dict, list)) else json.dumps(usage[key])], dtype="string")
    typed_keys = {k for k, _ in _CONFIG_TYPED} | {"lifetime_token_usage"}
    for key in sorted(values):
        if key not in typed_keys and key not in cols:
            cols[key] = pd.Series([_as_text(values[key])], dtype="string")
    return _assemble(cols, 1)


_PLAIN_INT = re.compile(r"-?[0-9]{1,15}")


def _plain_number(kind: str, v: Any) -> pd.Series | None:
    """The one-value Series ``_type_values`` gives for the plainest values of an INT or FLOAT
    key (missing, a Python int below 2**53, a float for FLOAT, the text of a plain integer of
    at most 15 digits), made directly; None for anything else, which _type_values decides."""
    if kind not in (INT, FLOAT):
        return None
    if v is None:
        number = None
    elif type(v) is int and abs(v) < 2 ** 53:
        number = v
    elif type(v) is float and kind == FLOAT:
        number = v
    elif type(v) is str and _PLAIN_INT.fullmatch(v):
        number = int(v)
    else:
        return None
    if kind == FLOAT:
        return pd.Series([np.nan if number is None else float(number)], dtype="float64")
    return pd.Series(pd.array([number], dtype="Int64"))


def _schema_version(raw: list[tuple[Any, Any]], reader: _Reader, path: Path
                    ) -> tuple[int, bool]:
    recorded = [v for k, v in raw if k == "schema_version"]
    if not recorded:
        return 1, False
    value = recorded[0]
    try:
        version = int(str(value).strip())
    except ValueError:
        # elfmem's _get_version reads an unparseable value as 1, and would migrate from there.
        reader.problem("schema_version", f"system_config.schema_version is {value!r}, not an "
                                         "integer; read as 1, as elfmem does")
        return 1, True
    if version > max(SUPPORTED_SCHEMA_VERSIONS):
        raise UnsupportedSchema(
            f"elfmem schema version {version} is newer than memlab knows "
            f"({SUPPORTED_SCHEMA_VERSIONS[0]}-{SUPPORTED_SCHEMA_VERSIONS[-1]})", path=path,
            hint="upgrade memlab; its columns may mean things this version cannot know")
    if version < 1:
        reader.problem("schema_version", f"system_config.schema_version is {version}; "
                                         "elfmem versions start at 1")
    return version, True


def _columns_version(schema: dict[str, list[str]]) -> int:
    """The newest schema version whose additions are all present (drift check)."""
    marks = [(2, "blocks", "source_peer"), (3, "blocks", "last_scored_at"),
             (4, "blocks", "success_count"), (5, "block_amendments", None),
             (6, "blocks", "superseded_by"), (7, "blocks", "pinned"), (8, "blocks", "cue"),
             (9, "contradictions", "kind")]
    version = 1
    for v, table, col in marks:
        if table not in schema or (col is not None and col not in schema[table]):
            break
        version = v
    return version


def _load(snap: Snapshot, path: Path, embeddings: bool) -> Store:
    problems = Problems()
    for kind, message in snap.problems:
        problems.add(path, kind, message)
    reader = _Reader(snap, path, problems)
    try:
        schema = reader.schema()
        if "blocks" not in schema:
            found = ", ".join(sorted(schema)) or "none"
            raise UnsupportedSchema(f"no 'blocks' table, so not an elfmem database "
                                    f"(tables: {found})", path=path,
                                    hint="point memlab at the elfmem .db file "
                                         "(often ~/.elfmem/databases/elfmem.db)")
        raw_config = reader.rows("SELECT key, value FROM system_config") \
            if {"key", "value"} <= set(schema.get("system_config", [])) else []
        version, recorded = _schema_version(raw_config, reader, path)

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
        blocks = _frame(reader, "blocks", schema, extra)
        blocks["content_chars"] = _char_count(blocks["content"])
        blocks["summary_chars"] = _char_count(blocks["summary"])
        if embeddings:
            emb = blocks.pop("embedding")
            blocks["embedding"] = _decode_embeddings(emb, reader, blocks["id"])
        frames["blocks"] = blocks
        for name in ("tags", "edges", "contradictions", "outcomes", "amendments", "sessions"):
            frames[name] = _frame(reader, name, schema)
        sessions = frames["sessions"]
        sessions["duration_s"] = (sessions["ended_at"] - sessions["started_at"]) \
            .dt.total_seconds().astype("float64")
        frames["config"] = _config(raw_config, reader)
        frames["config_raw"] = _frame(reader, "config_raw", schema)
        for name in ("frames", "peers", "co_retrieval"):
            frames[name] = _frame(reader, name, schema)
        _check_clock(frames, reader)
        readers = dict(reader.readers)
    finally:
        reader.close()

    from_columns = _columns_version(schema)
    if recorded and from_columns < version:
        problems.add(path, "schema_drift",
                     f"schema_version says {version} but the columns stop at version "
                     f"{from_columns}; missing columns are read as NA")
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
    return Store(kind="elfmem_db", path=path, frames=frames, problems=problems.frame(),
                 meta=meta)


#: Columns on elfmem's active-hour clock: a count of hours, so finite and never negative.
_CLOCK_COLUMNS = (("blocks", "last_reinforced_at"), ("sessions", "start_active_hours"),
                  ("config", "total_active_hours"))


def _check_clock(frames: dict[str, pd.DataFrame], reader: _Reader) -> None:
    """An active-hour value that is infinite, past 1e15 hours or negative is no time on the
    clock: NA and a ``bad_value`` row (it reached the audit's session clock and the
    simulation's instance as ``inf`` or a negative session length)."""
    for name, col in _CLOCK_COLUMNS:
        frame = frames.get(name)
        if frame is None or col not in frame:
            continue
        hours = frame[col]
        values = hours.to_numpy(dtype="float64", na_value=np.nan)
        with np.errstate(invalid="ignore"):
            bad = ~np.isnan(values) & ~((values >= 0) & (values < 1e15))
        if bad.any():
            reader._report_bad(name, col, hours[bad], "not an active-hour count (finite, "
                               "under 1e15, never negative)")
            frame[col] = hours.mask(bad)


def _char_count(text: pd.Series) -> pd.Series:
    if isinstance(text.dtype, pd.StringDtype) and text.dtype.storage == "pyarrow":
        lengths = pc.utf8_length(pa.array(text.array))
        return lengths.to_pandas(types_mapper=_int_mapper).astype("Int64")
    return text.str.len().astype("Int64")


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
    loader: Callable[[Snapshot], Store] = lambda snap: _load(snap, p, embeddings)
    return read_snapshot(p, loader)
