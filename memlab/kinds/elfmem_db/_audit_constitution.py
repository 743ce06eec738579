"""The elfmem audit's constitution section (§2.3): which seeded role slots survive, with what
content, and which maximally protected blocks were archived anyway.

:func:`constitution_section` fills the ``constitution`` and ``protected_superseded`` tables for
:func:`memlab.kinds.elfmem_db._audit.audit_elfmem` (it reads the ``archived`` table the archival
section made); :class:`_Records` is its lazy id -> row lookup.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from memlab.audits import seeds as _seeds
from memlab.kinds.elfmem_db._audit_context import Context, isna, strings

__all__ = ["constitution_section"]

# ── §2.3 constitution ─────────────────────────────────────────────────────────────────────


class _Records:
    """``frame[columns].to_dict("records")`` keyed by block id (``position``: id -> row),
    each row made only when first asked for, with the values ``to_dict`` gives: the
    constitution looks up a few ids, not every block."""

    def __init__(self, frame: pd.DataFrame, columns: list[str], position: dict[str, int]) -> None:
        from pandas.core.dtypes.cast import maybe_box_native  # what to_dict boxes with

        self._box = maybe_box_native
        # numpy columns iterate as ndarray.item() (Python scalars, not boxed again); extension
        # and object columns as their array does, then boxed: element by element that is the
        # array's own item, except for a categorical, whose missing value iterates as None
        # (one-row slices are iterated for those)
        self._columns = []
        for c in columns:
            dtype = frame[c].dtype
            how = (
                "item"
                if isinstance(dtype, np.dtype) and dtype != np.dtype(object)
                else "iterate"
                if isinstance(dtype, pd.CategoricalDtype)
                else "index"
            )
            self._columns.append((c, frame[c].to_numpy() if how == "item" else frame[c].array, how))
        self._position = position
        self._rows: dict[str, dict[str, Any]] = {}

    def __contains__(self, block_id: object) -> bool:
        return block_id in self._position

    def get(self, block_id: Any, default: Any = None) -> Any:
        return self[block_id] if block_id in self._position else default

    def __getitem__(self, block_id: str) -> dict[str, Any]:
        row = self._rows.get(block_id)
        if row is None:
            p = self._position[block_id]
            row = {
                c: (
                    values.item(p)
                    if how == "item"
                    else self._box(values[p] if how == "index" else next(iter(values[p : p + 1])))
                )
                for c, values, how in self._columns
            }
            self._rows[block_id] = row
        return row


def _release_lower(release: Any) -> tuple[int, ...] | None:
    found = re.findall(r"(\d+)\.(\d+)\.(\d+)", str(release or ""))
    return tuple(int(p) for p in found[0]) if found else None


def constitution_section(ctx: Context, tables: dict, headline: dict) -> None:
    tags = ctx.tags
    tag_text = tags["tag"].astype("string")
    role_rows = tags[tag_text.str.startswith(_seeds.ROLE_TAG_PREFIX).fillna(False).to_numpy()]
    lower = _release_lower(ctx.store.meta.get("elfmem_release"))
    role_era = len(role_rows) > 0 or (lower is not None and lower >= (0, 13, 1))
    release = _seeds.seed_release(role_tags=role_era)
    # Plain-Python lookups: ten slots against every block would otherwise mean ten full-frame
    # boolean filters per question.
    cols = [
        "id",
        "status",
        "archive_reason",
        "superseded_by",
        "decay_lambda",
        "confidence",
        "created_at",
    ]
    # Content is read one block at a time and only ever compared with a seeded text: a block's
    # form is built no longer than the longest seed (+1), so a huge block is never held twice.
    limit = max(
        [_seeds.SEED_CHARS] + [len(_seeds.normalise(slot.content)) for slot in release.slots]
    )
    contents = ctx.blocks["content"]
    ids = [str(i) for i in ctx.blocks["id"]]
    position = {i: n for n, i in enumerate(ids)}  # the last row of a repeated id, as records
    records = _Records(ctx.blocks, cols, position)

    def content_of(block_id: str) -> Any:
        return contents.iloc[position[block_id]]

    # The first 64K characters decide unless they are nearly all whitespace: only then is a
    # longer block read whole.
    head_chars = 1 << 16
    heads = contents.astype("string").str.slice(0, head_chars)
    lengths = contents.astype("string").str.len()
    norm: dict[str, str | None] = {}
    for i, head, n in zip(ids, heads, lengths):
        if isna(head):
            norm[i] = None
            continue
        form = _seeds.normalise(head, limit)
        if n > head_chars and len(form) <= limit:
            form = _seeds.normalise(content_of(i), limit)
        norm[i] = form

    by_norm: dict[str | None, list[str]] = {}
    for i, text in norm.items():
        by_norm.setdefault(text, []).append(i)
    live_ids = set(ctx.live["id"].astype("string"))
    amendments = ctx.frame("amendments")
    amended_from: dict[str, str] = {}
    if len(amendments):
        for block_id, pre in zip(
            amendments["block_id"].astype("string"), amendments["pre_content"]
        ):
            if not isna(pre) and block_id in records:
                amended_from.setdefault(_seeds.normalise(pre, limit), block_id)
    holders_by_tag: dict[str | None, list[str]] = {}
    for block_id, tag in zip(
        role_rows["block_id"].astype("string"), role_rows["tag"].astype("string")
    ):
        if block_id in live_ids:
            holders_by_tag.setdefault(tag, []).append(block_id)

    rows = []
    for slot in release.slots:
        seed_norm = _seeds.normalise(slot.content)
        # the block that was seeded: its content-derived id, else the same text (re-seeded),
        # else a block whose amendment started from the seeded text
        orig_id: str | None
        if slot.block_id in records:
            orig_id = slot.block_id
        elif by_norm.get(seed_norm):
            orig_id = by_norm[seed_norm][0]
        else:
            orig_id = amended_from.get(seed_norm)
        original = records.get(orig_id) if orig_id else None
        if role_era:
            holder_ids = holders_by_tag.get(slot.role_tag, [])
        else:
            holder_ids = [i for i in live_ids if i == slot.block_id or norm.get(i) == seed_norm]
        holder_ids = sorted(holder_ids, key=lambda i: (records[i]["created_at"], i))
        unchanged = any(norm.get(i) == seed_norm for i in holder_ids)
        seeded = original is not None or bool(holder_ids)
        state = (
            "not seeded"
            if not seeded
            else "lost"
            if not holder_ids
            else "unchanged"
            if unchanged
            else "changed"
        )
        first = records[holder_ids[0]] if holder_ids else None
        rows.append(
            {
                "role": slot.role,
                "role_tag": slot.role_tag or _seeds.CONSTITUTIONAL_TAG,
                "seeded_text": slot.content,
                "state": state,
                "live_blocks": len(holder_ids),
                "live_block_id": None if first is None else first["id"],
                "live_content": None if first is None else content_of(str(first["id"])),
                "live_created_at": pd.NaT if first is None else first["created_at"],
                "original_id": None if original is None else original["id"],
                "original_status": None if original is None else original["status"],
                "original_archive_reason": None if original is None else original["archive_reason"],
                "original_superseded_by": None if original is None else original["superseded_by"],
                "original_decay_lambda": np.nan if original is None else original["decay_lambda"],
                "original_confidence": np.nan if original is None else original["confidence"],
                "original_content_changed": (
                    None if original is None else norm.get(str(original["id"])) != seed_norm
                ),
            }
        )
    cons = pd.DataFrame(rows)
    for col in (
        "role",
        "role_tag",
        "seeded_text",
        "state",
        "live_block_id",
        "live_content",
        "original_id",
        "original_status",
        "original_archive_reason",
        "original_superseded_by",
    ):
        cons[col] = strings(cons, col, rows)
    cons["live_blocks"] = cons["live_blocks"].astype("Int64")
    cons["live_created_at"] = pd.to_datetime(cons["live_created_at"], utc=True)
    cons["original_content_changed"] = cons["original_content_changed"].astype("boolean")
    tables["constitution"] = cons

    states = [row["state"] for row in rows]  # cons["state"], as text
    n_seeded = sum(state != "not seeded" for state in states)
    left = sum(state in ("changed", "unchanged") for state in states)
    headline["seed_releases"] = release.label
    headline["role_slots_seeded"] = n_seeded
    headline["role_slots_left"] = left
    headline["role_slots_changed"] = states.count("changed")
    headline["role_slots_lost"] = states.count("lost")
    if not role_era:
        ctx.notes.append(
            f"seeded by elfmem {release.label} (no self/role/* tags): slots are "
            "recognised by their seeded text only, so a rewritten slot counts as lost"
        )
    if not n_seeded:
        ctx.notes.append("no constitutional seed found (setup() ran without seed=True)")

    # Blocks elfmem calls maximally protected, archived anyway (doc §2.3).
    arch = tables["archived"]
    permanent = arch["tier"].eq("PERMANENT").fillna(False).to_numpy(dtype=bool)
    pinned = arch["pinned"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    certain = (arch["confidence"] >= 1.0).fillna(False).to_numpy(dtype=bool)
    constitutional_ids = set(
        tags.loc[
            tag_text.eq(_seeds.CONSTITUTIONAL_TAG).fillna(False).to_numpy(), "block_id"
        ].astype("string")
    )
    chosen = permanent | pinned | certain
    why = [
        ", ".join(w for w, flag in (("PERMANENT", p), ("pinned", q), ("confidence 1.0", c)) if flag)
        for p, q, c in zip(permanent[chosen], pinned[chosen], certain[chosen])
    ]
    # only the columns the table shows are filtered; "why" goes in third
    prot = arch.loc[
        chosen,
        [
            "id",
            "archive_reason",
            "decay_lambda",
            "confidence",
            "seed_role",
            "superseded_by",
            "content",
        ],
    ]
    prot.insert(2, "why", pd.array(why, dtype="string"))
    prot = prot.reset_index(drop=True)
    tables["protected_superseded"] = prot
    headline["protected_archived"] = len(prot)
    headline["protected_superseded"] = int(prot["archive_reason"].eq("superseded").sum())
    headline["constitutional_tagged_live"] = len(constitutional_ids & live_ids)
