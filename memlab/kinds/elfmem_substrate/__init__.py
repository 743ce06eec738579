"""The ``elfmem_substrate`` store kind: elfmem's markdown substrate (``.elfmem/memory`` notes
and ``.elfmem/ledger`` logs, usually a folder of a project's git repository), written as a
class implementing :class:`~memlab.kinds.KindBase`.

It detects itself from the ``.elfmem`` folder's entries; it is loaded and audited by the
markdown-in-git family's loader and audit (``memlab/kinds/_memfs/``), which it shares with
``letta_memfs`` and ``souveraine``; what it alone holds, the substrate's blocks and ledger, is
parsed by :mod:`memlab.kinds.elfmem_substrate._parse`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from memlab.kinds._base import KindBase, Probe, Review
from memlab.kinds._shared import MEMFS_HEADLINE

__all__ = ["ElfmemSubstrate"]

_UNITS = "memlab.reviews._units"


class ElfmemSubstrate(KindBase):
    """An elfmem markdown substrate (an ``.elfmem`` folder with ``memory/`` or ``ledger/``)."""

    name = "elfmem_substrate"
    display = "elfmem markdown substrate"
    priority = 20
    load_ref = "memlab.kinds._memfs._load:load_memfs"
    audit_ref = "memlab.kinds._memfs._audit:audit_memfs"
    find_ref = "memlab.kinds.elfmem_substrate._find:find_elfmem_substrates"
    review = Review(
        units=f"{_UNITS}:substrate_units",
        share_of="all notes and log blocks",
        removal="memlab.reviews:ArchiveBlock",
        apply="memlab.reviews:GitCommit",
        stale_basis="no use/out/edit ledger event",
        drift="memlab.reviews:FileDrift",
        describe_file=True,
        project_folder=True,
    )
    reports = ("memfs", "review")
    headline = MEMFS_HEADLINE
    copy_of = "substrate"

    def detect(self, probe: Probe) -> str | None:
        """A folder that is, or holds, an ``.elfmem`` folder with ``memory/`` or ``ledger/``."""
        # elfmem's substrate keeps its blocks in .elfmem/memory and its ledger in
        # .elfmem/ledger; an .elfmem folder with neither (a config only) holds no memory
        # (discover's rule too).
        if not probe.is_dir:
            return None
        folder = probe.path if probe.path.name == ".elfmem" else probe.path / ".elfmem"
        found = next((s for s in ("memory", "ledger") if (folder / s).is_dir()), None)
        if found is None:
            return None
        if folder == probe.path:
            return f"an .elfmem folder with {found}/"
        return f"holds .elfmem/{found}/"

    def walked_folder(self, folder: Path) -> Mapping[str, Any] | None:
        """The row of a substrate folder a walk met: its layout as the loader names it."""
        from memlab.kinds._memfs._find import walked_row

        return walked_row(self.name, folder)
