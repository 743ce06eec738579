"""A Letta server's column values as memlab's frames hold them, whatever the database handed
back: text (``bad_text`` for text that is not UTF-8 and for BLOBs), whole numbers (``bad_value``
for 2.5, 1e300 or other text), booleans, UTC times, categories and JSON (``bad_json``,
``duplicate_key``), each problem naming the table, the column and the rows."""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from memlab.constants import INT64_MAX
from memlab.formats import _json
from memlab.sources._sqlite_snapshot import BadText
from memlab.store import Problems, categories, utc_datetimes

__all__ = ["typed", "as_text", "whole_numbers"]


def typed(
    df: pd.DataFrame, spec: list[tuple[str, str, str]], problems: Problems, where: str, table: str
) -> pd.DataFrame:
    out = df.copy()
    key_db, key_col, _ = spec[0]
    keys = out[key_col].tolist()
    for db, col, kind in spec:
        s = out[col]
        what = f"{table}.{db}"
        if kind in ("str", "value", "time", "cat", "json"):
            s = as_text(s, problems, where, what, key_db, keys)
        if kind in ("str", "value"):
            out[col] = s.astype("string")
        elif kind == "int":
            out[col] = whole_numbers(s, problems, where, what, key_db, keys)
        elif kind == "bool":
            out[col] = s.map(
                lambda v: None if v is None or (isinstance(v, float) and v != v) else bool(v)
            ).astype("boolean")
        elif kind == "time":
            if len(s) and any(isinstance(v, str) for v in s.dropna()):
                out[col] = utc_datetimes(s.astype("string"))
            else:
                out[col] = pd.to_datetime(s, utc=True, errors="coerce").astype(
                    "datetime64[ns, UTC]"
                )
        elif kind == "cat":
            out[col] = categories(s)
        elif kind == "json":
            out[col] = [
                _json_value(v, problems, where, what, f"{key_db} {k!r}") for v, k in zip(s, keys)
            ]
    return out


def _rows(key: str, keys: list) -> str:
    shown = ", ".join(repr(str(k)) if k is not None else "NULL" for k in keys[:5])
    return f"rows with {key} {shown}" + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")


def as_text(
    s: pd.Series, problems: Problems, where: str, what: str, key: str, keys: list
) -> pd.Series:
    """A text column's values as ``str`` (or None), whatever SQLite handed back: text that is
    not UTF-8 (a :class:`BadText`) and BLOBs are read as UTF-8 with U+FFFD for the bad bytes
    and reported by row; numbers (SQLite keeps 5 in a JSON column as a number) become text."""
    out: list[Any] = []
    bad: list[Any] = []
    blobs: list[Any] = []
    for i, v in enumerate(s.tolist()):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(None)
            continue
        if isinstance(v, (bytes, bytearray, memoryview)):
            blobs.append(keys[i])
            v = bytes(v).decode("utf-8", "replace")
        elif type(v) is BadText:
            bad.append(keys[i])
            v = str(v)
        elif not isinstance(v, (str, dict, list)):
            v = str(v)
        out.append(v)
    if bad:
        problems.add(
            where,
            "bad_text",
            f"{what}: {len(bad)} value(s) are not valid UTF-8, read "
            f"with U+FFFD for the bad bytes ({_rows(key, bad)})",
        )
    if blobs:
        problems.add(
            where,
            "bad_text",
            f"{what}: {len(blobs)} value(s) are BLOBs, not text; "
            f"read as UTF-8 with U+FFFD for any bad bytes "
            f"({_rows(key, blobs)})",
        )
    return pd.Series(out, index=s.index, dtype="object")


_INT_TEXT = re.compile(r"\s*[-+]?[0-9]+\s*")


def whole_numbers(
    s: pd.Series, problems: Problems, where: str, what: str, key: str, keys: list
) -> pd.Series:
    """An integer column as Int64: a whole float (2.0) or the text of an integer is that
    integer, as Letta's pydantic models read it; anything else (2.5, 1e300, inf, past
    :data:`~memlab.constants.INT64_MAX`, other text, a BLOB) is NA and reported by row."""
    out, bad, examples = [], [], []
    for i, v in enumerate(s.tolist()):
        n = None
        if v is None or (isinstance(v, float) and math.isnan(v)):
            pass
        elif isinstance(v, bool):
            n = int(v)
        elif isinstance(v, int):
            n = v
        elif isinstance(v, float) and v.is_integer():
            n = int(v)
        elif isinstance(v, str) and _INT_TEXT.fullmatch(v):
            n = int(v)
        else:
            n = False  # not a whole number
        if n is not None and (n is False or abs(n) > INT64_MAX):
            bad.append(keys[i])
            examples.append(v)
            n = None
        out.append(n)
    if bad:
        shown = ", ".join(
            repr(v if not isinstance(v, (bytes, bytearray)) else bytes(v)[:20])[:40]
            for v in examples[:3]
        )
        problems.add(
            where,
            "bad_value",
            f"{what}: {len(bad)} value(s) not a whole number "
            f"within 64 bits, read as NA (e.g. {shown}; "
            f"{_rows(key, bad)})",
        )
    return pd.Series(pd.array(out, dtype="Int64"), index=s.index)


def _json_value(value: Any, problems: Problems, where: str, what: str, row: str) -> Any:
    if value is None or isinstance(value, (dict, list)):
        return value
    try:
        text = bytes(value).decode("utf-8") if isinstance(value, (bytes, bytearray)) else value
        doc, issues = _json.loads(text, reader="the Letta server", root=f"{what} of {row}")
    except RecursionError:
        problems.add(
            where, "bad_json", f"{what} of {row}: JSON nested too deeply to read; kept as text"
        )
        return value
    except (TypeError, ValueError):
        problems.add(where, "bad_json", f"{what} of {row}: not valid JSON; kept as text")
        return value
    for kind, message in issues:  # repeated keys, lone surrogates: read, and said
        problems.add(where, kind, message)
    return doc
