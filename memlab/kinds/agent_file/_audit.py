"""Audit of a Letta Agent File or blocks list: limits, sharing, prompt weight, read-only blocks."""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab._escape import terminal_lines
from memlab._metrics import max_limit_ratio
from memlab.audits._base import Audit, json_safe
from memlab.constants import CHARS_PER_TOKEN
from memlab.store import Store

__all__ = ["audit_agent_file"]


def _domain(label: Any) -> str:
    if not isinstance(label, str) or not label:
        return "(no label)"
    return label.split("/", 1)[0] if "/" in label else "(flat)"


def audit_agent_file(store: Store, **_: Any) -> Audit:
    """Evidence tables and headline numbers for a ``agent_file`` / ``letta_blocks`` store.

    Tables: ``blocks_over_limit`` (value longer than its ``limit``, worst first),
    ``shared_blocks`` (attached to more than one agent or shared by a group),
    ``prompt_chars`` (per agent: system prompt plus attached block values, as characters and
    chars/4 tokens, against the context window), ``read_only_blocks``, ``orphan_blocks``
    (in the file but attached to no agent), ``domains`` (blocks per first label segment) and
    ``problems``. ``as_of`` is taken and not used (nothing here ages); through
    :func:`memlab.audit` any other option, ``seconds_per_call`` included, is an
    :class:`~memlab.errors.UnknownOption`.
    """
    blocks = store.blocks
    pairs = store.block_agents
    agents = store.agents
    has_agents = store.kind == "agent_file"  # a blocks list (letta_blocks) names no agent

    over = blocks[blocks["over_limit"].fillna(False).astype(bool)].copy()
    over["excess"] = (over["chars"] - over["limit"]).astype("Int64")
    # A limit of 0 or below is a ``bad_field`` problem row; Letta still refuses every value
    # longer than it, so the block is over its limit, but a ratio to it means nothing.
    over["ratio"] = (over["chars"] / over["limit"].where(over["limit"] > 0)).astype("float64")
    over = over.sort_values(["excess", "block_id"], ascending=[False, True])[
        ["block_id", "label", "chars", "limit", "excess", "ratio", "n_agents", "read_only"]
    ].reset_index(drop=True)

    holders = (
        pairs.groupby("block_id", observed=True)["agent_id"].agg(lambda s: sorted(s.astype(str)))
        if not pairs.empty
        else pd.Series(dtype=object)
    )
    shared = blocks[blocks["shared"].fillna(False).astype(bool)].copy()
    shared["agents"] = [holders.get(b, []) for b in shared["block_id"]]
    shared = shared.sort_values(["n_agents", "block_id"], ascending=[False, True])[
        ["block_id", "label", "n_agents", "agents", "chars", "read_only"]
    ].reset_index(drop=True)

    read_only = blocks[blocks["read_only"].fillna(False).astype(bool)][
        ["block_id", "label", "chars", "limit", "n_agents"]
    ].reset_index(drop=True)
    orphans = blocks[blocks["n_agents"].fillna(-1) == 0][
        ["block_id", "label", "chars", "limit", "over_limit"]
    ].reset_index(drop=True)

    prompt = _prompt_chars(agents, blocks, pairs)

    domains = (
        blocks.assign(domain=[_domain(x) for x in blocks["label"]])
        .groupby("domain", observed=True)
        .agg(
            n_blocks=("block_id", "size"),
            chars=("chars", _known_sum),
            over_limit=("over_limit", lambda s: int(s.fillna(False).sum())),
        )
        .reset_index()
        .sort_values("chars", ascending=False)
        .reset_index(drop=True)
    )
    if not domains.empty:
        domains[["n_blocks", "chars", "over_limit"]] = domains[
            ["n_blocks", "chars", "over_limit"]
        ].astype("Int64")

    known_limit = blocks["limit"].notna()
    # a value past memlab's cap was not read (problems: oversized): its chars, and every sum
    # holding them, is null, not a smaller number
    unknown = bool(blocks["chars"].isna().any())
    prompt_unknown = bool(prompt["prompt_chars"].isna().any()) if len(prompt) else False
    headline: dict[str, Any] = {
        "schema": store.meta.get("schema"),
        "double_encoded": bool(store.meta.get("double_encoded")),
        "n_agents": len(agents),
        "n_blocks": len(blocks),
        "n_blocks_attached": int((blocks["n_agents"].fillna(0) > 0).sum()) if has_agents else None,
        "n_orphan_blocks": len(orphans) if has_agents else None,
        "n_blocks_over_limit": len(over),
        "n_blocks_without_limit": int((~known_limit).sum()),
        "over_limit_excess_chars": None
        if over["excess"].isna().any()
        else int(over["excess"].sum())
        if len(over)
        else 0,
        # every block with a limit, under it or over (the memfs audit's definition): None when
        # no block has one, or one of them was not read. Over 1 when a block with a
        # limit above 0 is over it (blocks_over_limit's ratio column, block by block)
        "max_limit_ratio": max_limit_ratio(blocks["chars"], blocks["limit"]),
        "n_shared_blocks": len(shared) if has_agents else None,
        # Legacy exports carry no read_only at all: unknown, not zero.
        "n_read_only_blocks": len(read_only)
        if blocks["read_only"].notna().any() or blocks.empty
        else None,
        "block_chars_total": None if unknown else int(blocks["chars"].sum()) if len(blocks) else 0,
        "block_tokens_est_total": None
        if unknown
        else float(blocks["chars"].sum() / CHARS_PER_TOKEN)
        if len(blocks)
        else 0.0,
        "max_prompt_chars": int(prompt["prompt_chars"].max())
        if len(prompt) and not prompt_unknown
        else None,
        "max_prompt_tokens_est": float(prompt["prompt_tokens_est"].max())
        if len(prompt) and not prompt_unknown
        else None,
        "max_context_share": (
            float(prompt["context_share"].max())
            if len(prompt) and prompt["context_share"].notna().any() and not prompt_unknown
            else None
        ),
        "n_values_not_read": len(store.meta.get("oversized_values") or []),
        "n_tools": len(store.tools),
        "n_messages": int(store.messages["n"].sum()) if len(store.messages) else 0,
        "problems": len(store.problems),
    }
    headline = json_safe(headline)

    notes = [
        "prompt_chars counts the system prompt and block values only; Letta adds labels, "
        "descriptions and tags around each block, so the real prompt is somewhat larger",
        "tokens are estimated as characters / 4",
    ]
    if store.meta.get("oversized_values"):
        notes.append(
            f"{headline['n_values_not_read']} value(s) past memlab's cap were not read "
            "(problems: oversized): their chars, and the totals and maxima that would "
            "hold them, are null (not known)"
        )
    if not has_agents:
        notes.append(
            "a blocks-API list does not say which agents hold a block, so sharing, "
            "orphans and prompt size are not known"
        )
    tables = {
        "blocks_over_limit": over,
        "shared_blocks": shared,
        "prompt_chars": prompt,
        "read_only_blocks": read_only,
        "orphan_blocks": orphans,
        "domains": domains,
        "problems": store.problems,
    }
    return Audit(
        kind=store.kind,
        store_name=store.name,
        tables=tables,
        headline=headline,
        summary_text=_summary(store, headline, over, prompt),
        notes=notes,
    )


