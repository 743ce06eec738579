"""Unix seconds from a store (git commit and reflog times, file times) -> pandas UTC timestamps.

pandas holds nanoseconds in an int64: 1677-09-21 to 2262-04-11. A commit dated year 3000, or
a reflog line with a 20-digit time, is a time a store can hold and pandas cannot; converting it
raised ``OutOfBoundsDatetime`` (or ``OverflowError``) out of every loader. Here such a value is
NaT, and the caller learns which values those were so it can write a problem row naming them.
Every conversion of store seconds goes through :func:`utc_seconds` (a frame column) or
:func:`utc_second` (one value).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

__all__ = ["FIRST_SECOND", "LAST_SECOND", "seconds", "utc_seconds", "utc_second", "out_of_range"]

#: The first and last whole Unix seconds pandas' ``datetime64[ns]`` holds.
FIRST_SECOND = -(-pd.Timestamp.min.value // 1_000_000_000)
LAST_SECOND = pd.Timestamp.max.value // 1_000_000_000

_DTYPE = "datetime64[ns, UTC]"


def seconds(value: Any) -> int | None:
    """``value`` (int, float, str or bytes of an integer, git's ``%ct``) as whole seconds, or
    None when it is not one. Any size: a 20-digit time is an int, not an error."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return int(value) if np.isfinite(value) else None
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("ascii", "replace")
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in "+-" else text
        if digits.isascii() and digits.isdigit() and len(digits) <= 4300:
            return int(text)
        return None
    return None


def utc_second(value: Any) -> pd.Timestamp | None:
    """One time: a UTC timestamp, or None when it is missing or outside pandas' range."""
    s = seconds(value)
    if s is None or not FIRST_SECOND <= s <= LAST_SECOND:
        return None
    return pd.Timestamp(s, unit="s", tz="UTC")


def utc_seconds(values: Sequence[Any]) -> tuple[pd.Series, list[int]]:
    """A ``datetime64[ns, UTC]`` series of ``values`` (Unix seconds; None is NaT) and the
    positions of the values given that are not a time pandas holds (outside 1677-2262, or not
    an integer): NaT in the series, for the caller's problem rows."""
    n = len(values)
    try:
        arr = np.asarray(values, dtype="int64")  # the common case: all ints, all in int64
        if arr.shape != (n,):
            raise ValueError
        given = np.ones(n, dtype=bool)
    except (OverflowError, ValueError, TypeError):
        parsed = [seconds(v) for v in values]
        given = np.array([v is not None for v in values], dtype=bool)
        fits = np.array(
            [p is not None and FIRST_SECOND <= p <= LAST_SECOND for p in parsed], dtype=bool
        )
        arr = np.array([p if ok else 0 for p, ok in zip(parsed, fits)], dtype="int64")
        ok = fits
    else:
        ok = (arr >= FIRST_SECOND) & (arr <= LAST_SECOND)
    ns = np.where(ok, arr, 0) * np.int64(1_000_000_000)
    out = pd.Series(pd.to_datetime(ns, unit="ns", utc=True)).astype(_DTYPE)
    out[~ok] = pd.NaT
    return out, [int(i) for i in np.flatnonzero(given & ~ok)]


def out_of_range(value: Any) -> str:
    """The words of a problem row for a time :func:`utc_seconds` made NaT."""
    s = seconds(value)
    shown = str(value)[:40] if s is None else (str(s) if len(str(s)) <= 40 else f"{str(s)[:37]}...")
    if s is None:
        return f"time {shown!r} is not a whole number of seconds; left empty (NaT)"
    return (
        f"time {shown} s since 1970 is outside what pandas holds (1677-09-21 to "
        f"2262-04-11); left empty (NaT)"
    )
