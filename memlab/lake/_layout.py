"""The lake's layout: a few files per partition, a manifest per run date, reuse of unchanged stores.

Layout under the lake folder (hive partitioning: pandas, DuckDB and Polars read it as is)::

    frames/<frame>/store_kind=<kind>/run_date=<D>/part-<run id>-<n>.parquet
    headline/store_kind=<kind>/run_date=<D>/part-<run id>-<n>.parquet
    problems/store_kind=<kind>/run_date=<D>/part-<run id>-<n>.parquet
    failures/run_date=<D>/part-<run id>-<n>.parquet
    _manifests/run_date=<D>.json      the run that wrote D: run id, versions, files, partitions,
                                      and per store its path, kind, status, reuse key, digest,
                                      source version and partitions (places in that list)

``store_id`` is a column of every row, never a file name. A partition is one file, or a few:
a new file after :data:`~memlab.constants.LAKE_FILE_ROWS` rows, and one more per group of
stores whose columns cannot share one Arrow schema (a column that is text in one store and a
number in another; a column that is all null in a store takes the other stores' type).

How a run writes. Every task (a batch of stores) writes its stores' tables into
``.staging-<run id>/`` under the lake folder (one file per table and partition per batch,
:func:`merge_staged`; under the lake so every Dask worker sees it). When the tasks are done, the
client writes each partition of the run date in one pass
(:func:`compact`): this run's staged rows, then the rows it carries (below), into
``part-<run id>-*.parquet``; then it writes the date's manifest, removes every other Parquet
file of that date's partitions (an earlier run's that day, or the one-file-per-store layout of
memlab before this one) and the staging folder. Earlier run dates are never touched. A run
stopped between writing its files and removing the old ones leaves both in that date's
partitions until the next run on that date.

Reuse: rows are carried, not kept in a second layer. An unchanged store (the same reuse key:
memlab version, ``as_of`` and the fingerprint of its files, as in the last run's manifest) is
not read again: its rows are copied from the last run's files (a scan filtered on
``store_id``) into this run's. A separate compacted store-keyed layer would save that copy but
would be a second set of Parquet files every reader's glob has to exclude, and a date's view
would depend on files outside its partitions (deleting an old date would break a newer one);
the copy costs a read of the rows it copies, no load and no audit, and keeps every run date
self-contained. ``export_parquet`` (``keep_others``) carries every store of the date's
manifest it is not given, so it adds or replaces stores and removes none.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import secrets
import shutil
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from memlab._files import walk
from memlab.constants import LAKE_FILE_ROWS
from memlab.io import replacing, write_atomic
from memlab.lake._paths import check_lake, real_folder, remove_inside

__all__ = [
    "new_run_id",
    "staging_dir",
    "read_manifest",
    "latest_manifest",
    "compact",
    "MANIFEST_DIR",
    "written_as_key",
    "written_as",
    "versions",
    "source_version",
    "table_dirs",
    "merge_staged",
]

#: Folder of the manifests, one JSON file per run date.
MANIFEST_DIR = "_manifests"
#: Schema metadata key of the pandas dtypes each column was written as (see read_lake).
written_as_key = b"memlab.written_as"
_TABLE_ROOTS = ("frames", "headline", "problems", "failures")
#: A store file of the one-file-per-store layout (memlab before this one): a store id.
_LEGACY_FILE = re.compile(r"[0-9a-f]{16}\.parquet")
_MANIFEST_FORMAT = 1


def new_run_id() -> str:
    """A run id: UTC time to the second and 6 random hex digits (sortable, unique)."""
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{secrets.token_hex(3)}"


def staging_dir(lake: Path, run_id: str) -> Path:
    return lake / f".staging-{run_id}"


def _manifest_path(lake: Path, run_date: str) -> Path:
    return lake / MANIFEST_DIR / f"run_date={run_date}.json"


def read_manifest(lake: Path, run_date: str) -> dict[str, Any] | None:
    """The manifest of ``run_date`` (None: no run wrote one, or it is unreadable)."""
    try:
        doc = json.loads(_manifest_path(lake, run_date).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(doc, dict)
        or doc.get("format") != _MANIFEST_FORMAT
        or not isinstance(doc.get("stores"), dict)
        or not isinstance(doc.get("partitions"), list)
    ):
        return None
    names = doc["partitions"]
    try:  # each store names its partitions by their place in the manifest's list
        for entry in doc["stores"].values():
            entry["tables"] = [names[i] for i in entry.get("tables", [])]
    except (TypeError, IndexError, AttributeError):
        return None
    return doc


def latest_manifest(lake: Path) -> dict[str, Any] | None:
    """The manifest of the run that finished last (any date), whose files are all present."""
    folder = lake / MANIFEST_DIR
    if not folder.is_dir():
        return None
    found = []
    for p in folder.glob("run_date=*.json"):
        doc = read_manifest(lake, p.name[len("run_date=") : -len(".json")])
        if doc is not None:
            found.append(doc)
    for doc in sorted(found, key=lambda d: str(d.get("finished_at")), reverse=True):
        if all((lake / f).is_file() for f in doc.get("files", [])):
            return doc
    return None


# --------------------------------------------------------------------------- sources


def _partitions(root: Path) -> dict[str, list[Path]]:
    """Per partition folder relative to ``root`` (``frames/blocks/store_kind=x/run_date=D``),
    its Parquet files (not following symlinks)."""
    out: dict[str, list[Path]] = {}
    for table in _TABLE_ROOTS:
        for dirpath, dirnames, filenames in walk(root / table):
            dirnames.sort()
            files = sorted(Path(dirpath) / n for n in filenames if n.endswith(".parquet"))
            files = [f for f in files if not f.is_symlink() and f.is_file()]
            if files:
                out[str(Path(dirpath).relative_to(root))] = files
    return out


def _date_of(rel: str) -> str | None:
    for part in Path(rel).parts:
        if part.startswith("run_date="):
            return part[len("run_date=") :]
    return None


def _with_date(rel: str, run_date: str) -> str:
    parts = [f"run_date={run_date}" if p.startswith("run_date=") else p for p in Path(rel).parts]
    return str(Path(*parts))


def _loose(table: Any) -> tuple[Any, dict[str, Any]]:
    """The table's schema with every all-null column typed ``null`` (so it unifies with any
    other store's type), and the concrete types those columns had."""
    import pyarrow as pa

    fields, concrete = [], {}
    for i, f in enumerate(table.schema):
        col = table.column(i)
        if not pa.types.is_null(f.type) and col.null_count == len(col):
            fields.append(pa.field(f.name, pa.null()))
            concrete[f.name] = f.type
        else:
            fields.append(f.remove_metadata())
    return pa.schema(fields), concrete


