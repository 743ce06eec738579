"""The ``letta_blocks`` store kind: a JSON list of Letta memory blocks, as Letta's
``GET /v1/agents/{id}/core-memory/blocks`` returns them, written as a class implementing
:class:`~memlab.kinds.KindBase`.

It detects itself from the file's first bytes; everything else is the Letta Agent File kind's
(``memlab/kinds/agent_file/``), which it extends: the loader and audit, the review adapter,
headline metrics, finding tables, walk rule and migrations to a memfs repository (verified
block by block). A blocks list never has blocks no agent holds, so its ``orphan_blocks`` table
is always empty.
"""

from __future__ import annotations

from memlab.kinds._base import Probe
from memlab.kinds._shared import json_text
from memlab.kinds.agent_file import AgentFile

__all__ = ["LettaBlocks"]


class LettaBlocks(AgentFile):
    """A Letta blocks JSON list (``[{"label": ..., "value": ...}, ...]``)."""

    name = "letta_blocks"
    display = "Letta blocks JSON list"
    priority = -10  # any JSON list: asked after the kinds that claim more specific content

    def detect(self, probe: Probe) -> str | None:
        """A file whose JSON text starts with ``[``, or named ``.json``."""
        if probe.is_dir:
            return None
        if json_text(probe) == b"[":
            return "JSON list"
        if probe.path.suffix == ".json":
            return "named .json"
        return None
