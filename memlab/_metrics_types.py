"""The metric record type (:mod:`memlab._metrics`' :class:`Metric`) and its formulas over a store's
headline fields (:class:`Ratio`, :class:`FirstOf`), with :func:`is_number`, what every formula
counts as a number. No record lives here (:mod:`memlab._metrics_records` holds them).

Example::

    from memlab._metrics import Ratio
    Ratio("archived_superseded", "blocks_archived").value({"archived_superseded": 41,
                                                           "blocks_archived": 42})  # 0.976...
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, TypeGuard, Union

import numpy as np
import pandas as pd

from memlab.constants import DOC_VALUES

__all__ = ["Metric", "Ratio", "FirstOf", "Formula", "is_number", "numeric_column"]


def is_number(v: Any) -> TypeGuard[float]:
    """A finite int or float, numpy's included (not a bool, not None, not NaN)."""
    return (
        isinstance(v, (int, float, np.integer, np.floating))
        and not isinstance(v, (bool, np.bool_))
        and math.isfinite(float(v))
    )


def numeric_column(df: pd.DataFrame, name: str) -> pd.Series:
    """Column ``name`` of ``df`` as floats (not a number: NaN; all NaN where ``df`` lacks it)."""
    if name in df.columns:
        return pd.to_numeric(df[name], errors="coerce").astype("float64")
    return pd.Series(np.nan, index=df.index, dtype="float64")


@dataclass(frozen=True)
class Ratio:
    """``numerator / denominator`` of two headline fields; None (not computable) when either is
    missing or not a number, or the denominator is not above 0."""

    numerator: str
    denominator: str

    @property
    def inputs(self) -> tuple[str, ...]:
        return (self.numerator, self.denominator)

    def value(self, fields: Mapping[str, Any]) -> float | None:
        a, b = fields.get(self.numerator), fields.get(self.denominator)
        if is_number(a) and is_number(b) and b > 0:
            return float(a) / float(b)
        return None

    def column(self, df: pd.DataFrame) -> pd.Series:
        den = numeric_column(df, self.denominator)
        return numeric_column(df, self.numerator) / den.where(den > 0)

    def __str__(self) -> str:
        return f"{self.numerator} / {self.denominator}"


@dataclass(frozen=True)
class FirstOf:
    """The first of ``names`` a store's headline has as a number (one figure across kinds that
    name it differently)."""

    names: tuple[str, ...]

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.names

    def value(self, fields: Mapping[str, Any]) -> float | None:
        for name in self.names:
            v = fields.get(name)
            if is_number(v):
                return float(v)
        return None

    def column(self, df: pd.DataFrame) -> pd.Series:
        out = numeric_column(df, self.names[0])
        for name in self.names[1:]:
            out = out.fillna(numeric_column(df, name))
        return out

    def __str__(self) -> str:
        return " else ".join(self.names)


Formula = Union[Ratio, FirstOf]


@dataclass(frozen=True)
class Metric:
    """One headline metric: its ``name`` (the key in every output), its ``definition`` (shown
    beside it), ``unit``, ``group``, the doc's value (``doc_value``, None where the doc gives
    none), and how it is obtained: ``formula`` over other headline fields, or ``how`` in words
    when an audit computes it from its tables. Which store kinds chart it is each kind's
    ``headline`` in :mod:`memlab.kinds`."""

    name: str
    definition: str
    unit: str
    group: str
    formula: Formula | None = None
    how: str = ""

    @property
    def doc_value(self) -> float | None:
        return DOC_VALUES.get(self.name)

    @property
    def computed(self) -> str:
        """How the metric is obtained, in words (its formula, or ``how``)."""
        return str(self.formula) if self.formula is not None else self.how

    @property
    def label(self) -> str:
        """What a reader knows the metric by: the definition's lead-in before its first ``:``
        ("limit ratio" of ``max_limit_ratio``), else the whole definition. No two records share
        one (a test holds them apart)."""
        lead, colon, _ = self.definition.partition(":")
        return lead if colon and "(" not in lead else self.definition
