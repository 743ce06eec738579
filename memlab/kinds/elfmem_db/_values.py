"""Typing and checking stored values, for :mod:`memlab.kinds.elfmem_db._load`.

:class:`Typer` (the base of the loader's ``Reader``) turns a column, read through Arrow or
value by value through :mod:`sqlite3`, into its typed pandas Series: dates parsed, categories
in their known order, numbers checked. A value that cannot be typed becomes NA and a
``bad_value`` problem; text that is not UTF-8 is repaired with U+FFFD and a ``bad_text``
problem. The module-level helpers find and repair bad UTF-8 in Arrow string arrays, map
Arrow types to pandas dtypes and give any stored value as text.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from memlab.constants import INT64_MAX
from memlab.kinds.elfmem_db._schema import BLOB, BOOL, CAT, FLOAT, INT, KNOWN_CATEGORIES, STR, UTC
from memlab.store import Problems, utc_datetimes

__all__ = ["Typer", "int_mapper", "as_text"]


class Typer:
    """Types the columns of one source's tables; reports bad values to ``problems``."""

    def __init__(self, source: Path, problems: Problems) -> None:
        self.source = source
        self.problems = problems

    def problem(self, kind: str, message: str) -> None:
        self.problems.add(self.source, kind, message)

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
            fixed: list[Any] = []
            bad: list[Any] = []
            start = 0
            for chunk in column.chunks:
                positions = _bad_utf8(chunk)
                fixed.append(_repair_utf8(chunk, positions) if positions else chunk)
                bad.extend(start + i for i in positions)
                start += len(chunk)
            if bad:
                found[c] = bad
                tbl = tbl.set_column(
                    tbl.schema.get_field_index(c), c, pa.chunked_array(fixed, type=column.type)
                )
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
            return pd.Series(arr.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype="float64")
        if kind == INT:
            return arr.to_pandas(types_mapper=int_mapper)
        if kind == BOOL:
            return arr.to_pandas(types_mapper=int_mapper).astype("boolean")
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
            text = pd.Series([as_text(v) for v in values], dtype="string")
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
            self._report_bad(
                frame, col, raw[bad], "not a number" if kind == FLOAT else "not an integer"
            )
        if kind == FLOAT:
            return pd.Series(nums.astype("float64"), dtype="float64")
        ints = (
            pd.array(nums.astype("float64"), dtype="Int64")
            if len(nums)
            else pd.array([], dtype="Int64")
        )
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
        known = KNOWN_CATEGORIES.get((frame, col))
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
        known = KNOWN_CATEGORIES.get((frame, col))
        cats = [str(c) for c in values.cat.categories]
        order = (known + sorted(set(cats) - set(known))) if known else sorted(cats)
        if known and frame == "blocks" and col == "status":
            unknown = values[values.notna() & ~values.isin(known)]
            if len(unknown):
                self.problem(
                    "unknown_value",
                    f"{len(unknown)} blocks have a status elfmem does not write: "
                    f"{sorted(set(map(str, unknown)))}; kept as is",
                )
        # not astype(): pandas treats unordered dtypes with the same set as equal, keeping the
        # old order
        return values.cat.set_categories(pd.Index(order, dtype="string"))

    def _report_text(
        self, table: str, col: str, key: str, keys: list, n: int | None = None
    ) -> None:
        n = len(keys) if n is None else n
        shown = ", ".join(repr(str(k)) if k is not None else "NULL" for k in keys[:5])
        more = f" and {n - 5} more" if n > 5 else ""
        self.problem(
            "bad_text",
            f"{table}.{col}: {n} value(s) are not valid UTF-8, read with "
            f"U+FFFD for the bad bytes (rows with {key} {shown}{more})",
        )

    def _report_bad(self, frame: str, col: str, bad: pd.Series, what: str) -> None:
        examples = ", ".join(repr(v) for v in bad.head(3).tolist())
        self.problem(
            "bad_value", f"{frame}.{col}: {len(bad)} value(s) {what}, read as NA (e.g. {examples})"
        )


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
    repaired = pa.array(
        [raw[i].as_py().decode("utf-8", "replace").encode("utf-8") for i in positions],
        type=pa.binary(),
    )
    return pc.replace_with_mask(raw, pa.array(mask), repaired).cast(chunk.type)


def _string_mapper(t: pa.DataType):
    return pd.StringDtype("pyarrow") if t in (pa.string(), pa.large_string()) else None


def int_mapper(t: pa.DataType):
    return pd.Int64Dtype() if pa.types.is_integer(t) else None


def as_text(v: Any) -> Any:
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
