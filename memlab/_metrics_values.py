"""A metric's value: from a store's headline fields (:func:`value`, :func:`derive`), as a column
of a headline table (:func:`column`), and the one ``max_limit_ratio`` of a store's blocks or
files (:func:`max_limit_ratio`), each by the records of :mod:`memlab._metrics_records`.

Example::

    from memlab._metrics import value
    value("supersession_share", {"archived_superseded": 41, "blocks_archived": 42})  # 0.976...
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from memlab._metrics_records import METRICS
from memlab._metrics_types import FirstOf, Ratio, numeric_column

__all__ = ["value", "derive", "column", "max_limit_ratio"]


def value(name: str, fields: Mapping[str, Any]) -> Any:
    """The value of metric ``name`` from a store's headline ``fields``: its formula's (None
    when the inputs are missing), or ``fields[name]`` for a metric an audit computes."""
    m = METRICS[name]
    if m.formula is None:
        return fields.get(name)
    return m.formula.value(fields)


def max_limit_ratio(chars: pd.Series, limits: pd.Series) -> float | None:
    """The ``max_limit_ratio`` of a store's blocks or files: the largest ``chars / limit`` over
    those whose limit is above 0 (a limit of 0 or below is a problem row: nothing fits it, and a
    ratio to it means nothing), over 1 when one is over its limit. ``chars`` is the kind's own
    count, the one its limit checks compare. None when nothing has a limit above 0 (not
    checked, never 0), and None when one that has one has no known count (a value past
    memlab's cap, not read): the maximum would hold it, so any number would be a guess.

    Example::

        max_limit_ratio(store.blocks["chars"], store.blocks["limit"])
    """
    limit = pd.to_numeric(limits, errors="coerce").astype("float64")
    has = limit > 0
    if not has.any():
        return None
    counted = pd.to_numeric(chars, errors="coerce").astype("float64")[has]
    if counted.isna().any():
        return None
    return float((counted / limit[has]).max())


def derive(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` plus every :class:`Ratio` metric it lacks whose two inputs it has: how a
    ``metrics.json`` written before the audit recorded a metric gets the audit's value (the
    same formula). Cross-kind figures (:class:`FirstOf`) are not added to a store's fields."""
    out = dict(fields)
    for name, m in METRICS.items():
        if (
            isinstance(m.formula, Ratio)
            and name not in out
            and all(i in out for i in m.formula.inputs)
        ):
            out[name] = m.formula.value(out)
    return out


def column(name: str, headline: pd.DataFrame) -> pd.Series:
    """Metric ``name`` as a float column of a headline table (one row per store): the table's
    own column where a store has it, else the formula over its other columns (a lake written
    before the audit recorded ``name``)."""
    m = METRICS[name]
    own = numeric_column(headline, name)
    if m.formula is None:
        return own
    if isinstance(m.formula, FirstOf) and m.formula.names[0] == name:
        return m.formula.column(headline)
    recorded = (
        headline[name].notna()
        if name in headline.columns
        else pd.Series(False, index=headline.index)
    )
    return own.where(recorded, m.formula.column(headline))
