"""The substrate migration of an elfmem database: two commits into elfmem's markdown substrate
(``.elfmem/memory`` block files, then the ``.elfmem/ledger``), written with the elfmem block
layout and ledger of :mod:`memlab.migrations._elfmem` (shared with the Letta and Souveraine
targets)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pandas as pd

from memlab._escape import commit_line
from memlab.formats.blockfile import SELF_FILE
from memlab.migrations._elfmem import (
    iso,
    layout_blocks,
    ledger_events,
    render_block_files,
    source_time,
)
from memlab.migrations._plan import (
    Plan,
    PlannedCommit,
    PlannedRepo,
    flags_frame,
    moved_frame,
    signature_at,
)
from memlab.store import Store

__all__ = ["plan_substrate"]


def plan_substrate(
    store: Store, source: Path, *, target: str = "substrate", dest: Path | None = None
) -> Plan:
    """The substrate migration of one elfmem DB: two commits, blocks then ledger.

    ``target`` is always ``"substrate"`` and ``dest`` is not needed (commits are dated at the
    source's latest timestamp); both are taken so every planner has the signature
    :mod:`memlab.kinds` calls."""
    signature = signature_at(source_time(store))
    when = cast(str, iso(pd.Timestamp(signature.timestamp, unit="s", tz="UTC")))  # a time: text
    files, moved, flags = layout_blocks(store)
    block_files = render_block_files(files, flags)
    led = ledger_events(store, when)
    flags += led.flags
    counts = (
        store.blocks["status"].astype("string").value_counts().to_dict()
        if len(store.blocks)
        else {}
    )
    n_self = sum(len(v) for k, v in files.items() if k == SELF_FILE)
    name = commit_line(source.name)  # a file name: one commit-message line, nothing more
    msg1 = (
        f"migrate(elfmem): {len(store.blocks)} blocks from {name}\n\n"
        f"self.md: {n_self} constitutional block(s); notes/: {counts.get('active', 0) - n_self} "
        f"active; log/: {counts.get('inbox', 0)} inbox; archive/: {counts.get('archived', 0)} "
        "archived.\nEvery block keeps its database id, tags, pin, cue and declared relations."
    )
    kinds = pd.Series([e["k"] for e in led.events]).value_counts().sort_index()
    msg2 = (
        f"migrate(elfmem): ledger of {name}\n\n"
        + "\n".join(f"{k}: {v}" for k, v in kinds.items())
        + "\n\nelfmem replays seed/link/instance; memlab.* events carry the rest."
    )
    commits = [PlannedCommit(msg1, tuple(sorted(block_files.items())))]
    ledger_files = led.files()
    if ledger_files:
        commits.append(PlannedCommit(msg2, tuple(sorted(ledger_files.items()))))
    side_rows = [
        {
            "kind": "ledger",
            "item": k,
            "label": None,
            "repo": "",
            "path": None,
            "section": None,
            "chars": None,
            "note": f"{v} event(s)",
        }
        for k, v in kinds.items()
    ]
    notes = [
        "Constitutional blocks (tag self/constitutional, not archived) are moved into self.md, "
        "which elfmem 0.20 reads raw and does not index: after `elfmem index rebuild` they are "
        "no longer retrieved as blocks (the v2 design), but they stay in self.md with their ids.",
        "pinned = the pinned column or the self/constitutional tag (elfmem's export rule).",
    ]
    return Plan(
        "substrate",
        source,
        [PlannedRepo("", tuple(commits), title=name)],
        signature,
        moved_frame(moved + side_rows),
        flags_frame(flags),
        notes,
    )
