"""Where Souveraine agent dirs live on a machine (the ``souveraine`` kind's ``find``):
``~/.souveraine/agents/<id>/memory`` (a memory repository) and ``~/.pi/unified/agents/<id>``
(the unified inventory's agent dirs). An agent dir is named by the agent's id, which its
``agent.yaml`` repeats: a different id there is the row's problem."""

from __future__ import annotations

from typing import Any, Iterator

from memlab.kinds._base import Search
from memlab.sources._discover_rows import linked_row, row, subdirs

__all__ = ["find_souveraine"]


def find_souveraine(search: Search) -> Iterator[dict[str, Any]]:
    """Souveraine memory repos (``~/.souveraine/agents/<id>/memory``) and the unified
    inventory's agent dirs (``~/.pi/unified/agents/<id>``)."""
    home = search.home
    for agent_dir in subdirs(home / ".souveraine" / "agents"):
        memory = agent_dir / "memory"
        linked = linked_row(agent_dir.name, "souveraine", "souveraine", memory, [agent_dir, memory])
        if linked is not None:
            if memory.is_symlink() or memory.is_dir():
                yield linked
        elif memory.is_dir():
            yield row(
                agent_dir.name,
                "souveraine",
                "souveraine",
                memory,
                config=agent_dir / "agent.yaml",
                repos=[memory],
                named_by_id=True,
            )
    for agent_dir in subdirs(home / ".pi" / "unified" / "agents"):
        linked = linked_row(agent_dir.name, "souveraine", "souveraine", agent_dir, [agent_dir])
        if linked is not None:
            yield linked
            continue
        # The seed layout keeps system/ and memory/ side by side; git may sit at either level.
        yield row(
            agent_dir.name,
            "souveraine",
            "souveraine",
            agent_dir,
            config=agent_dir / "agent.yaml",
            repos=[agent_dir, agent_dir / "memory"],
            named_by_id=True,
        )
