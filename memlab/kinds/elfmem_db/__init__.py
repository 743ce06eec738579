"""The ``elfmem_db`` store kind: an elfmem SQLite database, written as a class implementing
:class:`~memlab.kinds.KindBase`.

Its loader (:mod:`memlab.kinds.elfmem_db._load`, with ``_schema``, ``_values`` and ``_frames``:
the schema versions it knows, value typing, one frame per table), its audit (``_audit``, the
v2 doc's evidence set, in ``_audit_*`` sections) and its substrate migration (``_migrate``) are
modules of this package, named by ``"module:attribute"`` strings so ``import memlab`` imports
none of them. What it shares stays where the other users are: the SQLite snapshot reader
(:mod:`memlab.sources._sqlite_snapshot`), the block layout and ledger of its migrations
(:mod:`memlab.migrations._elfmem`), elfmem's seeds (:mod:`memlab.audits.seeds`) and block file
format (:mod:`memlab.formats.blockfile`), and the rows of discover's inventory
(:mod:`memlab.sources._discover_rows`); where discover finds it is ``_find``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

from memlab.kinds._base import KindBase, Probe, Review
from memlab.kinds._shared import TO_MEMFS

__all__ = ["ElfmemDb"]

_HERE = "memlab.kinds.elfmem_db"
_SQLITE_MAGIC = b"SQLite format 3\x00"


class ElfmemDb(KindBase):
    """An elfmem database (``~/.elfmem/databases/*.db``)."""

    name = "elfmem_db"
    display = "elfmem database"
    priority = -10  # any SQLite file: asked after the kinds that claim more specific content
    load_ref = f"{_HERE}._load:load_elfmem"
    audit_ref = f"{_HERE}._audit:audit_elfmem"
    migrations = MappingProxyType({"substrate": f"{_HERE}._migrate:plan_substrate", **TO_MEMFS})
    default_target = "substrate"
    find_ref = f"{_HERE}._find:find_elfmem_databases"
    verify = "memlab.migrations:ElfmemParity"
    reports = ("audit", "review")
    headline = (
        "input_per_corpus_token",
        "calls_per_surviving_block",
        "supersession_share",
        "min_block_recency",
        "role_slots_left",
        "constitutional_tagged_live",
        "blocks_active",
        "contradictions_unresolved",
        "problems",
        "review.choices",
    )
    review = Review(
        units="memlab.reviews._units:elfmem_db_units",
        share_of="all live blocks",
        removal="memlab.reviews:Forget",
        edit="memlab.reviews:ElfmemEdit",
        apply="memlab.reviews:ElfmemScript",
        stale_basis="no reinforcement, session or outcome",
        drift="memlab.reviews:SeedDrift",
        recorded_contradictions=True,
        remember=True,
    )

    def detect(self, probe: Probe) -> str | None:
        """A file starting with the SQLite header, or named ``.db``, ``.sqlite`` or
        ``.sqlite3``."""
        if probe.is_dir:
            return None
        if probe.head.startswith(_SQLITE_MAGIC):
            return "starts with the SQLite header"
        if probe.path.suffix in {".db", ".sqlite", ".sqlite3"}:
            # A .db that is not SQLite is reported by the SQLite loader as corrupt, which says
            # more than "unrecognised".
            return f"named {probe.path.suffix}"
        return None

    def elfmem_frames(self, store: Any) -> Mapping[str, Any] | None:
        """The store's own frames: an elfmem database's tables."""
        return store.frames

    def doc_value(self, metric: str) -> Any:
        """The elfmem v2 doc's value of ``metric`` (:func:`memlab._metrics.doc_value`)."""
        from memlab._metrics import doc_value

        return doc_value(metric)
