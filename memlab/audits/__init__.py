"""Audits: one per store kind, behind :func:`audit`, and :func:`compare` across stores.

``audit(store_or_path)`` loads a path with :func:`memlab.sources.load` when needed and runs
the audit its kind declares in :mod:`memlab.kinds`: elfmem databases get
:func:`memlab.kinds.elfmem_db._audit.audit_elfmem` (the v2 doc's evidence set); Letta memfs,
Souveraine and elfmem substrate repos get :func:`memlab.kinds._memfs._audit.audit_memfs`; Letta
Agent Files and blocks lists get :func:`memlab.kinds.agent_file._audit.audit_agent_file`.

``compare(stores_or_paths)`` audits each and puts their headline metrics side by side, which
is what the doc's §10 asks for before its step 8: the same ``lifetime_token_usage`` and
``archive_reason`` breakdown from several instances.

``store_keys(stores)`` is the one rule that names each store of a multi-store result (the
rows of :func:`compare`, the keys of the audit report's ``metrics.json``): its name, told apart
by its folders only where two stores share a name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from memlab import kinds
from memlab.audits._base import Audit, frame_records
from memlab.store import Store

__all__ = ["audit", "compare", "store_keys", "Audit", "frame_records"]


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

    Rows are indexed by :func:`store_keys` (the store's name; with as many of its folders as
    tell it apart when two stores share a name); ``kind`` and ``path`` columns say what each
    row is.

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
    stores: list[Store] = []
    for item in items:
        store = _as_store(item)
        result = audit(store, as_of=as_of)
        row = {"kind": store.kind, "path": _location(store)}
        row.update({k: v for k, v in result.headline.items() if k not in ("store", "kind")})
        rows.append(row)
        stores.append(store)
    unique = store_keys(stores)
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    index = pd.Index(unique, name="store", dtype="string")
    return pd.DataFrame({c: _column([row.get(c) for row in rows]) for c in columns}, index=index)


def _location(store: Store) -> str:
    """Where a store was read from: its bundle file when it was unpacked from one."""
    return str(store.meta.get("bundle") or store.path)


def store_keys(stores: Sequence[Store]) -> list[str]:
    """One key per store, unique among ``stores`` and the same whatever their order, so a
    result naming several stores (the rows of :func:`compare`, the audit report's
    ``metrics.json``) never lets one store's figures overwrite another's.

    A store whose name (:attr:`Store.name`) no other store has keeps it: the keys of stores
    with different names are their names, as they always were. Stores that share a name get
    the end of their path, as many of its folders as tell each apart from the others of that
    name (``a/history.db``, ``b/history.db``; ``x/a/memory``, ``y/a/memory``); a store named
    other than its file (a repo by its agent's name) gets that path after its name
    (``ezra (a/memory)``). Only the same store given twice (nothing in its path tells the two
    apart) gets a count after its key the second time (``history.db (2)``).

    Example::

        stores = [memlab.load(p) for p in ("old/history.db", "new/history.db")]
        store_keys(stores)    # ['old/history.db', 'new/history.db']
    """
    names = [store.name for store in stores]
    places = [os.path.abspath(Path(_location(store)).expanduser()) for store in stores]
    trails = [[p for p in Path(place).parts if p != Path(p).anchor] for place in places]
    keys = list(names)
    for name in set(names):
        group = [i for i, n in enumerate(names) if n == name]
        if len(group) < 2:
            continue
        for i in group:
            trail = trails[i]
            others = [trails[j] for j in group if places[j] != places[i]]
            if not others:  # only itself, given again: no folder tells them apart
                continue
            own = bool(trail) and trail[-1] == name  # named by its file: show a folder too
            depth = 2 if own else 1
            while depth < len(trail) and any(t[-depth:] == trail[-depth:] for t in others):
                depth += 1
            end = "/".join(trail[-depth:])
            keys[i] = end if own else f"{name} ({end})"
    # Left alike only by the same store given twice (or names that look like paths): the
    # first by place keeps the key, the others get the first free count after it.
    used = set(keys)
    for key in sorted({k for k in keys if keys.count(k) > 1}):
        alike = sorted((i for i, k in enumerate(keys) if k == key), key=lambda i: places[i])
        for i in alike[1:]:
            count = 2
            while f"{key} ({count})" in used:
                count += 1
            keys[i] = f"{key} ({count})"
            used.add(keys[i])
    return keys


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
