"""The frames a loader returns and the problems it found. Nothing format-specific lives here.

A :class:`Store` is what every loader in :mod:`memlab.sources` returns: a ``kind`` naming the
format, the ``path`` it was read from, a dict of typed pandas DataFrames, a ``problems`` frame
(file, line, kind, message) and a ``meta`` dict (schema version, ref, layout, ...).

Frames are reachable as attributes: ``store.blocks`` is ``store.frames["blocks"]``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

__all__ = [
    "Store",
    "Problems",
    "PROBLEM_COLUMNS",
    "utc_datetimes",
    "categories",
    "empty_frame",
    "parse_as_of",
    "token_estimate",
]

PROBLEM_COLUMNS = ["file", "line", "kind", "message"]


def _storable(text: str) -> str:
    """``text`` as a string column can hold it: a path ``os.fsdecode`` gave for a name that is
    not UTF-8 shows each bad byte as U+FFFD, and any other lone surrogate becomes U+FFFD
    (pyarrow refuses surrogates, and the whole frame would fail to build)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return os.fsencode(text).decode("utf-8", "replace")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


class Problems:
    """Collects what a loader found wrong without stopping it (elfmem's blockfile style)."""

    def __init__(self) -> None:
        self._rows: list[dict[str, Any]] = []

    def add(
        self, file: str | Path | None, kind: str, message: str, line: int | None = None
    ) -> None:
        self._rows.append(
            {
                "file": None if file is None else _storable(str(file)),
                "line": line,
                "kind": kind,
                "message": _storable(message),
            }
        )

    def extend(self, other: "Problems | pd.DataFrame") -> None:
        rows = other._rows if isinstance(other, Problems) else other.to_dict("records")
        self._rows.extend(rows)

    def __len__(self) -> int:
        return len(self._rows)

    def frame(self) -> pd.DataFrame:
        df = pd.DataFrame(self._rows, columns=PROBLEM_COLUMNS)
        df["file"] = df["file"].astype("string")
        df["line"] = df["line"].astype("Int64")
        df["kind"] = df["kind"].astype("category")
        df["message"] = df["message"].astype("string")
        return df


@dataclass
class Store:
    """Typed frames from one memory store, plus the problems found while reading it."""

    kind: str
    path: Path
    frames: dict[str, pd.DataFrame]
    problems: pd.DataFrame = field(default_factory=lambda: Problems().frame())
    meta: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> pd.DataFrame:
        # Only called when normal lookup fails: expose frames as attributes.
        frames = self.__dict__.get("frames", {})
        if name in frames:
            return frames[name]
        raise AttributeError(
            f"{type(self).__name__} of kind {self.__dict__.get('kind')!r} "
            f"has no frame {name!r}; frames: {sorted(frames)}"
        )

    def __dir__(self) -> Iterable[str]:
        return [*super().__dir__(), *self.frames]

    @property
    def name(self) -> str:
        """A short label for tables and plots: meta['name'] or the file/folder name."""
        return str(self.meta.get("name") or self.path.name)

    def counts(self) -> pd.Series:
        """Row count per frame (problems included), for a quick look."""
        counts = {name: len(df) for name, df in self.frames.items()}
        counts["problems"] = len(self.problems)
        return pd.Series(counts, name=self.name)

    def __repr__(self) -> str:
        shape = ", ".join(f"{k}={len(v)}" for k, v in self.frames.items())
        return f"<Store {self.kind} {self.path} ({shape}; problems={len(self.problems)})>"


def utc_datetimes(values: pd.Series) -> pd.Series:
    """Parse ISO-8601 text (with or without offset) to ``datetime64[ns, UTC]``.

    elfmem writes ``isoformat()`` with ``+00:00``; SQLite's CURRENT_TIMESTAMP writes naive UTC
    (read as UTC). Unparseable text and dates outside the nanosecond range (1677-2262) become
    NaT; callers that must not lose them record a problem row for each NaT they did not have.
    """
    parsed = pd.to_datetime(values, utc=True, errors="coerce", format="ISO8601")
    if isinstance(parsed, pd.DatetimeIndex):
        parsed = pd.Series(parsed, index=values.index)
    lo, hi = pd.Timestamp.min.tz_localize("UTC"), pd.Timestamp.max.tz_localize("UTC")
    in_range = parsed.isna() | ((parsed >= lo) & (parsed <= hi))
    return parsed.where(in_range).astype("datetime64[ns, UTC]")


#: A date written with the day or month first (08/04/2026, 8.4.26, 08-04-2026): ambiguous.
_NUMERIC_DATE = re.compile(r"^\s*\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}\b")


def parse_as_of(as_of: Any) -> pd.Timestamp:
    """The date staleness is measured against: ``None`` -> now (UTC, whole seconds); a date,
    datetime or ISO text -> a tz-aware UTC timestamp. A day-or-month-first date such as
    ``08/04/2026`` is refused as ambiguous; anything else that is not a date is
    InvalidArgument."""
    from memlab.errors import InvalidArgument

    if as_of is None:
        return pd.Timestamp.now(tz="UTC").floor("s")
    if isinstance(as_of, str) and _NUMERIC_DATE.match(as_of):
        # 08/04/2026 is 4 August to some readers and 8 April to others: never guess
        raise InvalidArgument(
            f"as_of {as_of!r} is ambiguous (day and month could be either way round)",
            hint="give the date as YYYY-MM-DD, e.g. 2026-08-04",
        )
    try:
        ts = pd.Timestamp(as_of)
    except (ValueError, TypeError, OverflowError) as exc:
        raise InvalidArgument(
            f"as_of {as_of!r} is not a date",
            hint="give a date such as 2026-08-04 or an ISO timestamp",
        ) from exc
    if pd.isna(ts):
        raise InvalidArgument(
            f"as_of {as_of!r} is not a date", hint="give a date such as 2026-08-04"
        )
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def categories(values: pd.Series) -> pd.Series:
    """Enumerations as every loader types them: categories whose values are ``string``."""
    return values.astype("string").astype("category")


def empty_frame(dtypes: dict[str, str]) -> pd.DataFrame:
    """An empty frame with the given column dtypes, so absent tables still have a schema."""
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in dtypes.items()})


def token_estimate(chars: pd.Series | int) -> Any:
    """The elfmem v2 doc's convention: tokens ~ chars / :data:`memlab.constants.CHARS_PER_TOKEN`."""
    from memlab.constants import CHARS_PER_TOKEN

    if isinstance(chars, pd.Series):
        return chars / CHARS_PER_TOKEN
    return np.float64(chars) / CHARS_PER_TOKEN
