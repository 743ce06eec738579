"""Where a Letta Code home is on a machine, for :func:`memlab.sources.discover.discover`:
``<home>/.letta``, and, for the user's own home, the folders Letta Code's environment
variables name (``LETTA_HOME``, which ``getLettaDir`` reads for its cron, locks and skills; the
agents' memory stays under ``~/.letta/agents``, as ``getAgentRootDir`` has it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

from memlab.kinds._base import Search
from memlab.kinds.letta_home._read import agent_roots, home_markers

__all__ = ["find_letta_homes"]


def _agents(home: Path) -> int:
    """The agent folders of both backends (:func:`._read.agent_roots`)."""
    n = 0
    for _, root in agent_roots(home):
        try:
            with os.scandir(root) as found:
                n += sum(1 for e in found if e.is_dir(follow_symlinks=False))
        except OSError:
            continue
    return n


def _beyond_repos(home: Path) -> bool:
    """The home holds more than the memory repositories discover lists one by one: Letta
    Code's settings or its reflection state (a real ``~/.letta`` has settings.json from the
    first run)."""
    return (home / "settings.json").is_file() or (home / "transcripts").is_dir()


def find_letta_homes(search: Search) -> Iterator[dict[str, Any]]:
    """One inventory row per Letta Code home found: ``path`` the home, ``name`` how many
    agents it holds and where its reflection state is (``LETTA_TRANSCRIPT_ROOT`` moves it).
    A ``.letta`` holding agents' memory repositories and nothing else is not listed: those
    repositories are, one row each, and the home would add nothing to them."""
    candidates = [search.home / ".letta"]
    if search.real_home:
        env = (os.environ.get("LETTA_HOME") or "").strip()
        if env:
            candidates.append(Path(env).expanduser())
    seen: set[str] = set()
    for home in candidates:
        key = os.path.abspath(home)
        if key in seen or home_markers(home) is None or not _beyond_repos(home):
            continue
        seen.add(key)
        name = f"Letta Code home, {_agents(home)} agent(s)"
        root = (os.environ.get("LETTA_TRANSCRIPT_ROOT") or "").strip()
        if search.real_home and root:
            name += f"; reflection state in {root} (LETTA_TRANSCRIPT_ROOT)"
        yield {"agent_id": None, "path": str(home), "name": name}
