"""The ``claude_memory`` store kind: a Claude Code (or Qwen Code) auto-memory folder, a
``MEMORY.md`` index and topic files with frontmatter, with the ``CLAUDE.md`` hierarchy beside
it where there is one, written as a class implementing :class:`~memlab.kinds.KindBase`.

Its loader (:mod:`._load`), audit (:mod:`._audit`), finder (:mod:`._find`) and migration
planner to Letta Code memfs (:mod:`._migrate`, verified block by block as an agent file's
blocks are) live in this package.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from memlab.kinds._base import KindBase, Probe, Search
from memlab.kinds._shared import BLOCKS_PARITY, TO_MEMFS

__all__ = ["ClaudeMemory", "HEADLINE", "FINDING_KEYS"]

#: The metrics a scheduled run's index charts for these folders (records in memlab._metrics).
HEADLINE = (
    "n_topic_files",
    "index_lines_total",
    "n_orphan_files",
    "n_dangling_index_lines",
    "n_tail_index_lines",
    "n_hidden_memories",
    "n_duplicate_pairs",
    "n_near_duplicate_pairs",
    "n_frontmatter_problems",
    "memory_findings",
)

#: audit table -> the columns that identify one of its rows across runs.
FINDING_KEYS: dict[str, tuple[str, ...]] = {
    "orphan_files": ("path",),
    "dangling_index_lines": ("line", "target"),
    "invisible_tail": ("line",),
    "hidden_memories": ("path",),
    "duplicates": ("path_a", "path_b"),
    "near_duplicates": ("path_a", "path_b"),
    "frontmatter": ("path", "rule"),
}


class ClaudeMemory(KindBase):
    """A Claude Code auto-memory folder (``~/.claude/projects/<project>/memory``)."""

    name = "claude_memory"
    display = "Claude Code memory folder"
    priority = 5  # before letta_memfs, which would take any folder holding MEMORY.md
    # the memfs planner every block source uses; the folder's blocks frame is its input
    migrations = MappingProxyType({"letta": TO_MEMFS["letta"]})
    default_target = "letta"
    verify = BLOCKS_PARITY
    load_ref = "memlab.kinds.claude_memory._load:load_claude_memory"
    #: index drift both ways, the invisible tail, duplicates, frontmatter and size per type;
    #: ``near_duplicates=False`` skips the embedding check (its count is then null)
    audit_ref = "memlab.kinds.claude_memory._audit:audit_claude_memory"
    reports = ("audit",)
    headline = HEADLINE

    def detect(self, probe: Probe) -> str | None:
        """A folder holding ``MEMORY.md`` and none of what Letta, Souveraine or elfmem stores
        hold (git, ``.letta``, ``system/``, ``.memfs.config.json``, ``agent.yaml``)."""
        if not probe.is_dir:
            return None
        from memlab.kinds.claude_memory._load import is_memory_folder

        return is_memory_folder(probe.path)

    def plan(
        self,
        store: Any,
        source: Path,
        target: str | None = None,
        *,
        dest: str | Path | None = None,
        **options: Any,
    ) -> Any:
        """The Letta Code memfs plan (:mod:`._migrate`): refused, naming the file, when a file
        was not read or not read as written."""
        from memlab.kinds.claude_memory._migrate import check_migratable

        check_migratable(store, source)
        return super().plan(store, source, target, dest=dest, **options)

    def find(self, search: Search) -> Iterable[dict[str, Any]]:
        """``~/.claude/projects/*/memory`` and the documented overrides."""
        from memlab.kinds.claude_memory._find import find_claude_memory

        return find_claude_memory(search)

    def walked_folder(self, folder: Path) -> Mapping[str, Any] | None:
        """The row :meth:`find` gives such a folder: an auto-memory folder keeps no git
        history, so no repository is no problem (discover's own row would say one)."""
        from memlab.kinds.claude_memory._find import folder_row

        return {**folder_row(folder), "kind": self.name}

    def state(self, store: Any) -> Mapping[str, str] | None:
        """Every file of the folder (MEMORY.md and the topic files) with the sha256 of its
        bytes, or why it was not read: the folder keeps no history, so a scheduled run keeps
        this one and the run index shows what was added, changed and removed."""
        out = {
            str(r["path"]): str(r["sha256"]) if r["read"] else "(not read)"
            for r in store.files[["path", "sha256", "read"]].to_dict("records")
        }
        if store.meta.get("index_sha256"):
            out["MEMORY.md"] = str(store.meta["index_sha256"])
        return out

    def findings(self) -> Mapping[str, tuple[str, ...]]:
        return MappingProxyType(FINDING_KEYS)
