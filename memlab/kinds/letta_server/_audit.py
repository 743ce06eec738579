"""Audit of a Letta server database: core memory per agent, sharing, who edited what, undo/redo.

Reads a ``letta_server`` store (:func:`memlab.kinds.letta_server._load.load_letta_server`). Soft-
deleted blocks (``is_deleted``) are listed apart and counted nowhere else.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab._escape import terminal_lines
from memlab._metrics import max_limit_ratio
from memlab.audits._base import Audit, json_safe
from memlab.audits._integrity import letta_server_integrity
from memlab.constants import CHARS_PER_TOKEN, MAX_VALUE_BYTES, STALE_AFTER_DAYS
from memlab.store import Store, parse_as_of

__all__ = ["audit_letta_server", "STALE_AFTER_DAYS"]


def audit_letta_server(
    store: Store, *, as_of: Any = None, stale_after_days: int = STALE_AFTER_DAYS
) -> Audit:
    """Evidence tables and headline numbers for a Letta server database.

    Tables: ``core_memory`` (per agent: its live blocks' characters against the sum of their
    limits, blocks over limit, system prompt, estimated tokens against the context window),
    ``blocks_over_limit``, ``shared_blocks`` (fan-out: the agents holding each block and who
    checkpointed it), ``edit_history`` (per block: checkpoints by agents, by users and by
    unknown actors, first/last, current sequence, undone, edited after its checkpoint),
    ``history_by_actor`` (per actor: checkpoints and blocks), ``undo_redo`` (blocks whose
    current state is an earlier checkpoint than their latest: undone, with redo available),
    ``read_only_edited`` (read-only blocks with checkpoints that changed the value, and by
    whom), ``stale_blocks`` (attached, not written for ``stale_after_days`` before ``as_of``),
    ``deleted_blocks``, ``integrity`` (checkpoint chains only a direct write to the tables
    makes: gaps, duplicates, a current entry of another block or none, label or organisation
    mismatches, time running backwards, a value no checkpoint holds with no later write; see
    :mod:`memlab.audits._integrity`) and ``problems``.

    Example::

        a = memlab.audit("postgresql://memlab_ro@localhost/letta", as_of="2026-12-01")
        a["edit_history"].query("undone")
    """
    when = parse_as_of(as_of)
    deleted_mask = store.blocks["is_deleted"].fillna(False).astype(bool)
    blocks = store.blocks[~deleted_mask]
    deleted = store.blocks[deleted_mask][
        ["block_id", "label", "chars", "updated_at", "_last_updated_by_id"]
    ].reset_index(drop=True)
    agents = store.agents[~store.agents["is_deleted"].fillna(False).astype(bool)]
    links = store.block_agents[
        store.block_agents["block_id"].isin(blocks["block_id"])
        & store.block_agents["agent_id"].isin(agents["agent_id"])
    ]
    hist = store.block_history[store.block_history["block_id"].isin(blocks["block_id"])]
    names = dict(zip(store.agents["agent_id"].astype(str), store.agents["name"].astype(str)))
    users = dict(zip(store.users["user_id"].astype(str), store.users["name"].astype(str)))
    holders = links.groupby("block_id")["agent_id"].agg(
        lambda s: sorted(names.get(str(a), str(a)) for a in s)
    )

    core = _core_memory(agents, blocks, links)
    over = blocks[blocks["over_limit"].fillna(False).astype(bool)].copy()
    over["excess"] = (over["chars"] - over["limit"]).astype("Int64")
    over["agents"] = [holders.get(b, []) for b in over["block_id"]]
    over = over.sort_values(["excess", "block_id"], ascending=[False, True])[
        ["block_id", "label", "chars", "limit", "excess", "agents", "read_only"]
    ].reset_index(drop=True)

    editors = hist.groupby("block_id")["actor_id"].agg(
        lambda s: sorted({names.get(str(a)) or users.get(str(a)) or str(a) for a in s.dropna()})
    )
    shared = blocks[blocks["shared"].fillna(False).astype(bool)].copy()
    shared["agents"] = [holders.get(b, []) for b in shared["block_id"]]
    shared["editors"] = [editors.get(b, []) for b in shared["block_id"]]
    shared = shared.sort_values(["n_agents", "block_id"], ascending=[False, True])[
        ["block_id", "label", "n_agents", "agents", "chars", "history_len", "editors"]
    ].reset_index(drop=True)

    unread = _unread_blocks(store, hist)
    edits = _edit_history(blocks, hist, holders, unread)
    by_actor = _by_actor(hist, names, users)
    undo = edits[edits["undone"]][
        ["block_id", "label", "agents", "checkpoints", "current_sequence", "redo_available"]
    ].reset_index(drop=True)
    ro_ids = set(blocks[blocks["read_only"].fillna(False).astype(bool)]["block_id"])
    read_only_edited = edits[
        edits["block_id"].isin(ro_ids) & (edits["value_changes"] > 0).fillna(False).astype(bool)
    ][
        ["block_id", "label", "agents", "checkpoints", "value_changes", "by_agent", "by_user"]
    ].reset_index(drop=True)
    attached = blocks[blocks["n_agents"].fillna(0) > 0]
    age = (when - attached["updated_at"]).dt.total_seconds() / 86400.0
    stale = attached.assign(
        days_since_update=age.round(1), agents=[holders.get(b, []) for b in attached["block_id"]]
    )
    stale = (
        stale[stale["days_since_update"] >= stale_after_days]
        .sort_values("days_since_update", ascending=False)[
            [
                "block_id",
                "label",
                "agents",
                "updated_at",
                "days_since_update",
                "_last_updated_by_id",
            ]
        ]
        .reset_index(drop=True)
    )

    integrity = letta_server_integrity(store)
    kinds = hist["actor_kind"].astype(str).value_counts()
    # Who edited, undo/redo and checkpoint drift are read from block_history: with no
    # checkpoint of any live block they were not recorded, so None, never 0. Without the
    # table at all, not even its row count is known.
    absent = "block_history" in (store.meta.get("absent") or {})
    recorded = not hist.empty

    def known(value: Any) -> Any:
        return value if recorded else None

    headline: dict[str, Any] = {
        "letta_release": store.meta.get("letta_release"),
        "n_agents": len(agents),
        "n_blocks": len(blocks),
        "n_deleted_blocks": len(deleted),
        "n_shared_blocks": len(shared),
        "max_fan_out": int(blocks["n_agents"].max()) if len(blocks) else 0,
        "n_blocks_over_limit": len(over),
        "over_limit_excess_chars": int(over["excess"].sum()) if len(over) else 0,
        # the largest chars / limit of a live block with a limit (the memfs audit's
        # definition; chars the database's own count where a value was not read)
        "max_limit_ratio": max_limit_ratio(blocks["chars"], blocks["limit"]),
        "max_core_memory_share": (
            float(core["limit_share"].max())
            if len(core) and core["limit_share"].notna().any()
            else None
        ),
        "history_rows": None if absent else len(hist),
        "history_by_agent": known(int(kinds.get("agent", 0))),
        "history_by_user": known(int(kinds.get("server_user", 0))),
        "history_by_unknown": known(int(kinds.get("unknown", 0))),
        "n_blocks_with_history": None if absent else int(hist["block_id"].nunique()),
        "n_blocks_undone": known(len(undo)),
        "n_blocks_edited_after_checkpoint": known(int(edits["edited_after_checkpoint"].sum())),
        "n_read_only_edited": known(len(read_only_edited)),
        "n_stale_blocks": len(stale),
        "stale_after_days": stale_after_days,
        "as_of": when.isoformat(),
        "problems": len(store.problems),
        # values past memlab's cap, not read (problems: oversized)
        "n_values_not_read": len(store.meta.get("oversized_values") or []),
        # checkpoint chains a real server cannot make on its own (memlab.audits._integrity)
        # None, never 0, where nothing could be judged (no block_history table), with
        # integrity_reason saying so: one key, one meaning in both kinds (memfs: no reflogs)
        "integrity_findings": len(integrity) if integrity.attrs.get("checked", True) else None,
        "integrity_reason": integrity.attrs.get("reason"),
    }
    headline = json_safe(headline)
    notes = [
        "core memory counts block values only; Letta adds labels, descriptions and "
        "metadata around each block in the prompt; tokens are characters / 4"
    ]
    if store.meta.get("oversized_values"):
        notes.append(
            f"{headline['n_values_not_read']} value(s) past memlab's "
            f"{MAX_VALUE_BYTES:,}-byte cap were not read (problems: oversized): their "
            "chars are the database's own count; value_changes and "
            "edited_after_checkpoint of their blocks are null (not checked)"
        )
    if hist.empty:
        notes.append(
            "block_history is empty (no server code path checkpoints a block): who "
            "edited what is known only from updated_at and _last_updated_by_id"
        )
    tables = {
        "core_memory": core,
        "blocks_over_limit": over,
        "shared_blocks": shared,
        "edit_history": edits,
        "history_by_actor": by_actor,
        "undo_redo": undo,
        "read_only_edited": read_only_edited,
        "stale_blocks": stale,
        "deleted_blocks": deleted,
        "integrity": integrity,
        "problems": store.problems,
    }
    return Audit(
        kind=store.kind,
        store_name=store.name,
        tables=tables,
        headline=headline,
        summary_text=_summary(store, headline, core, shared, undo, read_only_edited, integrity),
        notes=notes,
    )


def _core_memory(agents: pd.DataFrame, blocks: pd.DataFrame, links: pd.DataFrame) -> pd.DataFrame:
    sizes = blocks[["block_id", "chars", "limit", "over_limit"]]
    joined = links.merge(sizes, on="block_id", how="inner")
    per = joined.groupby("agent_id").agg(
        n_blocks=("block_id", "size"),
        block_chars=("chars", "sum"),
        limit_chars=("limit", "sum"),
        n_over_limit=("over_limit", lambda s: int(s.fillna(False).sum())),
    )
    out = agents[["agent_id", "name", "system_chars", "context_window"]].merge(
        per, left_on="agent_id", right_index=True, how="left"
    )
    for col in ("n_blocks", "block_chars", "limit_chars", "n_over_limit"):
        out[col] = out[col].fillna(0).astype("Int64")
    out["limit_share"] = out["block_chars"].astype("float64") / out["limit_chars"].astype(
        "float64"
    ).where(out["limit_chars"] > 0)
    out["prompt_tokens_est"] = (out["system_chars"].fillna(0) + out["block_chars"]).astype(
        "float64"
    ) / CHARS_PER_TOKEN
    out["context_share"] = out["prompt_tokens_est"] / out["context_window"].astype("float64")
    cols = [
        "agent_id",
        "name",
        "n_blocks",
        "block_chars",
        "limit_chars",
        "limit_share",
        "n_over_limit",
        "system_chars",
        "prompt_tokens_est",
        "context_window",
        "context_share",
    ]
    return (
        out[cols]
        .sort_values(["block_chars", "agent_id"], ascending=[False, True])
        .reset_index(drop=True)
    )


def _unread_blocks(store: Store, hist: pd.DataFrame) -> set[str]:
    """Blocks whose value, or one of whose checkpoints' values, was past the cap and not read."""
    big = store.meta.get("oversized_values") or []
    out = {str(o["id"]) for o in big if o["table"] == "block"}
    entries = {str(o["id"]) for o in big if o["table"] == "block_history"}
    if entries:
        out |= set(hist.loc[hist["history_id"].astype(str).isin(entries), "block_id"].astype(str))
    return out


