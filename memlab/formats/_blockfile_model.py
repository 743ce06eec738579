"""What an elfmem block is, and where substrate files live: elfmem 0.20.0's relation
vocabulary and frontmatter fields, the :class:`Block` record (relations in canonical order),
elfmem's content-hash id, the sections and folders of ``.elfmem/``. Shared by the reader
(:mod:`~memlab.formats._blockfile_read`), the writer (:mod:`~memlab.formats._blockfile_write`)
and the ledger (:mod:`~memlab.formats._blockfile_ledger`). Part of
:mod:`memlab.formats.blockfile`, which re-exports the public names.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable, Sequence

__all__ = [
    "Block",
    "LINK_RELATIONS",
    "SYSTEM_RELATIONS",
    "ALL_RELATIONS",
    "KNOWN_FIELDS",
    "CUE_FIELD",
    "SECTIONS",
    "INDEXED_SECTIONS",
    "MEMORY_DIR",
    "LEDGER_DIR",
    "SELF_FILE",
    "content_id",
]


# --- format constants (elfmem 0.20.0, memory/blockfile.py and memory/ledger.py) -------------

LINK_RELATIONS: tuple[str, ...] = (
    "supports",
    "contradicts",
    "refines",
    "derived-from",
    "requires",
    "supersedes",
)
SYSTEM_RELATIONS: tuple[str, ...] = ("replies_to", "predicts")
ALL_RELATIONS: frozenset[str] = frozenset(LINK_RELATIONS + SYSTEM_RELATIONS)
_RELATION_RANK = {rel: i for i, rel in enumerate(LINK_RELATIONS + SYSTEM_RELATIONS)}
KNOWN_FIELDS: frozenset[str] = frozenset({"id", "tags", "pinned", "created", "cls"})
#: The inline field (``cue:: <text>``) that is a block's cue; any other ``key::`` is a relation.
CUE_FIELD = "cue"

#: Sub-folders of ``memory/`` that hold block files; ``archive/`` is export-only in elfmem.
SECTIONS: tuple[str, ...] = ("notes", "log", "archive")
#: The sections ``elfmem index rebuild`` reads (notes → active, log → inbox).
INDEXED_SECTIONS: tuple[str, ...] = ("notes", "log")
MEMORY_DIR = ".elfmem/memory"
LEDGER_DIR = ".elfmem/ledger"
SELF_FILE = ".elfmem/memory/self.md"


@dataclass
class Block:
    """One ``##`` block of a substrate file, as declared in the file.

    ``relations`` is a list of ``(relation, target_id)``; it is kept in a canonical order
    (elfmem's vocabulary order, then other relations by first appearance, targets in file
    order) because the file groups targets one line per relation, so any other order could not
    survive a round trip. ``created`` stays the text as written; frames parse it to UTC.
    ``line`` is the 1-based line of the heading when read from a file; it takes no part in
    equality.
    """

    title: str
    body: str = ""
    id: str | None = None
    tags: list[str] = field(default_factory=list)
    pinned: bool = False
    created: str | None = None
    cls: str | None = None
    cue: str | None = None
    relations: list[tuple[str, str]] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        self.tags = list(self.tags)
        self.extra = dict(self.extra)
        self.relations = _canonical_relations(self.relations)

    @property
    def links(self) -> list[tuple[str, str]]:
        """Relations in elfmem's vocabulary (the ones elfmem turns into edges)."""
        return [(r, t) for r, t in self.relations if r in ALL_RELATIONS]

    @property
    def unknown_relations(self) -> list[tuple[str, str]]:
        """Relations outside elfmem's vocabulary (elfmem keeps only their names)."""
        return [(r, t) for r, t in self.relations if r not in ALL_RELATIONS]


def _canonical_relations(relations: Iterable[Sequence[str]]) -> list[tuple[str, str]]:
    pairs = [(str(r), str(t)) for r, t in relations]
    first_seen: dict[str, int] = {}
    for rel, _ in pairs:
        first_seen.setdefault(rel, len(first_seen))
    offset = len(_RELATION_RANK)

    def rank(pair: tuple[str, str]) -> int:
        rel = pair[0]
        return _RELATION_RANK.get(rel, offset + first_seen[rel])

    return sorted(pairs, key=rank)  # stable: targets keep their order within a relation


def content_id(body: str) -> str:
    """The id elfmem assigns a block that has none: sha256 of the stripped, lowercased body."""
    return hashlib.sha256(body.strip().lower().encode("utf-8")).hexdigest()[:16]
