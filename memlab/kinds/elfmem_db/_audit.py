"""The elfmem v2 evidence (§2 of the v2 re-evaluation), recomputed from any elfmem database.

:func:`audit_elfmem` takes a :class:`~memlab.store.Store` of kind ``elfmem_db`` and returns an
:class:`~memlab.audits._base.Audit` whose tables answer the doc's questions one by one:

========================  ======================================================================
table                     question
========================  ======================================================================
``cost``                  how much LLM work maintains how much live text (§2.1)
``archive_reasons``       why blocks were archived (§2.2)
``archived``              each archived block, with its ``superseded_by`` chain when recorded
``clock``                 how far the session-aware clock has moved (§2.2)
``recency_tiers``         what the four decay tiers give after that lifetime
``recency_blocks``        each live block's recency from its own lambda and reinforcement
``constitution``          which seeded role slots survive, with what content (§2.3)
``protected_superseded``  archived blocks that were PERMANENT, pinned or at confidence 1.0
``tags``                  tags per active vs archived block (with elfmem's deletion caveat)
``subsystems``            contradictions, outcomes, amendments, edges, minds (§2.4)
``edges``                 edges by relation type
``reinforcement_top``     the ten most reinforced live blocks (§2.5)
``lorenz``                the reinforcement Lorenz curve
``staleness``             last consolidation and inbox ages against ``as_of`` (§2.6)
``inbox``                 each inbox block and its age
========================  ======================================================================

Live tokens are elfmem's own ``blocks.token_count`` where it was recorded and the doc's chars /
4 only for blocks without one (``live_tokens_est_share`` is the estimated share); summary tokens
are chars / 4 (elfmem counts no summary tokens). A figure the schema never recorded (amendments
before schema 5, near-duplicates before 9) is None, never 0. "Live" means
``status == 'active'``.

The sections that build these tables are in private sibling modules:
:mod:`~memlab.kinds.elfmem_db._audit_sections` (every table but the constitution's, and
:func:`gini`/:func:`lorenz`), :mod:`~memlab.kinds.elfmem_db._audit_constitution` (``constitution``,
``protected_superseded``), :mod:`~memlab.kinds.elfmem_db._audit_summary` (the printable summary) and
:mod:`~memlab.kinds.elfmem_db._audit_context` (the frames and value helpers they share).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from memlab import kinds
from memlab.audits._base import Audit, json_safe
from memlab.constants import SECONDS_PER_CALL
from memlab.errors import InvalidArgument, UnsupportedSchema
from memlab.kinds.elfmem_db._audit_constitution import constitution_section
from memlab.kinds.elfmem_db._audit_context import Context
from memlab.kinds.elfmem_db._audit_sections import (
    archival_section,
    clock_section,
    cost_section,
    gini,
    lorenz,
    reinforcement_section,
    staleness_section,
    subsystems_section,
    tags_section,
)
from memlab.kinds.elfmem_db._audit_summary import summary_text
from memlab.store import Store, parse_as_of

__all__ = ["audit_elfmem", "gini", "lorenz", "parse_as_of"]


def audit_elfmem(
    store: Store, *, as_of: Any = None, seconds_per_call: float = SECONDS_PER_CALL
) -> Audit:
    """Recompute the v2 doc's evidence set for one elfmem database.

    ``as_of`` is the "today" staleness is measured against (default: now, UTC);
    ``seconds_per_call`` converts LLM calls into GPU-hours (the doc uses 14 s, the local
    adapter's latency). Works on every schema the loader reads (1-9); figures a schema cannot
    support (``superseded_by`` before 6, contradiction kinds before 9, token usage when
    ``lifetime_token_usage`` was never written) come out as NA, with a note saying why.

    Example::

        a = audit_elfmem(memlab.load("data/demo/elfmem-demo.db"), as_of="2026-08-04")
        print(a.summary())
        a["archive_reasons"]
    """
    kind = kinds.lookup(store.kind)
    if kind is None or kind.elfmem_frames(store) is None:
        raise UnsupportedSchema(
            f"audit_elfmem needs an elfmem database, got a {store.kind!r} store",
            path=store.path,
            hint="use memlab.audits.audit(), which picks the right audit",
        )
    try:
        spc = float(seconds_per_call)
    except (TypeError, ValueError):
        spc = float("nan")
    if not math.isfinite(spc) or spc <= 0:
        raise InvalidArgument(
            f"seconds_per_call must be a positive number of seconds, got {seconds_per_call!r}",
            hint="the doc's figure is 14",
        )
    when = parse_as_of(as_of)
    ctx = Context(store, when, spc)
    tables: dict[str, pd.DataFrame] = {}
    headline: dict[str, Any] = {
        "store": store.name,
        "kind": store.kind,
        "schema_version": store.meta.get("schema_version"),
        "elfmem_release": store.meta.get("elfmem_release"),
        "as_of": when.isoformat(),
        "problems": len(store.problems),
    }
    for section in (
        cost_section,
        archival_section,
        clock_section,
        constitution_section,
        tags_section,
        subsystems_section,
        reinforcement_section,
        staleness_section,
    ):
        section(ctx, tables, headline)
    headline = json_safe(headline)
    return Audit(
        kind=store.kind,
        store_name=store.name,
        tables=tables,
        headline=headline,
        summary_text=summary_text(ctx, tables, headline),
        notes=ctx.notes,
    )
