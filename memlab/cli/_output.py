"""What the commands share for printing and reading their arguments."""

from __future__ import annotations

import json

from memlab.errors import InvalidArgument

__all__ = [
    "jsonable",
    "output_folder",
    "parse_params",
    "print_frame",
    "split_list",
    "visible_cells",
]


def output_folder(path, *, option: str = "the output folder"):
    """``path`` as a folder to write into, checked before any work: it is a folder, or it can
    be created as one (its nearest existing parent is a folder this process may write).
    Raises :class:`~memlab.errors.InvalidArgument` naming the path otherwise, so a long run
    never ends in a traceback because of where its result was to go."""
    import os
    from pathlib import Path

    from memlab.errors import InvalidArgument

    folder = Path(path).expanduser()
    if os.path.lexists(folder) and not folder.is_dir():
        raise InvalidArgument(
            f"{option} must be a folder; this is a file",
            path=folder,
            hint="name a folder; it is created if absent",
        )
    probe = folder.absolute()
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise InvalidArgument(
            f"{option} cannot be created: {probe} is not a folder",
            path=folder,
            hint="name a folder; it is created if absent",
        )
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InvalidArgument(
            f"{option} cannot be written: permission denied on {probe}",
            path=folder,
            hint="name a folder you can write",
        )
    return folder


def print_frame(df, as_json: bool) -> None:
    import pandas as pd

    if as_json:
        if df.index.name is not None:  # a named index (compare's store) is part of each row
            df = df.reset_index()
        print(df.to_json(orient="records", date_format="iso", indent=2))
    else:
        from memlab._terminal import terminal_width

        # For reading: timestamps to the minute, columns with nothing in them left out (--json
        # keeps everything). Wrapped to the terminal (100 columns without one).
        df = df.copy()
        for col in df.columns:
            if isinstance(df[col].dtype, pd.DatetimeTZDtype) or df[col].dtype.kind == "M":
                df[col] = df[col].dt.strftime("%Y-%m-%d %H:%M").astype("string")
        if len(df):
            df = df.loc[:, [c for c in df.columns if df[c].notna().any()]]
        df = visible_cells(df)
        with pd.option_context(
            "display.max_rows", 200, "display.max_columns", 50, "display.max_colwidth", 48
        ):
            print(df.to_string(line_width=terminal_width(), max_colwidth=48))


def visible_cells(df):
    """Every text cell, column name and index label a :func:`memlab._escape.terminal_line`:
    a name an agent wrote (an agent.yaml ``name``, a file name) cannot recolour the terminal,
    move its cursor or start a line of its own (pandas escapes ``\\n`` but not ESC or U+2028)."""
    from memlab._escape import terminal_line

    def cell(value):
        return terminal_line(value) if isinstance(value, str) else value

    import pandas as pd

    df = df.rename(columns=cell, index=cell)
    for col in df.columns:
        series = df[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(object)
        if series.dtype == object or str(series.dtype) == "string":
            df[col] = series.map(cell, na_action="ignore")
    return df


def split_list(value: str | None) -> list[str] | None:
    """``"S1, S3"`` -> ``["S1", "S3"]``; nothing given -> None (the library's "all")."""
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def parse_params(pairs: list[str]) -> dict:
    """NAME=VALUE pairs, each VALUE read as YAML so numbers and booleans keep their type (a
    date stays the ISO text it was written as: notebooks take dates as strings)."""
    import datetime as dt

    from memlab.formats._yaml import read_yaml

    params = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise InvalidArgument(f"parameter {pair!r} is not NAME=VALUE")
        read = read_yaml(value)
        if not read.ok:
            raise InvalidArgument(
                f"parameter {name!r}: {value!r} is not a YAML value ({read.problem})",
                hint="quote text: -p 'name=\"text\"'",
            )
        parsed = read.value
        params[name] = value.strip() if isinstance(parsed, (dt.date, dt.datetime)) else parsed
    return params


def jsonable(value) -> bool:
    try:
        json.dumps(value, default=str)
        return True
    except (TypeError, ValueError):
        return False
