"""Report tables through the one HTML rule: every cell, index label and column name of a
DataFrame a report displays goes through :func:`memlab._escape.html` (``& < > " '`` escaped,
controls and bidi characters made visible), never pandas' own escaping alone (which leaves ESC,
NUL and U+2028 raw in the page).

A report notebook calls :func:`escape_tables` once; from then on IPython renders every displayed
DataFrame (``display(df)`` and a cell's last expression alike) with :func:`frame_html`.
"""

from __future__ import annotations

import datetime as _dt
import numbers
from typing import Any

from memlab._escape import html as esc

__all__ = ["frame_html", "escape_tables"]


def _cell(value: Any) -> Any:
    """A value as the page shows it: numbers, times and missing values as pandas formats them,
    anything else (text, lists, dicts) as its text through :func:`memlab._escape.html`."""
    import pandas as pd

    if isinstance(value, (bool, numbers.Number, _dt.datetime, _dt.date, _dt.timedelta,
                          pd.Timestamp, pd.Timedelta)):
        return value
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return value
    return esc(value)


def _labels(index: Any) -> Any:
    import pandas as pd

    if isinstance(index, pd.MultiIndex):
        out = pd.MultiIndex.from_tuples([tuple(_cell(v) for v in t) for t in index],
                                        names=[_cell(n) for n in index.names])
        return out if len(index) else index.set_names([_cell(n) for n in index.names])
    if _plain(index):  # numbers, times: as pandas formats them
        return index.rename(_cell(index.name))
    return pd.Index([_cell(v) for v in index], name=_cell(index.name), dtype=object)


def _plain(values: Any) -> bool:
    """True for numbers, booleans and times (anything but text and objects)."""
    import pandas as pd

    return (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)
            or pd.api.types.is_datetime64_any_dtype(values)
            or pd.api.types.is_timedelta64_dtype(values))


def frame_html(frame: Any) -> str:
    """``frame`` as the HTML table a notebook shows (pandas' layout and display options), with
    every text cell and label escaped by :func:`memlab._escape.html`."""
    import pandas as pd

    shown = frame.copy()
    for i in range(shown.shape[1]):
        col = shown.iloc[:, i]
        if not _plain(col):
            shown.isetitem(i, pd.Series([_cell(v) for v in col.astype(object)],
                                        index=shown.index, dtype=object))
    shown.index = _labels(shown.index)
    shown.columns = _labels(shown.columns)
    return shown.to_html(escape=False, notebook=True,
                         max_rows=pd.get_option("display.max_rows"),
                         max_cols=pd.get_option("display.max_columns"),
                         show_dimensions=pd.get_option("display.show_dimensions"))


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
