"""The ``souveraine`` store kind: a Souveraine agent dir (``agent.yaml`` beside a memfs
tree, in a folder named by the agent's id), written as a class implementing
:class:`~memlab.kinds.KindBase`.

It detects itself from its ``agent.yaml``; it is loaded and audited by the markdown-in-git
family's loader and audit (``memlab/kinds/_memfs/``), which it shares with ``letta_memfs`` and
``elfmem_substrate``; review checks Souveraine's rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from memlab.kinds._base import KindBase, Probe, Review
from memlab.kinds._shared import MEMFS_FILES, MEMFS_HEADLINE

__all__ = ["Souveraine"]


class Souveraine(KindBase):
    """A Souveraine agent dir (a folder holding ``agent.yaml``)."""

    name = "souveraine"
    display = "Souveraine agent dir"
    priority = 10
    load_ref = "memlab.kinds._memfs._load:load_memfs"
    audit_ref = "memlab.kinds._memfs._audit:audit_memfs"
    find_ref = "memlab.kinds.souveraine._find:find_souveraine"
    review = Review(**MEMFS_FILES, rules="memlab.kinds.souveraine._rules:SouveraineRules")
    reports = ("memfs", "review")
    headline = MEMFS_HEADLINE
    copy_of = "souveraine"

    def detect(self, probe: Probe) -> str | None:
        """A folder holding ``agent.yaml``."""
        return "holds agent.yaml" if probe.has("agent.yaml") else None

    def walked_folder(self, folder: Path) -> Mapping[str, Any] | None:
        """The row of an agent dir a walk met: its layout as the loader names it; the folder
        is named by the agent's id, which its ``agent.yaml`` repeats."""
        from memlab.kinds._memfs._find import walked_row

        return walked_row(self.name, folder, named_by_id=True)