def _conform(table: Any, schema: Any) -> Any:
    import pyarrow as pa

    cols = []
    names = set(table.column_names)
    for f in schema:
        if f.name in names:
            col = table.column(f.name)
            if col.type != f.type:
                col = pa.nulls(len(col), f.type) if col.null_count == len(col) else col.cast(f.type)
        else:
            col = pa.nulls(len(table), f.type)
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=schema)


def written_as(schema: Any) -> dict[str, set[str]]:
    """Per column, the pandas dtypes a writer recorded (pandas' own metadata, or ours)."""
    meta = schema.metadata or {}
    seen: dict[str, set[str]] = {}
    try:
        for col in json.loads(meta.get(b"pandas", b"{}")).get("columns", []):
            if isinstance(col.get("name"), str):
                seen.setdefault(col["name"], set()).add(str(col.get("numpy_type")))
        for name, types in json.loads(meta.get(written_as_key, b"{}")).items():
            seen.setdefault(str(name), set()).update(str(t) for t in types)
    except (ValueError, AttributeError, TypeError):
        pass
    return seen


class _Partition:
    """The rows one partition of this run will hold, as a list of sources (read twice: once
    for the schema, once to write, so the client holds one source's rows at a time)."""

    def __init__(self) -> None:
        #: ("file", path): a staged file, all its rows; ("carry", (path, ids)): the rows of
        #: those store ids in a lake file (ids None: all of them).
        self.sources: list[tuple[str, Any]] = []

    def read(self, source: tuple[str, Any]) -> Any:
        import pyarrow.parquet as pq

        how, what = source
        if how == "file":
            return pq.read_table(what)
        path, ids = what
        if ids is None:
            return pq.read_table(path)
        return pq.read_table(path, filters=[("store_id", "in", sorted(ids))])


