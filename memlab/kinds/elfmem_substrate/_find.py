"""Where elfmem markdown substrates live on a machine (the ``elfmem_substrate`` kind's
``find``): a folder holding ``.elfmem/memory`` or ``.elfmem/ledger``, searched up to
``search.max_depth`` levels below home."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

from memlab.kinds._base import Search
from memlab.sources._discover_rows import SKIP_DIRS, row

__all__ = ["find_elfmem_substrates"]


def find_elfmem_substrates(search: Search) -> Iterator[dict[str, Any]]:
    """Folders holding ``.elfmem/memory`` or ``.elfmem/ledger``, up to ``search.max_depth``
    levels below home (hidden and dependency folders skipped)."""
    home, max_depth = search.home, search.max_depth
    stack = [(home, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(
                    (e for e in it if e.is_dir(follow_symlinks=False)),
                    key=lambda e: e.name,
                    reverse=True,
                )
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.name == ".elfmem":
                if (path / "memory").is_dir() or (path / "ledger").is_dir():
                    # The substrate is usually committed with its project: look for the repo
                    # from the project folder up to the home folder, no further.
                    ups = [folder, *[p for p in folder.parents if p == home or home in p.parents]]
                    yield row(
                        folder.name or str(folder),
                        "elfmem_substrate",
                        "elfmem_substrate",
                        folder,
                        count_under=path,
                        repos=ups,
                        scope=path,
                    )
                continue
            if entry.name.startswith(".") or entry.name in SKIP_DIRS or depth >= max_depth:
                continue
            stack.append((path, depth + 1))
