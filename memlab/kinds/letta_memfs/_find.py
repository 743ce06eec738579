"""Where Letta Code memfs repositories live on a machine (the ``letta_memfs`` kind's ``find``):

========================================  ===================================
``~/.letta/agents/<id>/memory``           cloud backend
``~/.letta/lc-local-backend/memfs/<id>/memory``  local backend
``~/.letta/agents/<id>/<repo>``           a shared-memory repository mounted
                                          beside memory/ (``shared_repo``)
========================================  ===================================

Next to each ``memory/`` folder sit ``memory-worktrees/`` (reflection worktrees) and
``memory-backup-*`` (plain copies); they are not agents and are never listed.
"""

from __future__ import annotations

from typing import Any, Iterator

from memlab.kinds._base import Search
from memlab.kinds._memfs._find import memfs_layout
from memlab.kinds._memfs._locate import local_backend_dir, shared_memory_name
from memlab.sources._discover_rows import linked_row, row, subdirs

__all__ = ["find_letta_memfs"]


def find_letta_memfs(search: Search) -> Iterator[dict[str, Any]]:
    """Letta Code memfs repos: ``~/.letta/agents/<id>/memory`` and the local backend's."""
    home = search.home
    local = local_backend_dir(home / ".letta", own=search.real_home)
    for parent in (home / ".letta" / "agents", local / "memfs"):
        for agent_dir in subdirs(parent):
            memory = agent_dir / "memory"
            # Only <id>/memory is the repo; memory-worktrees/ and memory-backup-* beside it are
            # copies of it, never agents of their own.
            linked = linked_row(agent_dir.name, "letta_memfs", None, memory, [agent_dir, memory])
            if linked is not None:
                if memory.is_symlink() or memory.is_dir():
                    yield linked
            elif memory.is_dir():
                layout, note = memfs_layout(memory)
                yield row(agent_dir.name, "letta_memfs", layout, memory, repos=[memory], note=note)
            # Shared-memory repositories Letta Code mounts beside memory/ (cloud agents):
            # stores of the same agent, one row each.
            for shared in subdirs(agent_dir):
                if shared_memory_name(shared) is None or not (shared / ".git").exists():
                    continue
                linked = linked_row(agent_dir.name, "letta_memfs", None, shared, [shared])
                if linked is None:
                    layout, note = memfs_layout(shared)
                shared_row = (
                    linked
                    if linked is not None
                    else row(
                        agent_dir.name, "letta_memfs", layout, shared, repos=[shared], note=note
                    )
                )
                shared_row["shared_repo"] = shared.name
                yield shared_row