def _groups(part: _Partition) -> list[tuple[Any, list[tuple[str, Any]], dict[str, set[str]]]]:
    """Sources grouped so each group's schemas unify (permissive promotion); per group the
    unified schema (all-null columns given a concrete type back) and the dtypes written as."""
    import pyarrow as pa

    groups: list[dict[str, Any]] = []
    sources = part.sources
    if any(how == "carry" for how, _ in sources):
        # A carried file may hold none of the carried stores: its columns are not theirs.
        # (One empty source stays if nothing else does, so the table keeps its schema.)
        sized = [(s, part.read(s).num_rows if s[0] == "carry" else 1) for s in sources]
        sources = [s for s, n in sized if n] or sources[:1]
    part.sources = sources
    for source in sources:
        table = part.read(source)
        loose, concrete = _loose(table)
        written = written_as(table.schema)
        for g in groups:
            try:
                g["schema"] = pa.unify_schemas([g["schema"], loose], promote_options="permissive")
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                continue
            break
        else:
            g = {"schema": loose, "sources": [], "concrete": {}, "written": {}}
            groups.append(g)
        g["sources"].append(source)
        for k, v in concrete.items():
            g["concrete"].setdefault(k, v)
        for k, v in written.items():
            g["written"].setdefault(k, set()).update(v)
        del table
    out = []
    for g in groups:
        fields = [
            pa.field(f.name, g["concrete"].get(f.name, f.type)) if pa.types.is_null(f.type) else f
            for f in g["schema"]
        ]
        out.append((pa.schema(fields), g["sources"], g["written"]))
    return out


def merge_staged(src: Path, dst: Path, name: str) -> list[str]:
    """Merge the per-store files staged under ``src`` into one file per partition under
    ``dst`` (``batch-<name>-<n>.parquet``, same partition folders); return them, relative to
    ``dst``. A fleet task of many stores leaves a few files, not one per store per table."""
    written: list[str] = []
    for rel, files in _partitions(src).items():
        part = _Partition()
        part.sources.extend(("file", f) for f in files)
        written.extend(_write_partition(dst, rel, part, name, prefix="batch"))
    return written


def _write_partition(
    lake: Path, rel: str, part: _Partition, run_id: str, *, prefix: str = "part"
) -> list[str]:
    import pyarrow.parquet as pq

    folder = real_folder(lake, lake / rel)  # no symlinked folder on the way (_paths)
    written: list[str] = []
    n = 0
    for schema, sources, dtypes in _groups(part):
        meta = {written_as_key: json.dumps({k: sorted(v) for k, v in sorted(dtypes.items())})}
        schema = schema.with_metadata(meta)
        writer: Any
        writer = target = stack = sink = None
        rows = 0

        def open_next():
            nonlocal writer, target, stack, rows, n, sink
            target = folder / f"{prefix}-{run_id}-{n}.parquet"
            n += 1
            rows = 0
            stack = ExitStack()  # the file replaces target when closed (memlab.io.replacing)
            sink = stack.enter_context(replacing(target))
            writer = pq.ParquetWriter(sink, schema)

        def close():
            writer.close()
            stack.close()
            written.append(str(target.relative_to(lake)))

        open_next()
        for source in sources:
            table = _conform(part.read(source), schema)
            if rows and rows + len(table) > LAKE_FILE_ROWS:
                close()
                open_next()
            writer.write_table(table)
            rows += len(table)
        close()
    return written


# --------------------------------------------------------------------------- one run


def _legacy_stores(lake: Path, run_date: str) -> dict[str, list[Path]]:
    """Store files of the one-file-per-store layout in ``run_date``'s partitions, per store id."""
    out: dict[str, list[Path]] = {}
    for rel, files in _partitions(lake).items():
        if _date_of(rel) != run_date:
            continue
        for f in files:
            if _LEGACY_FILE.fullmatch(f.name):
                out.setdefault(f.stem, []).append(f)
    return out


def _legacy_path(files: list[Path]) -> str | None:
    import pyarrow.parquet as pq

    for f in files:
        try:
            t = pq.read_table(f, columns=["store_path"])
            if len(t):
                return t.column(0)[0].as_py()
        except Exception:  # a file without the column (or unreadable): try the next one
            continue
    return None


