"""memlab's built-in store kinds: their detectors and their :func:`~memlab.kinds.register`
calls, in the order detectors break ties. A kind written as a class is a package beside this
module (``memlab/kinds/agent_file/``, ``memlab/kinds/letta_blocks/``,
``memlab/kinds/letta_server/``, ``memlab/kinds/elfmem_db/``), registered here as an instance."""

from __future__ import annotations

from memlab.kinds._base import Probe, Review
from memlab.kinds._registry import register
from memlab.kinds.agent_file import AgentFile
from memlab.kinds.elfmem_db import ElfmemDb
from memlab.kinds.letta_blocks import LettaBlocks
from memlab.kinds.letta_server import LettaServer

__all__ = ["MEMFS_KINDS"]


def _substrate(probe: Probe) -> str | None:
    # elfmem's substrate keeps its blocks in .elfmem/memory and its ledger in .elfmem/ledger;
    # an .elfmem folder with neither (a config only) holds no memory (discover's rule too).
    if not probe.is_dir:
        return None
    folder = probe.path if probe.path.name == ".elfmem" else probe.path / ".elfmem"
    found = next((s for s in ("memory", "ledger") if (folder / s).is_dir()), None)
    if found is None:
        return None
    return f"an .elfmem folder with {found}/" if folder == probe.path else f"holds .elfmem/{found}/"


def _souveraine(probe: Probe) -> str | None:
    return "holds agent.yaml" if probe.has("agent.yaml") else None


def _letta_memfs(probe: Probe) -> str | None:
    found = probe.has(".git", "system", ".letta", "MEMORY.md")
    if not found and (probe.path / "memory" / "system").is_dir():
        found = "memory/system"  # v1's memory/ prefix layout, no git (a local-backend copy)
    if found:
        return f"holds {found}"
    # a bare repository (a server-side copy, a mirror): its tree is checked when it is located
    if (
        probe.is_dir
        and (probe.path / "HEAD").is_file()
        and (probe.path / "objects").is_dir()
        and (probe.path / "refs").is_dir()
    ):
        return "a bare git repository"
    return None


# --------------------------------------------------------------------------- the kinds

_SRC, _AUD, _MIG, _DISC = (
    "memlab.sources",
    "memlab.audits",
    "memlab.migrations",
    "memlab.sources.discover",
)
_UNITS = "memlab.reviews._units"
_MEMFS_FILES = dict(
    units=f"{_UNITS}:memfs_file_units",
    share_of="all memory files",
    removal="delete_file",
    edit="set_body",
    apply="commit",
    prompt_files=True,
    drift="files",
)

_MEMFS_HEADLINE = (
    "prompt_tokens",
    "max_limit_ratio",
    "findings",
    "hook_violations",
    "no_verify_commits",
    "over_limit_files",
    "problems",
    "review.choices",
)

register(ElfmemDb())
register(LettaServer())
#: The kinds stored as markdown files in a git repo, loaded by :mod:`memlab.sources.memfs` and
#: audited by :mod:`memlab.audits.memfs`; review edits them with a commit.
MEMFS_KINDS = ("letta_memfs", "souveraine", "elfmem_substrate")
register(
    "elfmem_substrate",
    display="elfmem markdown substrate",
    detect=_substrate,
    priority=20,
    load=f"{_SRC}.memfs:load_memfs",
    audit=f"{_AUD}.memfs:audit_memfs",
    find=f"{_DISC}:find_elfmem_substrates",
    review=Review(
        units=f"{_UNITS}:substrate_units",
        share_of="all notes and log blocks",
        removal="archive_block",
        apply="commit",
        stale_basis="no use/out/edit ledger event",
        drift="files",
        describe_file=True,
        project_folder=True,
    ),
    capabilities={"memfs_layout"},
    reports=("memfs", "review"),
    headline=_MEMFS_HEADLINE,
    copy_of="substrate",
)
register(
    "souveraine",
    display="Souveraine agent dir",
    detect=_souveraine,
    priority=10,
    load=f"{_SRC}.memfs:load_memfs",
    audit=f"{_AUD}.memfs:audit_memfs",
    find=f"{_DISC}:find_souveraine",
    review=Review(**_MEMFS_FILES, rules="souveraine"),
    capabilities={"uuid_folder", "memfs_layout"},
    reports=("memfs", "review"),
    headline=_MEMFS_HEADLINE,
    copy_of="souveraine",
)
register(
    "letta_memfs",
    display="Letta Code memfs repo",
    detect=_letta_memfs,
    load=f"{_SRC}.memfs:load_memfs",
    audit=f"{_AUD}.memfs:audit_memfs",
    find=f"{_DISC}:find_letta_memfs",
    review=Review(**_MEMFS_FILES, rules="letta"),
    verify="upgrade",
    reports=("memfs", "review"),
    headline=_MEMFS_HEADLINE,
    copy_of="letta",
    capabilities={"memfs_v1_upgrade", "memfs_layout"},
    migrations={"letta": f"{_MIG}._letta_upgrade:plan_upgrade"},
)  # memfs v1 -> v2
register(AgentFile())
register(LettaBlocks())
