"""The Audit result shared by every audit (elfmem databases, memfs repos, agent files)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Audit", "frame_records", "json_safe"]


@dataclass
class Audit:
    """Evidence tables plus headline metrics for one store.

    ``tables`` are tidy DataFrames (one per question the audit answers); ``headline`` is a flat,
    JSON-safe dict of the numbers a comparison or a report trend needs; ``summary()`` is the
    printable text.
    """

    kind: str
    store_name: str
    tables: dict[str, pd.DataFrame]
    headline: dict[str, Any]
    summary_text: str = ""
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return self.summary_text

    def __str__(self) -> str:
        return self.summary_text

    def __repr__(self) -> str:
        return (
            f"<Audit {self.kind} {self.store_name}: {len(self.tables)} tables "
            f"({', '.join(list(self.tables)[:4])}{', ...' if len(self.tables) > 4 else ''}), "
            f"{len(self.headline)} headline metrics, {len(self.notes)} notes>"
        )

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]

    def to_json(self, tables: bool = False) -> str:
        """The headline and notes as JSON; ``tables=True`` adds every evidence table, each a
        list of row objects (what ``memlab audit --json`` prints: every row its text lists,
        the problems, constraint and integrity rows included)."""
        data = {
            "store": self.store_name,
            "kind": self.kind,
            "headline": json_safe(self.headline),
            "notes": self.notes,
        }
        if tables:
            data["tables"] = {name: frame_records(df) for name, df in self.tables.items()}
        return json.dumps(data, indent=2, sort_keys=True, allow_nan=False)


def frame_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A DataFrame as JSON-safe row objects: a named or non-default index becomes columns,
    missing values are null, timestamps ISO text, anything else JSON cannot hold its text."""
    if (
        df.index.name is not None
        or not isinstance(df.index, pd.RangeIndex)
        or isinstance(df.index, pd.MultiIndex)
    ):
        df = df.reset_index()
    df = df.loc[:, ~df.columns.duplicated()]

    def cell(value: Any) -> Any:
        if not isinstance(value, (list, tuple, dict, np.ndarray)) and pd.isna(value):
            return None
        value = json_safe(value.tolist() if isinstance(value, np.ndarray) else value)
        return (
            value
            if isinstance(value, (str, int, float, bool, list, dict, type(None)))
            else str(value)
        )

    return [{str(k): cell(v) for k, v in row.items()} for row in df.to_dict(orient="records")]


def json_safe(value: Any) -> Any:
    """Turn numpy / pandas scalars, NaN, infinities and timestamps into plain JSON values (NaN
    and infinities become null: JSON has no such numbers)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, pd.Timestamp):
        return None if pd.isna(value) else value.isoformat()
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, np.bool_):
        return bool(value)
    if value is pd.NA or value is pd.NaT:
        return None
    return value
