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
import re
from typing import Any

from memlab._escape import html as esc
from memlab.constants import MISSING_TEXT

__all__ = ["frame_html", "escape_tables", "human", "empty_line", "titled", "EMPTY_MARK"]


def _cell(value: Any) -> Any:
    """A label as the page shows it: numbers and times as they are, missing values as
    :data:`~memlab.constants.MISSING_TEXT`, anything else (text, lists, dicts) as its text
    through :func:`memlab._escape.html`."""
    import pandas as pd

    if isinstance(
        value,
        (bool, numbers.Number, _dt.datetime, _dt.date, _dt.timedelta, pd.Timestamp, pd.Timedelta),
    ) and not _missing(value):
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
        out = pd.MultiIndex.from_tuples(
            [tuple(_cell(v) for v in t) for t in index],
            names=[_cell(n) if n is not None else None for n in index.names],
        )
        return (
            out
            if len(index)
            else index.set_names([_cell(n) if n is not None else None for n in index.names])
        )
    name = _cell(index.name) if index.name is not None else None
    if isinstance(index, pd.RangeIndex):
        return index.rename(name)
    return pd.Index([human(v) for v in index], name=name, dtype=object)


#: Column names whose numbers are shares of a whole (0..1), shown as percentages.
_SHARE = re.compile(r"(^|_)(share|rate|fraction|ratio_of_total)(_|$)")
#: A code span in a text cell (the reviews and the migration write ids as `...`), after escaping.
_CODE = re.compile(r"`([^`<>]+)`")
#: Written into an empty table's place; :func:`memlab.report._present.present` names it from the
#: heading above it when the frame carries no ``attrs["title"]``.
EMPTY_MARK = "memlab-empty"


def _column_name(label: Any) -> str:
    return str(label[-1] if isinstance(label, tuple) else label).lower()


def _share(value: Any) -> str:
    if _missing(value) or isinstance(value, (bool, str)) or not isinstance(value, numbers.Real):
        return human(value)
    return f"{human(float(value) * 100)}%"


def _text_cell(value: Any, width: int | None) -> str:
    """A text cell: cut to ``width`` characters on the raw text (pandas' ``max_colwidth``),
    THEN escaped, so a cut never splits an entity (``&quot…``); code spans become ``<code>``."""
    if isinstance(value, str):
        if width is not None and len(value) > width:
            value = value[: max(width - 1, 1)].rstrip()
            if value.count("`") % 2:  # a code span the cut opened and did not close
                value = value[: value.rfind("`")] + value[value.rfind("`") + 1 :]
            value += "…"
        return _CODE.sub(r"<code>\1</code>", esc(value))
    return human(value)


def _width() -> int | None:
    import pandas as pd

    width = pd.get_option("display.max_colwidth")
    return int(width) if width else None


def titled(frame: Any, title: str) -> Any:
    """``frame`` (a shallow copy) named ``title`` for the report: when it has no rows the page
    says "no <title> found" (:func:`empty_line`) instead of showing a header alone."""
    named = frame.copy(deep=False)
    named.attrs = {**frame.attrs, "title": title}
    return named


def empty_line(frame: Any) -> str:
    """An empty table as the one line a reader sees: "no <title> found", the title from
    ``frame.attrs["title"]`` (else filled in from the heading above it by the report)."""
    title = (getattr(frame, "attrs", None) or {}).get("title")
    text = f"no {esc(title)} found" if title else "none found"
    return f'<p class="{EMPTY_MARK}" data-named="{"yes" if title else "no"}">{text}</p>'


def frame_html(frame: Any) -> str:
    """``frame`` as a complete HTML table, for a person: every row and column (never pandas'
    ``...`` cut), inside a box that scrolls when the table is wider or taller than the page;
    every cell through :func:`human` (numbers formatted, missing values as "–", text cut to
    ``display.max_colwidth`` before it is escaped by :func:`memlab._escape.html`, shares as
    percentages) and every label escaped. A frame with no rows is one line, "no … found"
    (:func:`empty_line`), never a header alone."""
    import pandas as pd

    if len(frame) == 0:
        return empty_line(frame)
    width = _width()

    def column(i: int) -> list[str]:
        shown = (
            _share
            if _SHARE.search(_column_name(frame.columns[i]))
            else (lambda v: _text_cell(v, width))
        )
        return [shown(v) for v in frame.iloc[:, i].astype(object)]

    shown = pd.DataFrame(
        {i: pd.Series(column(i), index=frame.index, dtype=object) for i in range(frame.shape[1])},
        index=frame.index,
    )
    shown.columns = frame.columns
    shown.index = _labels(shown.index)
    shown.columns = _labels(shown.columns)
    with pd.option_context("display.max_colwidth", None):
        table = shown.to_html(
            escape=False,
            notebook=True,
            max_rows=None,
            max_cols=None,
            show_dimensions=False,
            na_rep=MISSING_TEXT,
        )
    rows, cols = frame.shape
    caption = f"{rows:,} row{'s' if rows != 1 else ''} × {cols:,} column{'s' if cols != 1 else ''}"
    return f'<div class="memlab-table">{table}</div><p class="memlab-dimensions">{caption}</p>'


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
    # A styled table (the simulation's fitness grids) shows a missing cell as "–" too, never
    # Python's "None" beside the "–" of the tables around it.
    pd.set_option("styler.format.na_rep", MISSING_TEXT)
    return True
