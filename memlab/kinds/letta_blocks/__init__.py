"""The ``letta_blocks`` store kind: a JSON list of Letta memory blocks, as Letta's
``GET /v1/agents/{id}/core-memory/blocks`` returns them, written as a class implementing
:class:`~memlab.kinds.KindBase`.

It detects itself from the file's first bytes; it is loaded and audited by the Letta Agent
File's loader and audit (``memlab/kinds/agent_file/``: :data:`~memlab.kinds.agent_file.LOAD`,
:data:`~memlab.kinds.agent_file.AUDIT`), which it shares with the ``agent_file`` kind, and it
shares that kind's review adapter, headline metrics and migrations to a memfs repository
(verified block by block).
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from memlab.kinds._base import KindBase, Probe
from memlab.kinds._shared import (
    AGENT_BLOCKS,
    AGENT_FILE_HEADLINE,
    BLOCKS_PARITY,
    TO_MEMFS,
    json_text,
)
from memlab.kinds.agent_file import AUDIT, LOAD

__all__ = ["LettaBlocks"]


class LettaBlocks(KindBase):
    """A Letta blocks JSON list (``[{"label": ..., "value": ...}, ...]``)."""

    name = "letta_blocks"
    display = "Letta blocks JSON list"
    priority = -10  # any JSON list: asked after the kinds that claim more specific content
    load_ref = LOAD
    audit_ref = AUDIT
    migrations = TO_MEMFS
    default_target = next(iter(TO_MEMFS))
    review = AGENT_BLOCKS
    verify = BLOCKS_PARITY
    reports = ("audit", "review")
    headline = AGENT_FILE_HEADLINE

    def findings(self) -> Mapping[str, tuple[str, ...]]:
        """The finding tables of the agent file audit: blocks over their limit, and (for an
        agent file; a blocks list never has them) blocks no agent holds."""
        from memlab._metrics import FINDINGS

        return MappingProxyType({t: FINDINGS[t] for t in ("blocks_over_limit", "orphan_blocks")})

    def detect(self, probe: Probe) -> str | None:
        """A file whose JSON text starts with ``[``, or named ``.json``."""
        if probe.is_dir:
            return None
        if json_text(probe) == b"[":
            return "JSON list"
        if probe.path.suffix == ".json":
            return "named .json"
        return None

    def lists_file(self, path: Path) -> bool:
        """A walked JSON file is listed when it is a blocks list or an agent file."""
        from memlab.kinds.agent_file._walk import lists_json

        return lists_json(path)