def _known_sum(s: pd.Series) -> Any:
    """The sum, or NA when a value in it is unknown."""
    return s.sum() if s.notna().all() else pd.NA


def _prompt_chars(agents: pd.DataFrame, blocks: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    columns = [
        "agent_id",
        "name",
        "n_blocks",
        "system_chars",
        "block_chars",
        "prompt_chars",
        "prompt_tokens_est",
        "context_window",
        "context_share",
        "n_over_limit",
    ]
    if agents.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    sizes = blocks.drop_duplicates("block_id")[["block_id", "chars", "over_limit"]]
    joined = pairs.merge(sizes, on="block_id", how="left")
    per_agent = joined.groupby("agent_id", observed=True).agg(
        block_chars=("chars", "sum"),
        n_over_limit=("over_limit", lambda s: int(s.fillna(False).sum())),
    )
    out = agents[["agent_id", "name", "n_blocks", "system_chars", "context_window"]].merge(
        per_agent, left_on="agent_id", right_index=True, how="left"
    )
    out["block_chars"] = out["block_chars"].fillna(0).astype("Int64")
    unread = set(blocks.loc[blocks["chars"].isna(), "block_id"].astype(str))
    if unread:  # an agent holding a value not read: its block characters are not known
        hit = joined.loc[joined["block_id"].astype(str).isin(unread), "agent_id"].unique()
        out.loc[out["agent_id"].isin(hit), "block_chars"] = pd.NA
    out["n_over_limit"] = out["n_over_limit"].fillna(0).astype("Int64")
    out["prompt_chars"] = (out["system_chars"] + out["block_chars"]).astype("Int64")
    out["prompt_tokens_est"] = out["prompt_chars"].astype("float64") / CHARS_PER_TOKEN
    out["context_share"] = (
        out["prompt_tokens_est"] / out["context_window"].astype("float64")
    ).astype("float64")
    return out[columns].sort_values("prompt_chars", ascending=False).reset_index(drop=True)


def _summary(store: Store, h: dict[str, Any], over: pd.DataFrame, prompt: pd.DataFrame) -> str:
    lines = [
        f"{store.name}: Letta {h['schema']} file"
        + (" (double-encoded)" if h["double_encoded"] else "")
        + f", {h['n_agents']} agent(s), {h['n_blocks']} block(s), {h['n_tools']} tool(s)"
    ]
    if h["n_orphan_blocks"]:
        lines.append(f"  {h['n_orphan_blocks']} block(s) attached to no agent")
    lines.append(
        f"  {h['n_blocks_over_limit']} block(s) over their limit"
        + (
            f", {h['over_limit_excess_chars']:,} chars past it in total"
            if len(over) and h["over_limit_excess_chars"] is not None
            else ""
        )
    )
    for row in over.head(5).itertuples(index=False):
        if pd.isna(row.chars):
            lines.append(
                f"    {row.label}: a value past memlab's cap (not read) / {int(row.limit):,} chars"
            )
            continue
        ratio = f"{row.ratio:.1f}x" if pd.notna(row.ratio) else "limit not positive"
        lines.append(f"    {row.label}: {int(row.chars):,} / {int(row.limit):,} chars ({ratio})")
    if h["n_shared_blocks"]:
        lines.append(f"  {h['n_shared_blocks']} block(s) shared by several agents")
    if h["n_read_only_blocks"] is not None:
        lines.append(f"  {h['n_read_only_blocks']} read-only block(s)")
    for row in prompt.head(5).itertuples(index=False):
        if pd.isna(row.prompt_tokens_est):
            lines.append(
                f"  {row.agent_id} ({row.name}): prompt size not known (a value past "
                "memlab's cap was not read)"
            )
            continue
        window = (
            f" of {int(row.context_window):,}-token window ({row.context_share:.1%})"
            if pd.notna(row.context_window)
            else ""
        )
        lines.append(
            f"  {row.agent_id} ({row.name}): ~{row.prompt_tokens_est:,.0f} tokens of "
            f"system + blocks{window}"
        )
    if h["problems"]:
        lines.append(f"  {h['problems']} problem(s) while reading; see tables['problems']")
    return terminal_lines(lines)
