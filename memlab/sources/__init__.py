"""Read-only loaders, one per on-disk format, and :func:`load`, which picks the right one.

Which loader reads what is declared once, in :mod:`memlab.kinds`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memlab import kinds
from memlab.store import Store

__all__ = ["load"]


def load(path: str | Path, **kwargs: Any) -> Store:
    """Load any store memlab knows, read-only. Keyword arguments go to the specific loader;
    one it does not take is an :class:`~memlab.errors.UnknownOption` naming the kind.

    The kind is detected from content (:func:`memlab.kinds.detect`); what was seen is kept in
    ``store.meta["detected"]`` (``{"kind": ..., "evidence": ...}``).

    A git bundle of a memory repository loads as that repository at its ``main`` branch,
    unpacked into a private temporary folder that is removed once the store is no longer used
    (``store.meta["bundle"]`` names the bundle).

    Example::

        store = memlab.load("~/.elfmem/databases/elfmem.db")
        store.blocks.status.value_counts()
    """
    from memlab.sources._bundle import is_bundle

    if is_bundle(path):
        return _load_bundle(path, **kwargs)
    evidence = kinds.detect(path)
    store = kinds.get(evidence.kind).load(evidence.source, **kwargs)
    store.meta["detected"] = evidence.as_dict()
    return store


def _load_bundle(bundle: str | Path, **kwargs: Any) -> Store:
    import shutil
    import weakref

    from memlab.sources._bundle import private_unpack

    repo, folder = private_unpack(bundle)
    try:
        store = load(repo, **kwargs)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    store.meta["bundle"] = str(Path(bundle).expanduser().resolve())
    # the unpacked repository lives as long as the store (its history is read from it later)
    weakref.finalize(store, shutil.rmtree, str(folder), True)
    return store
