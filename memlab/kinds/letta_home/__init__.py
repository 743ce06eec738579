"""The ``letta_home`` store kind: a Letta Code home (``~/.letta``) as a whole, written as a class
implementing :class:`~memlab.kinds.KindBase`.

A home holds every agent's memory repository (``agents/<id>/memory``, and the shared-memory
repositories beside it), the per-conversation reflection state (``transcripts/``), the
reflection and memory-worker worktrees (``agents/<id>/memory-worktrees/``) and the merges of
their branches. The loader (:mod:`._read`) reads all of it read-only, each memory repository
through :func:`memlab.load` as it loads alone; the audit (:mod:`._audit`) says whether
reflection works (stalled passes, worktrees left behind) and how memory is written (who writes
to shared repositories, case-colliding paths, letta-ai/letta-code#2906's unhealthy patterns).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from memlab.kinds._base import KindBase, Probe

__all__ = ["LettaHome"]


class LettaHome(KindBase):
    """A Letta Code home folder (``~/.letta``)."""

    name = "letta_home"
    display = "Letta Code home"
    # asked before the memfs kinds (letta_memfs 0, souveraine 10, elfmem_substrate 20): a home
    # is a folder of agents, never one agent's repository (the detector refuses a git repo)
    priority = 30
    load_ref = "memlab.kinds.letta_home._read:load_letta_home"
    audit_ref = "memlab.kinds.letta_home._audit:audit_letta_home"
    find_ref = "memlab.kinds.letta_home._find:find_letta_homes"
    reports = ("audit",)
    #: the metric records (memlab._metrics) a scheduled run charts for a home
    headline = (
        "reflection_stalled",
        "leftover_worktrees",
        "max_steps_over_trigger",
        "reflection_merge_share",
        "case_collisions",
        "unhealthy_writes",
    )

    def findings(self) -> Mapping[str, tuple[str, ...]]:
        """The finding tables of the home audit and the columns identifying a finding."""
        return MappingProxyType(
            {
                "reflection_stalled": ("agent_id", "conversation_id"),
                "leftover_worktree": ("agent_id", "name"),
                "case_collisions": ("agent_id", "repo", "key"),
                "unhealthy_writes": ("agent_id", "repo", "pattern", "path"),
            }
        )

    def detect(self, probe: Probe) -> str | None:
        """A folder with ``agents/`` and the Letta home markers (see
        :func:`._read.home_markers`); a git repository never."""
        if not probe.is_dir:
            return None
        from memlab.kinds.letta_home._read import home_markers

        found = home_markers(probe.path)
        return f"a Letta Code home: {found}" if found else None
