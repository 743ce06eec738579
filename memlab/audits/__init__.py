"""Audits: one per store kind, behind :func:`audit`, and :func:`compare` across stores.

``audit(store_or_path)`` loads a path with :func:`memlab.sources.load` when needed and runs
the audit its kind declares in :mod:`memlab.kinds`: elfmem databases get
:func:`memlab.kinds.elfmem_db._audit.audit_elfmem` (the v2 doc's evidence set); Letta memfs,
Souveraine and elfmem substrate repos get :func:`memlab.kinds._memfs._audit.audit_memfs`; Letta
Agent Files and blocks lists get :func:`memlab.kinds.agent_file._audit.audit_agent_file`.

``compare(stores_or_paths)`` audits each and puts their headline metrics side by side, which
is what the doc's §10 asks for before its step 8: the same ``lifetime_token_usage`` and
``archive_reason`` breakdown from several instances.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from memlab import kinds
from memlab.audits._base import Audit, frame_records
from memlab.store import Store

__all__ = ["audit", "compare", "Audit", "frame_records"]


def _as_store(store_or_path: Store | str | Path) -> Store:
    if isinstance(store_or_path, Store):
        return store_or_path
    from memlab.sources import load

    return load(store_or_path)


def audit(
    store_or_path: Store | str | Path, *, as_of: Any = None, seconds_per_call: float | None = None
) -> Audit:
    """Audit one store (or the store at a path) with the audit for its kind.

    ``as_of`` is the date staleness is measured against (default: now, UTC);
    ``seconds_per_call`` is the LLM latency behind an elfmem database's GPU-hours (default
    :data:`memlab.constants.SECONDS_PER_CALL`); given for a kind whose audit does not take it, it
    is an
    :class:`~memlab.errors.UnknownOption`.

    Example::

        a = memlab.audit("data/demo/elfmem-demo.db", as_of="2026-08-04")
        print(a.summary())
    """
    store = _as_store(store_or_path)
    options = {} if seconds_per_call is None else {"seconds_per_call": seconds_per_call}
    return kinds.get(store.kind).audit(store, as_of=as_of, **options)


def compare(stores_or_paths: Iterable[Store | str | Path], *, as_of: Any = None) -> pd.DataFrame:
    """One row per store, its audit's headline metrics as columns (union across kinds).

    Rows are indexed by store name (made unique with the parent folder when two stores share
    a file name); ``kind`` and ``path`` columns say what each row is.

    Example::

        memlab.compare(["data/demo/elfmem-demo.db", "data/samples/elfmem/"
                        "elfmem-0.20.0-schema9.db"], as_of="2026-08-04")[
            ["archived_superseded", "archived_decayed", "llm_calls"]]
    """
    items = (
        list(stores_or_paths)
        if not isinstance(stores_or_paths, (str, Path, Store))
        else [stores_or_paths]
    )
    rows: list[dict[str, Any]] = []
    names: list[str] = []
    for item in items:
        store = _as_store(item)
        result = audit(store, as_of=as_of)
        row = {"kind": store.kind, "path": str(store.meta.get("bundle") or store.path)}
        row.update({k: v for k, v in result.headline.items() if k not in ("store", "kind")})
        rows.append(row)
        names.append(store.name)
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    unique = []
    for name, row in zip(names, rows):
        if seen[name] > 1:
            name = f"{Path(row['path']).parent.name}/{name}"
        while name in unique:
            name += "'"
        unique.append(name)
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    index = pd.Index(unique, name="store", dtype="string")
    return pd.DataFrame({c: _column([row.get(c) for row in rows]) for c in columns}, index=index)


def _column(values: list[Any]) -> Any:
    """A nullable column typed by what the headline holds, not by what the values happen to be
    (a ratio of 4.0 stays a float; a metric one store lacks is <NA>, not NaN-in-float)."""
    present = [v for v in values if v is not None and not (isinstance(v, float) and v != v)]
    if present and all(isinstance(v, bool) for v in present):
        return pd.array(values, dtype="boolean")
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.array(values, dtype="Int64")
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pd.array([None if v is None else float(v) for v in values], dtype="Float64")
    return pd.array([None if v is None else str(v) for v in values], dtype="string")
