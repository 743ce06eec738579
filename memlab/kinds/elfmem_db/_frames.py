"""Frames from typed columns, for :mod:`memlab.kinds.elfmem_db._load`.

A frame in :data:`~memlab.kinds.elfmem_db._schema.FRAME_TABLES` order, with an all-NA column
of the documented dtype for whatever the database lacks; the one-row ``config`` frame from
``system_config``; ``blocks.embedding`` decoded into float32 vectors; the character counts; and
the check of the active-hour clock columns.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from memlab.formats import _json
from memlab.kinds.elfmem_db._schema import (
    BLOB,
    CAT,
    CONFIG_TYPED,
    DTYPES,
    FLOAT,
    FRAME_TABLES,
    INT,
    TOKEN_KEYS,
    q,
)
from memlab.kinds.elfmem_db._values import as_text, int_mapper

if TYPE_CHECKING:
    from memlab.kinds.elfmem_db._load import Reader

__all__ = ["rows_frame", "decode_embeddings", "config_frame", "check_clock", "char_count"]


def _empty_column(kind: str, n: int) -> pd.Series:
    if kind == CAT:
        return pd.Series(
            pd.Categorical([None] * n, dtype=pd.CategoricalDtype(pd.Index([], dtype="string")))
        )
    if kind == BLOB:
        return pd.Series([None] * n, dtype="object")
    return pd.Series(index=pd.RangeIndex(n), dtype=DTYPES[kind])


def rows_frame(
    reader: Reader, name: str, schema: dict[str, list[str]], extra: Sequence[tuple[str, str]] = ()
) -> pd.DataFrame:
    table, spec = FRAME_TABLES[name]
    spec = [*spec, *extra]
    present = schema.get(table)
    if present is None:
        return pd.DataFrame({c: _empty_column(k, 0) for c, k in spec})
    typed = reader.read(name, table, spec, present)
    n = (
        len(next(iter(typed.values())))
        if typed
        else reader.rows(f"SELECT COUNT(*) FROM {q(table)}")[0][0]
    )
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


def decode_embeddings(blobs: pd.Series, reader: Reader, ids: pd.Series) -> pd.Series:
    """float32 vectors from elfmem's ``np.float32(...).tobytes()`` blobs; None where absent."""
    out = np.empty(len(blobs), dtype=object)
    if isinstance(blobs.dtype, pd.ArrowDtype):
        arr = pa.array(blobs.array)
        chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
        matrix = _same_width_matrix(chunks)
        if matrix is not None:
            # Rows are views of one float32 matrix: one copy of the data, no object per blob.
            present = (
                np.concatenate([c.is_valid().to_numpy(zero_copy_only=False) for c in chunks])
                if chunks
                else np.zeros(0, bool)
            )
            for at, row in zip(np.flatnonzero(present), matrix):
                out[at] = row
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
        reader.problem(
            "bad_embedding",
            f"blocks.embedding: {len(bad)} value(s) are not whole "
            f"float32 vectors, read as None (ids {bad[:3]})",
        )
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
        offsets = np.frombuffer(
            chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1, offset=4 * chunk.offset
        )
        # Null slots may in principle own bytes; only a gapless buffer can be read as a block.
        if int(offsets[-1] - offsets[0]) != width * len(lengths):
            return None
        total += len(lengths)
    if width is None:
        return None
    matrix = np.empty((total, width // 4), dtype=np.float32)
    row = 0
    for chunk in chunks:
        offsets = np.frombuffer(
            chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1, offset=4 * chunk.offset
        )
        start, stop = int(offsets[0]), int(offsets[-1])
        k = (stop - start) // width
        if k:
            matrix[row : row + k] = np.frombuffer(
                chunk.buffers()[2], dtype="<f4", count=(stop - start) // 4, offset=start
            ).reshape(k, width // 4)
            row += k
    return matrix


def config_frame(raw: list[tuple[Any, Any]], reader: Reader) -> pd.DataFrame:
    """system_config as one typed row; lifetime_token_usage unpacked into counts."""
    values = {str(k): v for k, v in raw}
    cols: dict[str, pd.Series] = {}
    for key, kind in CONFIG_TYPED:
        v = values.get(key)
        typed = _plain_number(kind, v)
        cols[key] = reader._type_values("config", key, kind, [v]) if typed is None else typed
    usage: dict[str, Any] = {}
    text = values.get("lifetime_token_usage")
    if text is not None:
        try:
            if isinstance(text, (bytes, bytearray)):
                text = bytes(text).decode("utf-8")
            parsed, issues = _json.loads(
                text, reader="elfmem", root="system_config.lifetime_token_usage"
            )
            for kind, message in issues:  # repeated keys, lone surrogates: read, and said
                reader.problem(kind, message)
            if not isinstance(parsed, dict):
                raise ValueError(f"a JSON {type(parsed).__name__}, not an object")
            usage = parsed
        except (ValueError, TypeError, RecursionError) as exc:
            reader.problem(
                "bad_json",
                f"system_config.lifetime_token_usage is not a JSON "
                f"object ({exc}); token and call counts read as NA",
            )
    for key in TOKEN_KEYS:
        v = usage.get(key)
        if isinstance(v, bool) or (v is not None and not isinstance(v, (int, float, str))):
            v = repr(v)
        typed = _plain_number(INT, v)
        cols[key] = (
            reader._type_values("config", f"lifetime_token_usage.{key}", INT, [v])
            if typed is None
            else typed
        )
    for key in sorted(usage):
        if key not in TOKEN_KEYS:
            cols[f"lifetime_{key}"] = pd.Series(
                [
                    as_text(usage[key])
                    if not isinstance(usage[key], (dict, list))
                    else json.dumps(usage[key])
                ],
                dtype="string",
            )
    typed_keys = {k for k, _ in CONFIG_TYPED} | {"lifetime_token_usage"}
    for key in sorted(values):
        if key not in typed_keys and key not in cols:
            cols[key] = pd.Series([as_text(values[key])], dtype="string")
    return _assemble(cols, 1)


_PLAIN_INT = re.compile(r"-?[0-9]{1,15}")


def _plain_number(kind: str, v: Any) -> pd.Series | None:
    """The one-value Series ``_type_values`` gives for the plainest values of an INT or FLOAT
    key (missing, a Python int below 2**53, a float for FLOAT, the text of a plain integer of
    at most 15 digits), made directly; None for anything else, which _type_values decides."""
    if kind not in (INT, FLOAT):
        return None
    number: int | float | None
    if v is None:
        number = None
    elif type(v) is int and abs(v) < 2**53:
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


#: Columns on elfmem's active-hour clock: a count of hours, so finite and never negative.
_CLOCK_COLUMNS = (
    ("blocks", "last_reinforced_at"),
    ("sessions", "start_active_hours"),
    ("config", "total_active_hours"),
)


def check_clock(frames: dict[str, pd.DataFrame], reader: Reader) -> None:
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
            reader._report_bad(
                name,
                col,
                hours[bad],
                "not an active-hour count (finite, under 1e15, never negative)",
            )
            frame[col] = hours.mask(bad)


def char_count(text: pd.Series) -> pd.Series:
    if isinstance(text.dtype, pd.StringDtype) and text.dtype.storage == "pyarrow":
        lengths = pc.utf8_length(pa.array(text.array))
        return lengths.to_pandas(types_mapper=int_mapper).astype("Int64")
    return text.str.len().astype("Int64")
