"""Report tables through the one HTML rule: every cell, index label and column name of a
DataFrame a report displays goes through :func:`memlab._escape.html` (``& < > " '`` escaped,
controls and bidi characters made visible), never pandas' own escaping alone (which leaves ESC,
NUL and U+2028 raw in the page).

A report notebook calls :func:`escape_tables` once; from then on IPython renders every displayed
DataFrame (``display(df)`` and a cell's last expression alike) with :func:`frame_html`.
"""

from __future__ import annotations

import datetime as _dt
import math
import numbers
from typing import Any

from memlab._escape import html as esc
from memlab.constants import MISSING_TEXT

__all__ = ["frame_html", "escape_tables", "human"]


def _cell(value: Any) -> Any:
    """A label as the page shows it: numbers and times as they are, missing values as
    :data:`~memlab.constants.MISSING_TEXT`, anything else (text, lists, dicts) as its text
    through :func:`memlab._escape.html`."""
    import pandas as pd

    if isinstance(value, (bool, numbers.Number, _dt.datetime, _dt.date, _dt.timedelta,
                          pd.Timestamp, pd.Timedelta)) and not _missing(value):
        return value
    if _missing(value):
        return MISSING_TEXT
    return esc(value)


def _missing(value: Any) -> bool:
    import pandas as pd

    if value is None:
        return True
    try:
        return bool(pd.api.types.is_scalar(value) and pd.isna(value))
    except (TypeError, ValueError):
        return False


def human(value: Any) -> str:
    """One value as a person reads it, HTML-safe: integers with thousands separators, other
    numbers to three significant figures (thousands and up rounded to whole numbers), times to
    the minute (a date alone at midnight), missing values as
    :data:`~memlab.constants.MISSING_TEXT`, and text through :func:`memlab._escape.html`."""
    import numpy as np
    import pandas as pd

    if _missing(value):
        return MISSING_TEXT
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        if abs(v) >= 1e-4:
            return f"{v:.3g}"
        return f"{v:.2e}"
    if isinstance(value, (pd.Timestamp, _dt.datetime)):
        ts = pd.Timestamp(value)
        if ts.tzinfo is not None:
            ts = ts.tz_convert("UTC")
        if (ts.hour, ts.minute, ts.second, ts.microsecond) == (0, 0, 0, 0):
            return ts.strftime("%Y-%m-%d")
        return ts.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, (pd.Timedelta, _dt.timedelta)):
        return esc(str(pd.Timedelta(value)).replace("0 days ", ""))
    return esc(value)


def _labels(index: Any) -> Any:
    import pandas as pd

    if isinstance(index, pd.MultiIndex):
        out = pd.MultiIndex.from_tuples([tuple(_cell(v) for v in t) for t in index],
                                        names=[_cell(n) if n is not None else None
                                               for n in index.names])
        return out if len(index) else index.set_names([_cell(n) if n is not None else None
                                                       for n in index.names])
    name = _cell(index.name) if index.name is not None else None
    if isinstance(index, pd.RangeIndex):
        return index.rename(name)
    return pd.Index([human(v) for v in index], name=name, dtype=object)


def frame_html(frame: Any) -> str:
    """``frame`` as a complete HTML table, for a person: every row and column (never pandas'
    ``...`` cut), inside a box that scrolls when the table is wider or taller than the page;
    every cell through :func:`human` (numbers formatted, missing values as "–", text escaped
    by :func:`memlab._escape.html`) and every label escaped."""
    import pandas as pd

    shown = pd.DataFrame({i: pd.Series([human(v) for v in frame.iloc[:, i].astype(object)],
                                       index=frame.index, dtype=object)
                          for i in range(frame.shape[1])}, index=frame.index)
    shown.columns = frame.columns
    shown.index = _labels(shown.index)
    shown.columns = _labels(shown.columns)
    table = shown.to_html(escape=False, notebook=True, max_rows=None, max_cols=None,
                          show_dimensions=False, na_rep=MISSING_TEXT)
    rows, cols = frame.shape
    caption = f"{rows:,} row{'s' if rows != 1 else ''} × {cols:,} column{'s' if cols != 1 else ''}"
    return (f'<div class="memlab-table">{table}</div>'
            f'<p class="memlab-dimensions">{caption}</p>')


def escape_tables(shell: Any = None) -> bool:
    """Make IPython render DataFrames with :func:`frame_html` (the running kernel's shell, or
    ``shell``). Returns False outside IPython, where nothing is rendered to HTML."""
    import pandas as pd

    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - reports always run in IPython
            return False
        shell = get_ipython()
    if shell is None:
        return False
    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame_html)
    return True
