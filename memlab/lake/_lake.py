"""The Parquet lake: every frame of every store, partitioned by store kind and run date.

The layout (a few files per partition, a manifest per run date, how a run writes them and how
unchanged stores are reused) is :mod:`memlab.lake._layout`'s; this module makes each store's
frames ready for Parquet (:func:`write_store`, :func:`write_failure`: into a run's staging
folder, in the same hive layout) and reads tables back (:func:`read_lake`).

File names are a store id (staging) or the run id (the lake), never a name taken from the
store, so store-controlled text cannot steer where a file is written. Every row carries
``store_id``, ``store`` (display name) and ``store_path``; the partition columns
``store_kind`` and ``run_date`` live in the folder names only.

Dtypes are kept in the Arrow schema: categories (dictionaries), ``datetime64[ns, UTC]``, exact
64-bit integers, booleans, text; :func:`read_lake` gives them back as pandas' nullable dtypes.
Column names that differ only in case within one frame (frontmatter keys ``description`` and
``Description``: ``fm_description``, ``fm_Description``) would be one name to DuckDB and SQL, so
the all-lowercase one (else the first in sorted order) keeps its name and each other is written
as ``<name>__2``, ``<name>__3``, ...; a ``lake_renamed_column`` problem row records each
mapping. Columns of mappings (``metadata``, ``extra``) are stored as JSON text: their keys vary
from row to row and an empty mapping has no Parquet type. Frames of one kind can differ in
columns between stores (an
elfmem schema 1 database has fewer columns than a schema 9 one): read with
``union_by_name=true`` in DuckDB, or with :func:`read_lake`, which unifies the schemas.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.io import replacing_path
from memlab.lake._layout import written_as
from memlab.lake._paths import check_lake, regular_files

__all__ = [
    "TABLES",
    "store_id",
    "write_store",
    "write_failure",
    "read_lake",
    "lake_tables",
    "partition",
]

#: The tables of a lake besides ``frames/<name>``.
TABLES = ("headline", "problems", "failures")


def store_id(path: str | Path) -> str:
    """A stable id for a store: 16 hex digits of the SHA-256 of its absolute path."""
    return hashlib.sha256(str(Path(path).expanduser().absolute()).encode()).hexdigest()[:16]


def partition(lake: Path, table: str, kind: str | None, run_date: str) -> Path:
    """The partition folder of ``table`` for one kind and run date."""
    folder = lake / table
    if kind is not None:
        folder = folder / f"store_kind={_safe_value(kind)}"
    return folder / f"run_date={run_date}"


def _safe_value(value: str) -> str:
    # Kinds come from memlab's own registry, but a partition value is a path segment: keep it one.
    return "".join(c if c.isalnum() or c in "_-." else "_" for c in value) or "_"


def _with_store_columns(df: pd.DataFrame, sid: str, name: str, path: str) -> pd.DataFrame:
    out = df.copy()
    for col in ("store_id", "store", "store_path"):
        if col in out.columns:
            out = out.rename(columns={col: f"{col}_"})
    out.insert(0, "store_path", pd.array([path] * len(out), dtype="string"))
    out.insert(0, "store", pd.array([name] * len(out), dtype="string"))
    out.insert(0, "store_id", pd.array([sid] * len(out), dtype="string"))
    return out


def _is_mapping_column(values: pd.Series) -> bool:
    for v in values:
        if isinstance(v, dict):
            return True
        if isinstance(v, (list, tuple)) and any(isinstance(x, dict) for x in v):
            return True
    return False


def _as_json_text(values: pd.Series) -> pd.Series:
    return pd.Series(
        pd.array(
            [None if v is None else json.dumps(v, default=str, sort_keys=True) for v in values],
            dtype="string",
        ),
        index=values.index,
    )


def _arrow_ready(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Make a frame writable as Parquet without losing what it holds.

    Columns of mappings (``metadata``, ``extra``: keys vary row to row, and an empty mapping has
    no Parquet type) are stored as JSON text, by rule. Other object columns Arrow cannot type
    (mixed Python objects) also become JSON text, and their names are returned so the caller
    can record a problem row.
    """
    import pyarrow as pa

    out = df.copy()
    mixed: list[str] = []
    for col in df.columns:
        if df[col].dtype != object:
            continue
        if _is_mapping_column(df[col]):
            out[col] = _as_json_text(df[col])
            continue
        try:
            pa.array(df[col], from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
            out[col] = _as_json_text(df[col])
            mixed.append(str(col))
    return out, mixed


def _case_unique(df: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, str, str]]]:
    """Rename columns whose names differ only in case from another's (``fm_description`` and
    ``fm_Description``): DuckDB and SQL match column names case-insensitively, so
    ``SELECT fm_description`` could return either. In each such group the store columns
    (``store_id``, ``store``, ``store_path``), else the all-lowercase name, else the first in
    sorted order keeps its name; each other one gets ``__2``, ``__3``, ... Returns the frame and
    ``(kept, original, stored_as)`` per renamed column."""
    names = [str(c) for c in df.columns]
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(name.lower(), []).append(name)
    taken = {n.lower() for n in names}
    renames: dict[str, str] = {}
    notes: list[tuple[str, str, str]] = []
    for group in groups.values():
        if len(group) < 2:
            continue
        ordered = sorted(
            group, key=lambda n: (n not in ("store_id", "store", "store_path"), n != n.lower(), n)
        )
        for name in ordered[1:]:
            i = 2
            while f"{name}__{i}".lower() in taken:
                i += 1
            new = f"{name}__{i}"
            taken.add(new.lower())
            renames[name] = new
            notes.append((ordered[0], name, new))
    if not renames:
        return df, notes
    return df.rename(columns=renames), notes