def compact(
    lake: Path,
    run_date: str,
    run_id: str,
    *,
    stores: list[dict[str, Any]],
    previous: dict[str, Any] | None,
    keep_others: bool,
    info: dict[str, Any],
) -> tuple[list[str], pd.DataFrame]:
    """Write ``run_date``'s partitions from the staging folder and the carried rows, write the
    date's manifest, remove the date's other files and the staging folder.

    ``stores``: one entry per store of this run (``store_id``, ``path``, ``label``, ``kind``,
    ``status``, ``key``, ``digest``, ``source_version``, ``tables``); a ``reused`` one is
    carried from ``previous`` (the last run's manifest). ``keep_others``: also carry every
    store of the date's own manifest (or old layout) this run does not list (export);
    otherwise they are removed and returned. Returns (files written, stores removed:
    ``store_id``, ``store_path``, ``tables``).
    """
    check_lake(lake)  # before anything is written or removed
    staging = staging_dir(lake, run_id)
    parts: dict[str, _Partition] = {}
    for rel, files in _partitions(staging).items():
        part = parts.setdefault(rel, _Partition())
        part.sources.extend(("file", f) for f in files)
    current = read_manifest(lake, run_date) or {"stores": {}}
    listed = {s["store_id"] for s in stores}
    entries: dict[str, dict[str, Any]] = {}
    carry: dict[tuple[str, str], set[str]] = {}  # (source partition, target partition) -> ids

    def carry_from(doc: dict[str, Any], sid: str) -> None:
        entry = doc["stores"][sid]
        for rel in entry.get("tables", []):
            carry.setdefault((rel, _with_date(rel, run_date)), set()).add(sid)

    for s in stores:
        sid = s["store_id"]
        entry = {
            k: s.get(k)
            for k in (
                "path",
                "label",
                "kind",
                "status",
                "key",
                "digest",
                "source_version",
                "tables",
                "error_class",
            )
        }
        if s["status"] == "reused" and previous is not None and sid in previous["stores"]:
            prev = previous["stores"][sid]
            carry_from(previous, sid)
            entry.update(
                tables=[_with_date(t, run_date) for t in prev.get("tables", [])],
                source_version=prev.get("source_version"),
                digest=prev.get("digest"),
                carried_from=previous.get("run_date"),
            )
        entries[sid] = entry
    legacy = _legacy_stores(lake, run_date)
    removed: list[dict[str, Any]] = []
    for sid, entry in current["stores"].items():
        if sid in listed:
            continue
        if keep_others:
            carry_from(current, sid)
            entries[sid] = {**entry, "carried_from": run_date}
        else:
            removed.append(
                {
                    "store_id": sid,
                    "store_path": entry.get("path"),
                    "tables": len(entry.get("tables", [])),
                }
            )
    for sid, files in legacy.items():
        if sid in listed or sid in current["stores"]:
            continue
        if keep_others:
            for f in files:
                rel = str(f.parent.relative_to(lake))
                parts.setdefault(rel, _Partition()).sources.append(("carry", (f, None)))
            entries[sid] = {
                "path": _legacy_path(files),
                "status": "carried",
                "tables": sorted({str(f.parent.relative_to(lake)) for f in files}),
                "carried_from": run_date,
            }
        else:
            removed.append(
                {"store_id": sid, "store_path": _legacy_path(files), "tables": len(files)}
            )
    lake_parts = _partitions(lake)
    for (src, dst), ids in sorted(carry.items()):
        for f in lake_parts.get(src, []):
            if not f.name.startswith("."):
                parts.setdefault(dst, _Partition()).sources.append(("carry", (f, ids)))
    written: list[str] = []
    for rel in sorted(parts):
        written.extend(_write_partition(lake, rel, parts[rel], run_id))
    names = sorted({t for e in entries.values() for t in e.get("tables") or []})
    place = {t: i for i, t in enumerate(names)}
    stored = {
        sid: {**e, "tables": [place[t] for t in e.get("tables") or []]}
        for sid, e in entries.items()
    }
    manifest = {
        "format": _MANIFEST_FORMAT,
        "run_id": run_id,
        "run_date": run_date,
        **info,
        "finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
        "files": written,
        "partitions": names,
        "stores": stored,
    }
    target = _manifest_path(lake, run_date)
    real_folder(lake, target.parent)
    write_atomic(
        target, json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode("utf-8")
    )
    keep = {lake / f for f in written}
    for rel, files in _partitions(lake).items():
        if _date_of(rel) == run_date:
            for f in files:
                if f not in keep:
                    remove_inside(lake, f)  # a regular file in real folders of the lake only
    shutil.rmtree(staging, ignore_errors=True)
    gone = pd.DataFrame(removed, columns=["store_id", "store_path", "tables"])
    return written, gone.astype({"store_id": "string", "store_path": "string", "tables": "int64"})


def versions() -> dict[str, str]:
    """The versions a manifest records: memlab, Python, pandas, pyarrow."""
    import platform

    import pyarrow

    from memlab import __version__

    return {
        "memlab": __version__,
        "python": platform.python_version(),
        "pandas": pd.__version__,
        "pyarrow": pyarrow.__version__,
    }


def source_version(meta: dict[str, Any]) -> dict[str, Any]:
    """The version facts a loader recorded about its store (schema version, release, revision,
    layout): the scalar ``meta`` entries whose name says so."""
    words = ("version", "release", "revision", "schema", "layout", "flavour")
    return {
        k: v
        for k, v in sorted(meta.items())
        if any(w in k for w in words) and (v is None or isinstance(v, (str, int, float, bool)))
    }


def table_dirs(lake: Path, files: Iterable[str]) -> list[str]:
    return sorted({str(Path(f).parent) for f in files})
