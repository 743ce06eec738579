"""Planning a migration: which target a store goes to and the whole plan (files, commits,
flags), decided without writing anything. :func:`memlab.migrations.migrate` applies a plan and
:mod:`memlab.migrations._verify` re-plans to check a copy; both take it from here.
"""

from __future__ import annotations

from pathlib import Path

from memlab import kinds
from memlab._escape import terminal_line
from memlab.constants import MAX_VALUE_BYTES
from memlab.errors import MigrationError
from memlab.migrations._plan import Plan
from memlab.store import Store

__all__ = ["check_target", "natural_target", "plan_migration", "refuse_unread", "located"]


def located(src: str | Path) -> bool:
    """Whether ``src`` is a text some kind's ``locate`` claims (a Letta server's
    ``postgresql://`` DSN): a source that is not a path, so nothing on disk is resolved."""
    # a kind registered as a record may declare no locate (None)
    return isinstance(src, str) and any(
        k.locate is not None and k.locate(src) for k in kinds.kinds()
    )


def check_target(to: str | None) -> None:
    if to is not None and to not in kinds.targets():
        raise MigrationError(
            f"unknown target {to!r}", hint=f"use one of {', '.join(kinds.targets())}"
        )


def natural_target(store: Store) -> str | None:
    """Where a store goes when no target is named (its kind's ``default_target`` in
    :mod:`memlab.kinds`): elfmem databases to elfmem's own markdown substrate, Letta blocks to
    Letta Code memfs; None for a kind memlab does not migrate."""
    return kinds.get(store.kind).default_target


def plan_migration(
    src: str | Path,
    *,
    to: str | None = None,
    store: Store | None = None,
    dest: str | Path | None = None,
    agent: str | list[str] | None = None,
    layout: str | None = None,
) -> Plan:
    """Decide the whole migration (files, commits, flags) without writing anything.

    ``to=None`` picks :func:`natural_target` for the source. Letta and Souveraine commits are
    dated now, or at the date of memlab's earlier migration of the same source into ``dest``.
    ``layout`` is a Letta target's memfs layout: ``"v2"`` (the default, what Letta Code 0.34.12
    creates) or ``"v1"`` (the ``system/`` layout, memlab's output before v2).
    """
    from memlab.sources import load

    check_target(to)
    path = Path(src).expanduser().resolve() if not located(src) else None
    store = store if store is not None else load(path or src)
    refuse_unread(store)
    # --agent reaches only planners that take ``agents`` (a Letta server's); Kind.plan says so.
    options: dict = {} if agent is None else {"agents": agent}
    if layout is not None:
        from memlab.migrations._letta_v2 import check_layout

        check_layout(layout, to or kinds.get(store.kind).default_target or "")
        options["layout"] = layout
    return kinds.get(store.kind).plan(store, path or store.path, to, dest=dest, **options)


def refuse_unread(store: Store) -> None:
    """A value past memlab's cap was not read (an ``oversized`` problem row): a migration would
    write it empty, so memlab does not plan one."""
    unread = store.meta.get("oversized_values") or []
    if unread:
        first = unread[0]
        what = first.get("where") or f"{first.get('table')}.value of id {first.get('id')!r}"
        raise MigrationError(
            f"{len(unread)} value(s) past memlab's {MAX_VALUE_BYTES:,}-byte cap "
            f"were not read ({terminal_line(what)}: {first['bytes']:,} bytes); "
            "memlab will not migrate a value it has not read",
            path=None if isinstance(store.path, str) else store.path,
            hint="shorten the value at its source (a block that large is no "
            "core memory) and migrate again",
        )
