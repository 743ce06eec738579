"""The ``letta_memfs`` store kind: a Letta Code memfs repository (markdown memory files in
git, v1's ``memory/`` prefix or v2's ``system/`` tree with ``MEMORY.md``), written as a class
implementing :class:`~memlab.kinds.KindBase`.

It detects itself from the folder's entries (or a bare repository's layout); it is loaded and
audited by the markdown-in-git family's loader and audit (``memlab/kinds/_memfs/``), which it
shares with ``souveraine`` and ``elfmem_substrate``; its migrations move a memfs v1
repository to v2 (``"letta"``), verified as an upgrade, and any memfs repository to a Claude
Code memory folder (``"claude_memory"``, :mod:`._claude`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from memlab.kinds._base import KindBase, Probe, Review
from memlab.kinds._shared import MEMFS_FILES, MEMFS_HEADLINE

__all__ = ["LettaMemfs"]


class LettaMemfs(KindBase):
    """A Letta Code memfs repository (a working tree, a v1 copy without git, or a bare one)."""

    name = "letta_memfs"
    display = "Letta Code memfs repo"
    load_ref = "memlab.kinds._memfs._load:load_memfs"
    audit_ref = "memlab.kinds._memfs._audit:audit_memfs"
    find_ref = "memlab.kinds.letta_memfs._find:find_letta_memfs"
    review = Review(**MEMFS_FILES, rules="memlab.kinds.letta_memfs._rules:LettaHook")
    verify = "memlab.kinds.letta_memfs._claude:MemfsParity"
    reports = ("memfs", "review")
    headline = MEMFS_HEADLINE
    copy_of = "letta"
    migrations = {
        "letta": "memlab.kinds.letta_memfs._upgrade:plan_upgrade",  # memfs v1 -> v2
        "claude_memory": "memlab.kinds.letta_memfs._claude:plan_claude_memory",
    }
    default_target = "letta"

    def detect(self, probe: Probe) -> str | None:
        """A folder holding ``.git``, ``system``, ``.letta/config.json``, ``MEMORY.md`` or v1's
        ``memory/system``, or a bare git repository (its tree is checked when it is located).
        A ``.letta/`` with Letta Code's project settings alone (``settings.local.json``, which
        it writes into every working folder it runs in) is no memory."""
        found = probe.has(".git", "system", ".letta/config.json", "MEMORY.md")
        if not found and (probe.path / "memory" / "system").is_dir():
            found = "memory/system"  # v1's memory/ prefix layout, no git (a local-backend copy)
        if found:
            return f"holds {found}"
        # a bare repository (a server-side copy, a mirror): its tree is checked when it is
        # located
        if (
            probe.is_dir
            and (probe.path / "HEAD").is_file()
            and (probe.path / "objects").is_dir()
            and (probe.path / "refs").is_dir()
        ):
            return "a bare git repository"
        return None

    def walked_folder(self, folder: Path) -> Mapping[str, Any] | None:
        """The row of a memfs repository a walk met: its layout as the loader names it."""
        from memlab.kinds._memfs._find import walked_row

        return walked_row(self.name, folder)
