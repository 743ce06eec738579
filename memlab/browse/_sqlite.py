"""Frames into SQLite tables with the store's types, and names SQLite and Datasette can hold.

Types (DESIGN.md's frame dtypes, one SQLite type each, declared on the column so Datasette
shows it): timestamps are ISO 8601 text (``2026-12-01T08:00:00+00:00``), categories and text
``TEXT``, counts ``INTEGER``, flags ``INTEGER`` 0/1, measures ``REAL``, durations ``REAL``
seconds; a column of lists or mappings is JSON text. A missing value is NULL, never 0.

Table names are frame names made safe: ASCII letters, digits and ``_``, lower case, never
``sqlite_*``, unique. Column names are kept as written (frontmatter keys are store text) but
control characters become ``?``, and two names SQLite would read as one (it ignores case) or
that shadow ``rowid`` get a ``__2`` suffix; every name reaches SQL only double-quoted.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import sqlite3
from typing import Any

import numpy as np
import pandas as pd

from memlab._escape import quote

__all__ = ["quote", "table_name", "column_names", "sqlite_column", "create_table"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_RESERVED = {"rowid", "oid", "_rowid_"}


def table_name(name: str, taken: set[str]) -> str:
    """A safe, unique (case-insensitively, against ``taken``, which it extends) table name."""
    base = re.sub(r"[^a-z0-9_]+", "_", str(name).lower()).strip("_") or "table"
    if base[0].isdigit() or base.startswith("sqlite_"):
        base = f"t_{base}"
    out, n = base, 2
    while out in taken:
        out, n = f"{base}__{n}", n + 1
    taken.add(out)
    return out


def column_names(columns: list[Any]) -> list[str]:
    """The frame's column names as SQLite columns: control characters shown as ``?``, unique
    ignoring case, none named ``rowid`` / ``oid`` / ``_rowid_``."""
    taken: set[str] = set(_RESERVED)
    out = []
    for col in columns:
        base = _CONTROL.sub("?", str(col)) or "column"
        name, n = base, 2
        while name.lower() in taken:
            name, n = f"{base}__{n}", n + 1
        taken.add(name.lower())
        out.append(name)
    return out


def _missing(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    if isinstance(v, (float, np.floating)):
        return math.isnan(float(v))
    try:
        return bool(pd.isna(v)) if np.ndim(v) == 0 else False
    except (TypeError, ValueError):
        return False


def _json_default(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (dt.datetime, dt.date, pd.Timestamp)):
        return v.isoformat()
    if isinstance(v, (set, frozenset)):
        return sorted(map(str, v))
    return str(v)


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (dt.datetime, dt.date, pd.Timestamp)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, (list, tuple, dict, set, frozenset, np.ndarray)):
        return json.dumps(v, default=_json_default, ensure_ascii=False)
    return str(v)


def _int(v: Any) -> int | str:
    i = int(v)
    return i if -(2**63) <= i < 2**63 else str(i)  # past SQLite's 64 bits: the digits as text


def sqlite_column(s: pd.Series) -> tuple[str, list[Any]]:
    """(declared SQLite type, values) of one frame column."""
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return "TEXT", [None if _missing(v) else _text(v) for v in s.astype(object)]
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "TEXT", [None if _missing(v) else v.isoformat() for v in s]
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "REAL", [None if _missing(v) else v.total_seconds() for v in s]
    if pd.api.types.is_bool_dtype(dtype):
        return "INTEGER", [None if _missing(v) else int(bool(v)) for v in s.astype(object)]
    if pd.api.types.is_integer_dtype(dtype):
        return "INTEGER", [None if _missing(v) else _int(v) for v in s.astype(object)]
    if pd.api.types.is_float_dtype(dtype):
        return "REAL", [None if _missing(v) else float(v) for v in s.astype(object)]
    if pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype):
        return "TEXT", [None if _missing(v) else str(v) for v in s.astype(object)]
    values = list(s.astype(object))
    present = [v for v in values if not _missing(v)]
    if present and all(isinstance(v, (bool, np.bool_)) for v in present):
        return "INTEGER", [None if _missing(v) else int(bool(v)) for v in values]
    if present and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in present
    ):
        return "INTEGER", [None if _missing(v) else _int(v) for v in values]
    if present and all(
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
        for v in present
    ):
        return "REAL", [None if _missing(v) else float(v) for v in values]
    return "TEXT", [None if _missing(v) else _text(v) for v in values]


def create_table(
    con: sqlite3.Connection,
    name: str,
    df: pd.DataFrame,
    *,
    primary_key: str | None = None,
    foreign_keys: dict[str, tuple[str, str]] | None = None,
) -> list[tuple[str, str]]:
    """Create table ``name`` holding ``df`` (its columns renamed by :func:`column_names`);
    ``primary_key`` / ``foreign_keys`` name SQLite columns. Returns [(column, type)]."""
    cols = column_names(list(df.columns))
    converted = [sqlite_column(df.iloc[:, i]) for i in range(df.shape[1])]
    defs = []
    for col, (kind, _) in zip(cols, converted):
        d = f"{quote(col)} {kind}"
        if col == primary_key:
            d += " PRIMARY KEY"
        defs.append(d)
    for col, (table, target) in (foreign_keys or {}).items():
        defs.append(f"FOREIGN KEY ({quote(col)}) REFERENCES {quote(table)}({quote(target)})")
    con.execute(f"CREATE TABLE {quote(name)} ({', '.join(defs) or '_empty INTEGER'})")
    if cols and len(df):
        marks = ", ".join("?" * len(cols))
        con.executemany(
            f"INSERT INTO {quote(name)} VALUES ({marks})", zip(*(values for _, values in converted))
        )
    return [(col, kind) for col, (kind, _) in zip(cols, converted)]
