"""memlab's built-in store kinds, registered in the order detectors break ties. Each kind is a
package beside this module (``memlab/kinds/<kind>/``), a class implementing
:class:`~memlab.kinds.KindBase`, registered here as an instance."""

from __future__ import annotations

from memlab.kinds._registry import register
from memlab.kinds.agent_file import AgentFile
from memlab.kinds.claude_memory import ClaudeMemory
from memlab.kinds.elfmem_db import ElfmemDb
from memlab.kinds.elfmem_substrate import ElfmemSubstrate
from memlab.kinds.letta_blocks import LettaBlocks
from memlab.kinds.letta_home import LettaHome
from memlab.kinds.letta_memfs import LettaMemfs
from memlab.kinds.letta_server import LettaServer
from memlab.kinds.mem0 import Mem0
from memlab.kinds.souveraine import Souveraine

__all__ = ["MEMFS_KINDS"]

#: The kinds stored as markdown files in a git repo, loaded by :mod:`memlab.kinds._memfs._load`
#: and audited by :mod:`memlab.kinds._memfs._audit`; review edits them with a commit.
MEMFS_KINDS = ("letta_memfs", "souveraine", "elfmem_substrate")

register(ElfmemDb())
register(LettaServer())
register(ElfmemSubstrate())
register(Souveraine())
register(LettaMemfs())  # memfs v1 -> v2
register(AgentFile())
register(LettaBlocks())
register(Mem0())
register(ClaudeMemory())
register(LettaHome())
