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

    Example::

        store = memlab.load("~/.elfmem/databases/elfmem.db")
        store.blocks.status.value_counts()
    """
    evidence = kinds.detect(path)
    store = kinds.get(evidence.kind).load(evidence.source, **kwargs)
    store.meta["detected"] = evidence.as_dict()
    return store
