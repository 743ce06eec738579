"""The Parquet lake: every frame of every store, partitioned by store kind and run date.

Layout under the lake folder (hive partitioning, so pandas, DuckDB and Polars read it as is)::

    frames/<frame>/store_kind=<kind>/run_date=<YYYY-MM-DD>/<store_id>.parquet
    headline/store_kind=<kind>/run_date=<YYYY-MM-DD>/<store_id>.parquet   one row per store
    problems/store_kind=<kind>/run_date=<YYYY-MM-DD>/<store_id>.parquet   the loader's problems
    failures/run_date=<YYYY-MM-DD>/<store_id>.parquet                      stores that failed
    _state/<store_id>.json                                                 reuse key per store

File names are the store id (a hash of the store's absolute path), never a name taken from the
store, so store-controlled text cannot steer where a file is written. Every row carries
``store_id``, ``store`` (display name) and ``store_path``; the partition columns
``store_kind`` and ``run_date`` live in the folder names only.

Dtypes are kept through pandas' Arrow metadata: categories, ``datetime64[ns, UTC]``, nullable
``Int64``/``boolean``/``string``. Columns of mappings (``metadata``, ``extra``) are stored as JSON
text: their keys vary from row to row and an empty mapping has no Parquet type. Frames of one kind can differ in columns between stores (an
elfmem schema 1 database has fewer columns than a schema 9 one): read with
``union_by_name=true`` in DuckDB, or with :func:`read_lake`, which unifies the schemas.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

__all__ = ["TABLES", "store_id", "write_store", "write_failure", "read_lake", "partition"]

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
    return pd.Series(pd.array([None if v is None else json.dumps(v, default=str, sort_keys=True)
                               for v in values], dtype="string"), index=values.index)


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


def _write(df: pd.DataFrame, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    df.to_parquet(tmp, index=False, engine="pyarrow")
    os.replace(tmp, target)


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
            columns[key] = pd.array([value if isinstance(value, str) else json.dumps(value)],
                                    dtype="string")
    return pd.DataFrame(columns)


def write_store(lake: Path, run_date: str, *, sid: str, name: str, path: str, kind: str,
                frames: dict[str, pd.DataFrame], problems: pd.DataFrame,
                headline: dict[str, Any] | None) -> list[str]:
    """Write one store's frames, problems and headline row; return the files written (relative)."""
    written: list[str] = []
    notes: list[dict[str, Any]] = []
    for frame_name, df in frames.items():
        ready, changed = _arrow_ready(df)
        for col in changed:
            notes.append({"file": None, "line": None, "kind": "lake_json_column",
                          "message": f"frame {frame_name!r} column {col!r} holds mixed Python "
                                     f"objects; stored as JSON text"})
        target = partition(lake, f"frames/{frame_name}", kind, run_date) / f"{sid}.parquet"
        _write(_with_store_columns(ready, sid, name, path), target)
        written.append(str(target.relative_to(lake)))
    probs = problems
    if notes:
        probs = pd.concat([problems, pd.DataFrame(notes).astype(problems.dtypes.to_dict())],
                          ignore_index=True)
    target = partition(lake, "problems", kind, run_date) / f"{sid}.parquet"
    _write(_with_store_columns(probs, sid, name, path), target)
    written.append(str(target.relative_to(lake)))
    if headline is not None:
        row = headline_frame(headline, {"store_id": sid, "store": name, "store_path": path})
        target = partition(lake, "headline", kind, run_date) / f"{sid}.parquet"
        _write(row, target)
        written.append(str(target.relative_to(lake)))
    return written


def write_failure(lake: Path, run_date: str, *, sid: str, path: str, kind: str | None,
                  error_class: str, message: str) -> str:
    """One row naming a store that could not be loaded or audited, and why."""
    df = pd.DataFrame({
        "store_id": pd.array([sid], dtype="string"),
        "store_path": pd.array([path], dtype="string"),
        "kind": pd.array([kind], dtype="string"),
        "error_class": pd.array([error_class], dtype="string"),
        "message": pd.array([message], dtype="string"),
    })
    target = partition(lake, "failures", None, run_date) / f"{sid}.parquet"
    _write(df, target)
    return str(target.relative_to(lake))


def link_previous(lake: Path, files: Iterable[str], run_date: str) -> list[str]:
    """Carry a reused store's files into this run's partitions (hard links; copies if not possible)."""
    import shutil

    out: list[str] = []
    for rel in files:
        src = lake / rel
        parts = list(Path(rel).parts)
        parts = [f"run_date={run_date}" if p.startswith("run_date=") else p for p in parts]
        dst = lake.joinpath(*parts)
        if dst != src and src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            if dst.exists():
                dst.unlink()
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)
        out.append(str(dst.relative_to(lake)))
    return out


def read_lake(lake: str | Path, table: str, *, run_date: str | None = None) -> pd.DataFrame:
    """Read one lake table (``headline``, ``problems``, ``failures`` or ``frames/<name>``).

    Files of one table may differ in columns (store kinds, schema versions): their schemas are
    unified (missing columns become nulls, ints widen to floats where needed). ``run_date``
    picks one run; default: every run. Partition columns come back as ``store_kind`` and
    ``run_date``.

    Example::

        memlab.read_lake("reports/fleet", "headline", run_date="2026-12-01")
    """
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    root = Path(lake) / table
    if not root.is_dir():
        return pd.DataFrame()
    files = sorted(str(p) for p in root.rglob("*.parquet"))
    if run_date is not None:
        files = [f for f in files if f"run_date={run_date}" in Path(f).parts]
    if not files:
        return pd.DataFrame()
    schemas = [pq.read_schema(f) for f in files]
    unified = pa.unify_schemas(schemas, promote_options="permissive")
    keys = [k.split("=", 1)[0] for k in Path(files[0]).relative_to(root).parts[:-1] if "=" in k]
    unified = pa.unify_schemas([unified, pa.schema([(k, pa.string()) for k in keys])])
    dataset = ds.dataset(files, schema=unified.with_metadata(schemas[0].metadata),
                         format="parquet", partitioning="hive", partition_base_dir=str(root))
    return dataset.to_table().to_pandas()