def _write(df: pd.DataFrame, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with replacing_path(target) as tmp:
        df.to_parquet(tmp, index=False, engine="pyarrow")


def headline_frame(headline: dict[str, Any], extra: dict[str, Any]) -> pd.DataFrame:
    """One row from an audit's headline: booleans, integers, floats and text keep their types."""
    from memlab.audits._base import json_safe

    row = dict(json_safe(headline))
    row.pop("store", None)
    row.pop("kind", None)
    row = {**extra, **row}
    columns: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, bool):
            columns[key] = pd.array([value], dtype="boolean")
        elif isinstance(value, int):
            columns[key] = pd.array([value], dtype="Int64")
        elif isinstance(value, float):
            columns[key] = pd.array([value], dtype="Float64")
        elif value is None:
            columns[key] = pd.Series([None], dtype=object)  # Arrow null: unifies with any type
        else:
            columns[key] = pd.array(
                [value if isinstance(value, str) else json.dumps(value)], dtype="string"
            )
    return pd.DataFrame(columns)


def write_store(
    lake: Path,
    run_date: str,
    *,
    sid: str,
    name: str,
    path: str,
    kind: str,
    frames: dict[str, pd.DataFrame],
    problems: pd.DataFrame,
    headline: dict[str, Any] | None,
) -> list[str]:
    """Write one store's frames, problems and headline row; return the files written (relative)."""
    written: list[str] = []
    notes: list[dict[str, Any]] = []
    for frame_name, df in frames.items():
        ready, changed = _arrow_ready(df)
        for col in changed:
            notes.append(
                {
                    "file": None,
                    "line": None,
                    "kind": "lake_json_column",
                    "message": f"frame {frame_name!r} column {col!r} holds mixed Python "
                    f"objects; stored as JSON text",
                }
            )
        ready, renamed = _case_unique(_with_store_columns(ready, sid, name, path))
        for kept, original, stored in renamed:
            notes.append(
                {
                    "file": None,
                    "line": None,
                    "kind": "lake_renamed_column",
                    "message": f"frame {frame_name!r} column {original!r} differs from "
                    f"{kept!r} only in case (SQL names are case-insensitive); "
                    f"stored in the lake as {stored!r}",
                }
            )
        target = partition(lake, f"frames/{frame_name}", kind, run_date) / f"{sid}.parquet"
        _write(ready, target)
        written.append(str(target.relative_to(lake)))
    probs = problems
    if notes:
        extra = pd.DataFrame(notes)
        dtypes = {}
        for col, dtype in problems.dtypes.items():
            if isinstance(dtype, pd.CategoricalDtype) and col in extra.columns:
                # a category the loader never used (``lake_json_column``) must not become NaN
                new = [v for v in extra[col].dropna().unique() if v not in dtype.categories]
                dtype = pd.CategoricalDtype([*dtype.categories, *new], ordered=dtype.ordered)
                problems = problems.astype({col: dtype})
            dtypes[col] = dtype
        probs = pd.concat([problems, extra.astype(dtypes)], ignore_index=True)
    target = partition(lake, "problems", kind, run_date) / f"{sid}.parquet"
    _write(_with_store_columns(probs, sid, name, path), target)
    written.append(str(target.relative_to(lake)))
    if headline is not None:
        row = headline_frame(headline, {"store_id": sid, "store": name, "store_path": path})
        target = partition(lake, "headline", kind, run_date) / f"{sid}.parquet"
        _write(row, target)
        written.append(str(target.relative_to(lake)))
    return written


def write_failure(
    lake: Path,
    run_date: str,
    *,
    sid: str,
    path: str,
    kind: str | None,
    error_class: str,
    message: str,
) -> str:
    """One row naming a store that could not be loaded or audited, and why."""
    df = pd.DataFrame(
        {
            "store_id": pd.array([sid], dtype="string"),
            "store_path": pd.array([path], dtype="string"),
            "kind": pd.array([kind], dtype="string"),
            "error_class": pd.array([error_class], dtype="string"),
            "message": pd.array([message], dtype="string"),
        }
    )
    target = partition(lake, "failures", None, run_date) / f"{sid}.parquet"
    _write(df, target)
    return str(target.relative_to(lake))


