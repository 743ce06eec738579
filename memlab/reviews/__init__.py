"""Review: propose, never mutate (elfmem v2 re-evaluation §5.4).

    >>> proposal = memlab.review(store, near_duplicate=0.90, stale_after_days=90)
    >>> md = proposal.write("reviews/")          # review-YYYY-MM-DD.md + .json twin
    >>> # tick `- [x]` one option per choice in the .md, then:
    >>> memlab.apply_proposal(md, dry_run=True)  # the diff; without dry_run, one commit

``review`` works on every store memlab loads and re-measures all its evidence on the current
text. A proposal is a ranked list of choices (keep A / keep B / keep both / merge), the top
``TOP_N`` in full and a summary of the rest. ``apply_proposal`` commits to memory repos (Letta
Code memfs, Souveraine, elfmem substrate) and, for an elfmem database, writes a script that makes
the ticked changes through elfmem's own API; it never writes the database itself. Pinned,
constitutional, read-only and identity
units are never proposed for removal, and apply refuses them even if asked.
"""

from __future__ import annotations

from memlab.kinds.letta_memfs._rules import LettaHook
from memlab.kinds.souveraine._rules import SouveraineRules
from memlab.reviews._adapters import (
    AgentLimits,
    ArchiveBlock,
    ByHand,
    Checklist,
    DeleteFile,
    ElfmemEdit,
    ElfmemScript,
    FileDrift,
    Forget,
    GitCommit,
    InLetta,
    SeedDrift,
    SetBody,
)
from memlab.reviews._apply import ApplyResult, apply_proposal
from memlab.reviews._apply_edits import Edits
from memlab.reviews._build import review
from memlab.reviews._markdown import ticked_ids
from memlab.reviews._proposal import (
    SECTIONS,
    TOP_N,
    Choice,
    Finding,
    Item,
    Proposal,
    read_proposal,
)
from memlab.reviews._units import UNIT_COLUMNS, units_frame, units_of

__all__ = [
    "review",
    "Proposal",
    "Choice",
    "Item",
    "Finding",
    "TOP_N",
    "apply_proposal",
    "ApplyResult",
    "read_proposal",
    "ticked_ids",
    "units_of",
    "units_frame",
    "UNIT_COLUMNS",
    "SECTIONS",
    # review behaviour (the protocols are memlab.kinds'): memlab's own objects
    "Edits",
    "Forget",
    "ArchiveBlock",
    "DeleteFile",
    "ByHand",
    "InLetta",
    "ElfmemEdit",
    "SetBody",
    "GitCommit",
    "ElfmemScript",
    "Checklist",
    "SeedDrift",
    "FileDrift",
    "LettaHook",
    "SouveraineRules",
    "AgentLimits",
]