def _edit_history(
    blocks: pd.DataFrame, hist: pd.DataFrame, holders: pd.Series, unread: set[str]
) -> pd.DataFrame:
    rows = []
    groups = {b: g for b, g in hist.groupby("block_id")}
    for rec in blocks.to_dict("records"):
        b = pd.Series(rec)
        g: Any = groups.get(b.block_id)
        n = 0 if g is None else len(g)
        kinds = g["actor_kind"].astype(str).value_counts() if n else pd.Series(dtype=int)
        values = (
            [] if g is None else [None if pd.isna(v) else str(v) for v in g["value"].astype(object)]
        )
        changes: int | None = sum(1 for a, c in zip(values, values[1:]) if a != c)
        latest = int(g["sequence_number"].max()) if n else None
        current = None if pd.isna(b.current_sequence) else int(b.current_sequence)
        at: Any = (
            g[g["sequence_number"] == current]
            if current is not None and n
            else g.tail(1)
            if n
            else None
        )
        mine = None if pd.isna(b.value) else str(b.value)
        after: bool | None = bool(
            n
            and at is not None
            and len(at)
            and (None if pd.isna(at["value"].iloc[0]) else str(at["value"].iloc[0])) != mine
        )
        if str(b.block_id) in unread:  # a value not read: whether it changed is not checked
            changes, after = None, None
        rows.append(
            {
                "block_id": b.block_id,
                "label": b.label,
                "agents": holders.get(b.block_id, []),
                "checkpoints": n,
                "by_agent": int(kinds.get("agent", 0)),
                "by_user": int(kinds.get("server_user", 0)),
                "by_unknown": int(kinds.get("unknown", 0)),
                "value_changes": changes,
                "first_at": g["created_at"].min() if n else pd.NaT,
                "last_at": g["created_at"].max() if n else pd.NaT,
                "current_sequence": current,
                "latest_sequence": latest,
                "undone": bool(current is not None and latest is not None and current < latest),
                "redo_available": (latest - current) if current is not None and latest else 0,
                "edited_after_checkpoint": after,
                "version": b.version,
                "updated_at": b.updated_at,
                "last_updated_by": rec["_last_updated_by_id"],
            }
        )
    df = pd.DataFrame(
        rows,
        columns=[
            "block_id",
            "label",
            "agents",
            "checkpoints",
            "by_agent",
            "by_user",
            "by_unknown",
            "value_changes",
            "first_at",
            "last_at",
            "current_sequence",
            "latest_sequence",
            "undone",
            "redo_available",
            "edited_after_checkpoint",
            "version",
            "updated_at",
            "last_updated_by",
        ],
    )
    for col in (
        "checkpoints",
        "by_agent",
        "by_user",
        "by_unknown",
        "value_changes",
        "current_sequence",
        "latest_sequence",
        "redo_available",
        "version",
    ):
        df[col] = df[col].astype("Int64")
    for col in ("first_at", "last_at", "updated_at"):
        df[col] = pd.to_datetime(df[col], utc=True)
    for col in ("undone", "edited_after_checkpoint"):
        df[col] = df[col].astype("boolean")
    return df.sort_values(["checkpoints", "block_id"], ascending=[False, True]).reset_index(
        drop=True
    )


