"""memlab's built-in store kinds: their detectors and their :func:`~memlab.kinds.register`
calls, in the order detectors break ties. A kind written as a class is a package beside this
module (``memlab/kinds/letta_blocks/``), registered here as an instance."""

from __future__ import annotations

from memlab.kinds._base import Probe, Review
from memlab.kinds._registry import register
from memlab.kinds._shared import AGENT_BLOCKS as _AGENT_BLOCKS
from memlab.kinds._shared import AGENT_FILE_HEADLINE as _AGENT_FILE_HEADLINE
from memlab.kinds._shared import TO_MEMFS as _TO_MEMFS
from memlab.kinds._shared import json_text as _json_text
from memlab.kinds.letta_blocks import LettaBlocks
from memlab.kinds.letta_home import LettaHome

__all__ = ["MEMFS_KINDS"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def _sqlite(probe: Probe) -> str | None:
    if probe.is_dir:
        return None
    if probe.head.startswith(_SQLITE_MAGIC):
        return "starts with the SQLite header"
    if probe.path.suffix in {".db", ".sqlite", ".sqlite3"}:
        # A .db that is not SQLite is reported by the SQLite loader as corrupt, which says more
        # than "unrecognised".
        return f"named {probe.path.suffix}"
    return None


def _agent_file(probe: Probe) -> str | None:
    if probe.is_dir:
        return None
    first = _json_text(probe)
    if first in (b"{", b'"'):
        return "JSON object" if first == b"{" else "JSON string (a double-encoded agent file)"
    if probe.path.suffix == ".af" and first != b"[":
        return "named .af"
    return None


def _letta_dsn(source: str) -> str | None:
    from memlab.sources.letta_server import is_dsn

    return "a PostgreSQL connection URI" if is_dsn(source) else None


def _letta_sqlite(probe: Probe) -> str | None:
    if probe.is_dir or not probe.head.startswith(_SQLITE_MAGIC):
        return None
    from memlab.sources.letta_server import is_letta_sqlite

    return "SQLite with a Letta server's tables" if is_letta_sqlite(probe.path) else None


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

register(
    "elfmem_db",
    display="elfmem database",
    detect=_sqlite,
    priority=-10,
    load=f"{_SRC}.elfmem_db:load_elfmem",
    audit=f"{_AUD}.elfmem:audit_elfmem",
    migrations={"substrate": f"{_MIG}._elfmem:plan_substrate", **_TO_MEMFS},
    find=f"{_DISC}:find_elfmem_databases",
    verify="elfmem",
    capabilities={"elfmem_tables"},
    reports=("audit", "review"),
    headline=(
        "input_per_corpus_token",
        "calls_per_surviving_block",
        "supersession_share",
        "min_block_recency",
        "role_slots_left",
        "constitutional_tagged_live",
        "blocks_active",
        "contradictions_unresolved",
        "review.choices",
    ),
    review=Review(
        units=f"{_UNITS}:elfmem_db_units",
        share_of="all live blocks",
        removal="forget",
        edit="edit",
        apply="script",
        stale_basis="no reinforcement, session or outcome",
        drift="seeds",
        recorded_contradictions=True,
        remember=True,
    ),
)
register(
    "letta_server",
    display="Letta server database",
    detect=_letta_sqlite,
    locate=_letta_dsn,
    load=f"{_SRC}.letta_server:load_letta_server",
    audit=f"{_AUD}.letta_server:audit_letta_server",
    find=f"{_SRC}.letta_server:find_letta_server",
    migrations={"letta": f"{_MIG}._letta_server:plan_letta_server"},
    verify="server",
)
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
register(
    "agent_file",
    display="Letta Agent File",
    detect=_agent_file,
    priority=-10,
    load=f"{_SRC}.agent_file:load_agent_file",
    audit=f"{_AUD}.agent_file:audit_agent_file",
    migrations=_TO_MEMFS,
    review=_AGENT_BLOCKS,
    verify="blocks",
    capabilities={"json_file", "agents"},
    reports=("audit", "review"),
    headline=_AGENT_FILE_HEADLINE,
)
register(LettaBlocks())
register(LettaHome())
