"""Finding the stores a fleet run processes: :func:`scan` (the stores under folders, or in a
manifest), :func:`skipped_entries` (what the walk passes over without opening) and
:func:`walk_roots`, the one walk that gives both.

Example::

    memlab.lake.scan(["data/fleet"])[["path", "store_id"]]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from memlab._escape import terminal_line
from memlab.errors import FleetError, MemlabError, StoreNotFound
from memlab.kinds import detect
from memlab.lake._lake import store_id
from memlab.lake._run import MESSAGE_CHARS
from memlab.sources.discover import STORE_WALK_DEPTH, walk_stores

__all__ = ["scan", "skipped_entries", "walk_roots"]


def scan(
    roots: Iterable[str | Path] | str | Path | None = None,
    *,
    manifest: str | Path | None = None,
    max_depth: int = STORE_WALK_DEPTH,
) -> pd.DataFrame:
    """The stores a fleet run will process: columns ``path``, ``label``, ``store_id``.

    Under each root, every store some registered kind detects is one row
    (:func:`memlab.sources.discover.walk_stores`: a folder a kind claims is not looked into;
    hidden and dependency folders are skipped; symlinks are not followed). A root that is
    itself a store is that store. A manifest is a CSV or Parquet file with a ``path`` column
    (relative paths are relative to
    the manifest) and an optional ``label`` column.
    """
    return walk_roots(roots, manifest=manifest, max_depth=max_depth)[0]


def skipped_entries(
    roots: Iterable[str | Path] | str | Path | None, *, max_depth: int = STORE_WALK_DEPTH
) -> pd.DataFrame:
    """What the folder walk of :func:`scan` passes over without opening: columns ``path``,
    ``reason``, ``store_id``.

    The walk (:func:`memlab.sources.discover.walk_stores`) never follows a symbolic link and
    never opens a FIFO, socket or device file (reading a FIFO blocks); this lists each such
    entry in the folders the walk visits (hidden and dependency folders and the inside of a
    store are not visited), so a run can say what it did not read and why.
    """
    return walk_roots(roots, manifest=None, max_depth=max_depth, need_stores=False)[1]


def walk_roots(
    roots, *, manifest, max_depth: int, need_stores: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One walk of the roots: (the stores, as :func:`scan`; the entries passed over, as
    :func:`skipped_entries`)."""
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    if isinstance(roots, (str, Path)):
        roots = [roots]

    def on_skip(path: str, reason: str) -> None:
        skipped.append({"path": path, "reason": reason})

    for root in roots or []:
        r = Path(root).expanduser()
        if not r.exists():
            raise StoreNotFound("no such file or folder to look for stores in", path=r)
        try:
            detect(r)
            rows.append({"path": str(r), "label": None})
            continue
        except MemlabError:
            if not r.is_dir():
                raise
        rows.extend(
            {"path": str(e.source), "label": None}
            for e in walk_stores(r, max_depth=max_depth, on_skip=on_skip)
        )
    if manifest is not None:
        rows.extend(_read_manifest(Path(manifest).expanduser()))
    if not rows and need_stores:
        raise FleetError(
            "no stores to process",
            hint="give a folder that holds stores, or a manifest with a 'path' column",
        )
    df = pd.DataFrame(rows, columns=["path", "label"]).drop_duplicates("path")
    df = df.reset_index(drop=True).astype({"path": "string", "label": "string"})
    df["store_id"] = pd.array([store_id(p) for p in df["path"]], dtype="string")
    sk = pd.DataFrame(skipped, columns=["path", "reason"]).drop_duplicates("path")
    sk = sk.reset_index(drop=True).astype({"path": "string", "reason": "string"})
    sk["store_id"] = pd.array([store_id(p) for p in sk["path"]], dtype="string")
    return df, sk


def _read_manifest(path: Path) -> list[dict[str, Any]]:
    try:
        if path.suffix.lower() == ".parquet":
            df = pd.read_parquet(path)
        else:
            df = pd.read_csv(path, dtype="string", keep_default_na=False)
    except FileNotFoundError as exc:
        raise StoreNotFound("no such manifest", path=path) from exc
    except Exception as exc:  # pandas/pyarrow raise many kinds for a malformed file
        raise FleetError(
            f"cannot read the manifest: {terminal_line(exc, MESSAGE_CHARS)}", path=path
        ) from exc
    if "path" not in df.columns:
        raise FleetError(
            "the manifest has no 'path' column",
            path=path,
            hint="a CSV or Parquet file with columns path[,label]",
        )
    rows = []
    for i, rec in enumerate(df.to_dict("records")):
        value = rec.get("path")
        if value is None or str(value).strip() == "":
            raise FleetError(f"row {i + 1} has an empty path", path=path)
        p = Path(str(value)).expanduser()
        if not p.is_absolute():
            p = path.parent / p
        label = rec.get("label")
        rows.append({"path": str(p), "label": None if label in (None, "") else str(label)})
    return rows
