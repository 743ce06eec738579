"""What more than one built-in kind declares alike (the agent file kinds' review adapter,
headline metrics and migrations; the memfs kinds' review adapter fields and headline metrics;
the first byte of JSON text), kept once for the kinds' modules and packages."""

from __future__ import annotations

from typing import Any

from memlab.kinds._base import Probe, Review

__all__ = [
    "TO_MEMFS",
    "AGENT_BLOCKS",
    "BLOCKS_PARITY",
    "AGENT_FILE_HEADLINE",
    "MEMFS_FILES",
    "MEMFS_HEADLINE",
    "json_text",
]

_MIG = "memlab.migrations"
_UNITS = "memlab.reviews._units"
#: The migrations of a store that is not a memfs repository into one (Letta Code's layout or
#: Souveraine's).
TO_MEMFS = {"letta": f"{_MIG}:_plan_memfs", "souveraine": f"{_MIG}:_plan_memfs"}
#: The review adapter of a Letta Agent File and of a blocks list: undated blocks, checked
#: against the agent's block limits.
AGENT_BLOCKS = Review(
    units=f"{_UNITS}:agent_units",
    removal="memlab.reviews:InLetta",
    dated=False,
    rules="memlab.reviews:AgentLimits",
)
#: What ``memlab migrate --verify`` runs on a migrated copy of Letta blocks: block by block.
BLOCKS_PARITY = f"{_MIG}:BlocksParity"

#: The headline metrics a scheduled run's index charts and compares by default (names of the
#: audit report's ``metrics.json``; ``review.<name>`` from the review report's).
AGENT_FILE_HEADLINE = (
    "max_prompt_tokens_est",
    "max_context_share",
    "max_limit_ratio",
    "n_blocks_over_limit",
    "problems",
    "review.choices",
)

#: The review adapter fields of the memfs kinds whose units are files (Letta Code's and
#: Souveraine's; each adds its ``rules``): a file is deleted or its body replaced, in one commit.
MEMFS_FILES: dict[str, Any] = dict(
    units=f"{_UNITS}:memfs_file_units",
    share_of="all memory files",
    removal="memlab.reviews:DeleteFile",
    edit="memlab.reviews:SetBody",
    apply="memlab.reviews:GitCommit",
    prompt_files=True,
    drift="memlab.reviews:FileDrift",
)

#: The headline metrics of the memfs kinds (names of the memfs report's ``metrics.json``).
MEMFS_HEADLINE = (
    "prompt_tokens",
    "max_limit_ratio",
    "findings",
    "hook_violations",
    "no_verify_commits",
    "over_limit_files",
    "problems",
    "review.choices",
)


def json_text(probe: Probe) -> bytes:
    """The first byte of ``probe``'s text after a byte order mark and white space."""
    return probe.head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