def lake_tables(lake: str | Path) -> list[str]:
    """The tables a lake folder holds: ``headline``, ``problems``, ``failures`` (those present)
    and ``frames/<name>`` for every frame written."""
    root = Path(lake)
    out = [t for t in TABLES if (root / t).is_dir()]
    frames = root / "frames"
    if frames.is_dir():
        out += sorted(f"frames/{d.name}" for d in frames.iterdir() if d.is_dir())
    return out


def _nullable(arrow_type: Any) -> Any:
    """pandas' nullable dtype for an Arrow type (None: pyarrow's default conversion)."""
    import pyarrow as pa

    if pa.types.is_boolean(arrow_type):
        return pd.BooleanDtype()
    if pa.types.is_integer(arrow_type):
        return pd.api.types.pandas_dtype(
            f"{'U' if pa.types.is_unsigned_integer(arrow_type) else ''}Int{arrow_type.bit_width}"
        )
    if (
        pa.types.is_string(arrow_type)
        or pa.types.is_large_string(arrow_type)
        or pa.types.is_string_view(arrow_type)
    ):
        return pd.StringDtype()
    return None


def read_lake(lake: str | Path, table: str, *, run_date: str | None = None) -> pd.DataFrame:
    """Read one lake table (``headline``, ``problems``, ``failures`` or ``frames/<name>``) into
    one pandas frame.

    Files of one table may differ in columns (store kinds, schema versions): their Arrow
    schemas are unified (a column a file lacks is null in its rows) and each column comes back
    in pandas' nullable dtype for its unified Arrow type, the same for every store: integers
    ``Int64`` (exact: 2**53 + 1 stays 2**53 + 1), booleans ``boolean``, text ``string``,
    timestamps ``datetime64[ns, UTC]``, categories ``category``; floats ``float64`` (``Float64``
    where the writer made them so, as in ``headline``). A column that is an integer in one
    store and a float in another comes back float (Arrow's promotion). ``run_date`` picks one
    run; default: every run. Partition columns come back as ``store_kind`` and ``run_date``
    (``string``). A table the lake does not have is a :class:`~memlab.errors.MemlabError` naming
    the tables it has (``headline``, ``problems`` and ``failures`` are empty frames when the lake
    has none yet).

    Example::

        memlab.read_lake("reports/fleet", "headline", run_date="2026-12-01")
    """
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from memlab.errors import MemlabError

    base = Path(lake)
    if not base.is_dir():
        raise MemlabError(
            "no lake folder here",
            path=base,
            hint="give the folder `memlab fleet --out` or `export parquet --out` wrote",
        )
    check_lake(base, reading=True)  # no symlinked folder: nothing from outside the lake is read
    root = base / table
    known = table in TABLES
    parts = Path(table).parts
    valid = known or (len(parts) == 2 and parts[0] == "frames" and parts[1] not in ("..", "."))
    if not valid or (not known and not root.is_dir()):
        have = ", ".join(lake_tables(base)) or "none yet"
        raise MemlabError(f"the lake has no table {table!r} (it has: {have})", path=base)
    if not root.is_dir():
        return pd.DataFrame()
    files = [str(p) for p in regular_files(root, ".parquet")]  # a symlinked file is not read
    if run_date is not None:
        files = [f for f in files if f"run_date={run_date}" in Path(f).parts]
    if not files:
        return pd.DataFrame()
    schemas = [pq.read_schema(f) for f in files]
    try:
        unified = pa.unify_schemas(
            [s.remove_metadata() for s in schemas], promote_options="permissive"
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise MemlabError(
            f"the files of table {table!r} disagree on a column's type: {str(exc).splitlines()[0]}",
            path=root,
        ) from exc
    keys = [k.split("=", 1)[0] for k in Path(files[0]).relative_to(root).parts[:-1] if "=" in k]
    unified = pa.unify_schemas([unified, pa.schema([(k, pa.string()) for k in keys])])
    dataset = ds.dataset(
        files, schema=unified, format="parquet", partitioning="hive", partition_base_dir=str(root)
    )
    # No file's pandas metadata is applied: it describes that file's columns only, and applying
    # one file's to all of them turned integers into floats and booleans into objects.
    df = dataset.to_table().to_pandas(types_mapper=_nullable)
    recorded: dict[str, set[str]] = {}
    for schema in schemas:
        for col, dtypes in written_as(schema).items():
            recorded.setdefault(col, set()).update(dtypes)
    for col, dtypes in recorded.items():
        if col in df.columns and "Float64" in dtypes and df[col].dtype == "float64":
            df[col] = df[col].astype("Float64")
    for col in df.columns:  # text categories as the loaders make them: categories of ``string``
        dtype = df[col].dtype
        if (
            isinstance(dtype, pd.CategoricalDtype)
            and dtype.categories.dtype != pd.StringDtype()
            and pd.api.types.is_string_dtype(dtype.categories.dtype)
        ):
            df[col] = df[col].cat.set_categories(dtype.categories.astype(pd.StringDtype()))
    return df
