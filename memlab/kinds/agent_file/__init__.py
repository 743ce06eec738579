"""The ``agent_file`` store kind: a Letta Agent File (``.af``), written as a class implementing
:class:`~memlab.kinds.KindBase`.

Its loader (:mod:`memlab.kinds.agent_file._load`, which reads the JSON through
:mod:`memlab.kinds.agent_file._read`) and its audit (:mod:`memlab.kinds.agent_file._audit`) are
shared with the ``letta_blocks`` kind (``memlab/kinds/letta_blocks/``), which names them by
:data:`LOAD` and :data:`AUDIT`; so are its review adapter, headline metrics and migrations to a
memfs repository (verified block by block).
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

__all__ = ["AgentFile", "LOAD", "AUDIT"]

#: The loader of an Agent File or a blocks list (resolved on first use, so ``import memlab``
#: imports no loader); public as :func:`memlab.load_agent_file`.
LOAD = "memlab.kinds.agent_file._load:load_agent_file"
#: The audit of an Agent File or a blocks list.
AUDIT = "memlab.kinds.agent_file._audit:audit_agent_file"


class AgentFile(KindBase):
    """A Letta Agent File: a JSON object (v2 or a legacy v1 export), possibly double-encoded."""

    name = "agent_file"
    display = "Letta Agent File"
    priority = -10  # any JSON object: asked after the kinds that claim more specific content
    load_ref = LOAD
    audit_ref = AUDIT
    migrations = TO_MEMFS
    default_target = next(iter(TO_MEMFS))
    review = AGENT_BLOCKS
    verify = BLOCKS_PARITY
    reports = ("audit", "review")
    headline = AGENT_FILE_HEADLINE

    def findings(self) -> Mapping[str, tuple[str, ...]]:
        """The finding tables of the agent file audit: blocks over their limit, and blocks no
        agent holds."""
        from memlab._metrics import FINDINGS

        return MappingProxyType({t: FINDINGS[t] for t in ("blocks_over_limit", "orphan_blocks")})

    def detect(self, probe: Probe) -> str | None:
        """A file whose JSON text starts with ``{`` (or ``"``: a double-encoded agent file),
        or named ``.af`` and not a JSON list."""
        if probe.is_dir:
            return None
        first = json_text(probe)
        if first in (b"{", b'"'):
            return "JSON object" if first == b"{" else "JSON string (a double-encoded agent file)"
        if probe.path.suffix == ".af" and first != b"[":
            return "named .af"
        return None

    def lists_file(self, path: Path) -> bool:
        """A walked ``.af`` file is listed; another JSON file when it holds agents or blocks."""
        from memlab.kinds.agent_file._walk import lists_json

        return lists_json(path)