def _by_actor(hist: pd.DataFrame, names: dict, users: dict) -> pd.DataFrame:
    cols = ["actor_kind", "actor_id", "actor_name", "checkpoints", "blocks", "first_at", "last_at"]
    if hist.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    g = hist.assign(actor_id=hist["actor_id"].fillna("?")).groupby(
        ["actor_kind", "actor_id"], observed=True
    )
    out = g.agg(
        checkpoints=("history_id", "size"),
        blocks=("block_id", "nunique"),
        first_at=("created_at", "min"),
        last_at=("created_at", "max"),
    ).reset_index()
    out["actor_name"] = [names.get(str(a)) or users.get(str(a)) for a in out["actor_id"]]
    out[["checkpoints", "blocks"]] = out[["checkpoints", "blocks"]].astype("Int64")
    return (
        out[cols]
        .sort_values(["checkpoints", "actor_id"], ascending=[False, True])
        .reset_index(drop=True)
    )


def _summary(
    store: Store,
    h: dict[str, Any],
    core: pd.DataFrame,
    shared: pd.DataFrame,
    undo: pd.DataFrame,
    ro: pd.DataFrame,
    integrity: pd.DataFrame,
) -> str:
    lines = [
        f"{store.name}: Letta server database ({h['letta_release']}), {h['n_agents']} "
        f"agent(s), {h['n_blocks']} live block(s), {h['n_deleted_blocks']} deleted"
    ]
    for row in core.head(8).itertuples(index=False):
        share = f" ({row.limit_share:.0%} of their limits)" if pd.notna(row.limit_share) else ""
        lines.append(
            f"  {row.name}: {int(row.n_blocks)} block(s), {int(row.block_chars):,} chars"
            f"{share}" + (f", {int(row.n_over_limit)} over limit" if row.n_over_limit else "")
        )
    lines.append(f"  {h['n_blocks_over_limit']} block(s) over their limit")
    for row in shared.head(5).itertuples(index=False):
        lines.append(
            f"  shared: {row.label} held by {', '.join(row.agents)}"
            + (f"; checkpointed by {', '.join(map(str, row.editors))}" if row.editors else "")
        )
    if h["history_rows"]:
        lines.append(
            f"  history: {h['history_rows']} checkpoint(s) on {h['n_blocks_with_history']}"
            f" block(s): {h['history_by_agent']} by agents, {h['history_by_user']} by "
            f"users, {h['history_by_unknown']} by unknown actors"
        )
    elif "block_history" in (store.meta.get("absent") or {}):
        lines.append("  history: none (this database has no block_history table)")
    else:
        lines.append("  history: none (block_history is empty; the server never checkpointed)")
    for row in undo.itertuples(index=False):
        lines.append(
            f"  undone: {row.label} ({', '.join(row.agents)}) is at checkpoint "
            f"{int(row.current_sequence)} of {int(row.checkpoints)}; "
            f"{int(row.redo_available)} redo available"
        )
    if h["n_blocks_edited_after_checkpoint"]:
        lines.append(
            f"  {h['n_blocks_edited_after_checkpoint']} block(s) changed after their "
            "current checkpoint"
        )
    for row in ro.itertuples(index=False):
        lines.append(
            f"  read-only {row.label} ({', '.join(row.agents)}) changed "
            f"{int(row.value_changes)} time(s) in its history "
            f"({int(row.by_agent)} agent / {int(row.by_user)} user checkpoint(s))"
        )
    lines.append(f"  {h['n_stale_blocks']} block(s) unwritten for {h['stale_after_days']}+ days")
    if h["integrity_findings"] is None:
        lines.append(f"  integrity: not checked ({h['integrity_reason']})")
    else:
        lines.append(
            f"  integrity: {h['integrity_findings']} checkpoint-chain finding(s) "
            "only a direct "
            "write to the tables makes"
            + ("; see tables['integrity']" if h["integrity_findings"] else "")
        )
    for row in integrity.head(10).itertuples(index=False):
        lines.append(f"    {row.kind}: {row.ref}: {row.detail}")
    if h["problems"]:
        lines.append(f"  {h['problems']} problem(s) while reading; see tables['problems']")
    return terminal_lines(lines)
