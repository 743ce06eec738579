"""A Claude Code memory folder -> Letta Code memfs (v2 by default), through memlab's one memfs
writer (:mod:`memlab.migrations._letta`, :mod:`memlab.migrations._letta_v2`).

The folder's ``blocks`` frame is the mapping: ``MEMORY.md`` becomes the block ``MEMORY``, which
Letta Code 0.34.12 writes as the root ``MEMORY.md`` with the index's text as the whole file (so
its links to ``<stem>.md`` still resolve); each topic file becomes the block labelled with its
path without ``.md``, written as the root file ``<stem>.md`` (a sub-folder's ``/`` becomes
``_``, as Letta names it) with Letta's ``name`` and the topic's ``description``; its body is
the value. What a memfs file cannot hold (the Claude ``name``, ``type`` and the frontmatter as
written) goes to the side file ``.memlab/letta-blocks.json`` in each block's ``metadata``.
``--verify`` compares every block with its file, as for an Agent File's blocks.

One difference is the target's, and said here rather than hidden: Claude Code loads only the
index at the start of a session and reads a topic file when it needs it; Letta Code's root
files are all core memory, in the prompt every turn. A folder whose files add up past Letta's
65,536-character core budget is migrated whole with the planner's ``core_total_raised``
warning (``maxCoreMemoryCharacters`` set to its size), never cut.

A folder with a file memlab did not read (a symbolic link, a file past the size cap) or read
with U+FFFD (not UTF-8) is refused, naming the file: the migration would lose or change it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memlab.errors import MigrationError
from memlab.store import Store

__all__ = ["check_migratable", "REFUSED_PROBLEMS"]

#: Load problems that make a faithful migration impossible.
REFUSED_PROBLEMS = ("symlink", "oversized", "unreadable", "bad_text")


def check_migratable(store: Store, source: Path) -> None:
    """MigrationError naming the first file the migration would lose or change."""
    problems = store.problems
    bad = problems[problems["kind"].astype(str).isin(REFUSED_PROBLEMS)]
    if len(bad):
        row: Any = bad.iloc[0]
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise MigrationError(
            f"{row['file']}: {row['message']}{more}; migrating would lose or change it",
            path=source,
            hint="fix or remove the file (memlab audit lists every problem), then migrate",
        )
