"""Review: propose, never mutate (elfmem v2 re-evaluation §5.4).

    >>> proposal = memlab.review(store, near_duplicate=0.90, stale_after_days=90)
    >>> md = proposal.write("reviews/")          # review-YYYY-MM-DD.md + .json twin
    >>> # tick `- [x]` the items you want in the .md, then:
    >>> memlab.apply_proposal(md, dry_run=True)  # the diff; without dry_run, one commit

``review`` works on every store memlab loads; ``apply_proposal`` writes only to memory repos
(Letta Code memfs, Souveraine, elfmem substrate). Pinned, constitutional, read-only and identity
units are never proposed for removal, and apply refuses them even if asked.
"""

from __future__ import annotations

from memlab.review._apply import ApplyResult, apply_proposal
from memlab.review._build import review
from memlab.review._proposal import SECTIONS, Finding, Item, Proposal, read_proposal, ticked_ids
from memlab.review._units import units_of

__all__ = ["review", "Proposal", "Item", "Finding", "apply_proposal", "ApplyResult",
           "read_proposal", "ticked_ids", "units_of", "SECTIONS"]
