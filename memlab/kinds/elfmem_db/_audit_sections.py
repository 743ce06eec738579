"""The elfmem audit's table sections (§2.1, §2.2, the session clock, tags, §2.4-§2.6) and
the Gini/Lorenz helpers the reinforcement section uses.

Each ``_section(ctx, tables, headline)`` adds its tables and headline metrics for
:func:`memlab.kinds.elfmem_db._audit.audit_elfmem`; the constitution (§2.3) is in
:mod:`memlab.kinds.elfmem_db._audit_constitution`. :func:`gini` and :func:`lorenz` are public
through :mod:`memlab.kinds.elfmem_db._audit`.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from memlab._metrics import METRICS
from memlab._metrics import value as metric_value
from memlab.audits import seeds as _seeds
from memlab.constants import (
    CHARS_PER_TOKEN,
    DECAY_LAMBDA,
    LAMBDA_CEILING,
    PENALTY_FACTOR,
    PRUNE_THRESHOLD,
    is_penalised,
    tier_of_lambda,
)
from memlab.kinds.elfmem_db._audit_context import CAVEAT, Context, as_int, isna, num, strings

__all__ = [
    "gini",
    "lorenz",
    "archival_section",
    "clock_section",
    "cost_section",
    "reinforcement_section",
    "staleness_section",
    "subsystems_section",
    "tags_section",
]


# ── public helpers ────────────────────────────────────────────────────────────────────────


def gini(values: Any) -> float:
    """Gini coefficient of non-negative counts (0 = equal, →1 = one block holds everything)."""
    x = np.sort(np.asarray(pd.Series(values).dropna(), dtype="float64"))
    if x.size == 0 or x.sum() == 0:
        return float("nan")
    n = x.size
    ranks = np.arange(1, n + 1)
    return float((2.0 * (ranks * x).sum()) / (n * x.sum()) - (n + 1.0) / n)


def lorenz(values: Any) -> pd.DataFrame:
    """Lorenz curve points: cumulative share of blocks (poorest first) vs share of the total."""
    x = np.sort(np.asarray(pd.Series(values).dropna(), dtype="float64"))
    total = x.sum()
    n = x.size
    share_blocks = np.concatenate([[0.0], np.arange(1, n + 1) / n]) if n else np.array([0.0])
    share_total = (
        np.concatenate([[0.0], np.cumsum(x) / total])
        if n and total
        else np.zeros_like(share_blocks)
    )
    return pd.DataFrame({"share_of_blocks": share_blocks, "share_of_reinforcement": share_total})


# ── §2.1 cost ─────────────────────────────────────────────────────────────────────────────


def cost_section(ctx: Context, tables: dict, headline: dict) -> None:
    calls = ctx.cfg("llm_calls")
    tin, tout = ctx.cfg("llm_input_tokens"), ctx.cfg("llm_output_tokens")
    if calls is None and tin is None:
        ctx.notes.append(
            "system_config has no lifetime_token_usage (written only at "
            "end_session() with a TokenCounter attached): cost figures are NA"
        )
    elif num(tin) == 0 and num(calls) > 0:
        ctx.notes.append(
            "LLM calls were counted but input tokens are 0: the model server "
            "reports no token usage (common for local servers)"
        )
    live_chars = int(ctx.active["content_chars"].fillna(0).sum())
    summary_chars = int(ctx.active["summary_chars"].fillna(0).sum())
    live_tokens, estimated_share, missing = _live_tokens(ctx)
    summary_tokens = summary_chars / CHARS_PER_TOKEN
    active = len(ctx.active)
    rows = [
        ("llm_calls", calls, "calls"),
        ("llm_input_tokens", tin, "tokens"),
        ("llm_output_tokens", tout, "tokens"),
        ("embedding_calls", ctx.cfg("embedding_calls"), "calls"),
        ("embedding_tokens", ctx.cfg("embedding_tokens"), "tokens"),
        ("blocks_ever", len(ctx.blocks), "blocks"),
        ("blocks_active", active, "blocks"),
        ("blocks_inbox", len(ctx.inbox), "blocks"),
        ("blocks_archived", len(ctx.archived), "blocks"),
        ("live_chars", live_chars, "chars"),
        ("live_tokens", live_tokens, "tokens (elfmem's token_count; chars/4 where missing)"),
        ("live_tokens_est_share", estimated_share, "share of live_tokens from chars/4"),
        ("summary_chars", summary_chars, "chars"),
        ("summary_tokens", summary_tokens, "tokens (chars/4)"),
        # the three ratios are memlab._metrics records: their formulas, computed here once
        ("calls_per_surviving_block", None, METRICS["calls_per_surviving_block"].unit),
        ("input_per_corpus_token", None, METRICS["input_per_corpus_token"].unit),
        ("input_per_summary_token", None, METRICS["input_per_summary_token"].unit),
        (
            "gpu_hours",
            num(calls) * ctx.seconds_per_call / 3600.0,
            f"hours at {ctx.seconds_per_call:g} s/call",
        ),
    ]
    values = {metric: value for metric, value, _ in rows}
    for metric in (
        "calls_per_surviving_block",
        "input_per_corpus_token",
        "input_per_summary_token",
    ):
        values[metric] = metric_value(metric, values)
    rows = [(metric, values[metric], unit) for metric, _, unit in rows]
    cost = pd.DataFrame(rows, columns=["metric", "value", "unit"])
    cost["value"] = pd.to_numeric(cost["value"], errors="coerce").astype("float64")
    cost["metric"] = cost["metric"].astype("string")
    cost["unit"] = cost["unit"].astype("string")
    tables["cost"] = cost
    for metric in (
        "llm_calls",
        "llm_input_tokens",
        "llm_output_tokens",
        "embedding_calls",
        "embedding_tokens",
        "blocks_ever",
        "blocks_active",
        "blocks_inbox",
        "blocks_archived",
        "live_chars",
        "summary_chars",
    ):
        headline[metric] = as_int(values[metric])
    headline["live_blocks_uncounted"] = missing
    for metric in (
        "live_tokens",
        "live_tokens_est_share",
        "summary_tokens",
        "calls_per_surviving_block",
        "input_per_corpus_token",
        "input_per_summary_token",
        "gpu_hours",
    ):
        headline[metric] = num(values[metric])
    headline["seconds_per_call"] = ctx.seconds_per_call


def _live_tokens(ctx: Context) -> tuple[float, float, int]:
    """``(live tokens, the share of them estimated, active blocks without a count)``.

    elfmem records each block's ``token_count`` when it stores the block; that count is used
    where recorded, and chars / 4 (the doc's rule) only for active blocks where it is NULL or
    the column does not exist. The share is of the token total, NaN when there are none."""
    active = ctx.active
    chars = active["content_chars"].astype("Float64").fillna(0).astype("float64")
    if "token_count" in ctx.blocks.columns:
        counts = ctx.heavy(active, "token_count").astype("Float64")
    else:
        counts = pd.Series(pd.NA, index=active.index, dtype="Float64")
    missing = counts.isna().to_numpy(dtype=bool)
    recorded = float(counts.fillna(0).astype("float64").sum())
    estimated = float(chars[missing].sum()) / CHARS_PER_TOKEN
    total = recorded + estimated
    return total, (estimated / total if total else float("nan")), int(missing.sum())


# ── §2.2 archival ─────────────────────────────────────────────────────────────────────────


def archival_section(ctx: Context, tables: dict, headline: dict) -> None:
    arch = ctx.archived
    reasons = arch["archive_reason"].astype("string").fillna("(none recorded)")
    counts = reasons.value_counts()
    table = pd.DataFrame(
        {
            "archive_reason": counts.index.astype("string"),
            "count": counts.to_numpy().astype("int64"),
        }
    )
    table["share"] = table["count"] / max(1, len(arch))
    table = table.sort_values(
        ["count", "archive_reason"], ascending=[False, True], ignore_index=True
    )
    table["count"] = table["count"].astype("Int64")
    tables["archive_reasons"] = table

    ids = ctx.blocks["id"].astype("string")
    status_by_id = dict(zip(ids, ctx.status))
    succ = dict(zip(ids, ctx.blocks["superseded_by"].astype("string")))
    recorded = ctx.schema >= 6 and "superseded_by" in ctx.store.meta.get("columns", {}).get(
        "blocks", ["superseded_by"]
    )

    def chain(block_id: str) -> tuple[str | None, int, str | None]:
        """Follow superseded_by to the block that finally holds the text."""
        seen, cur = {block_id}, block_id
        steps = 0
        while True:
            nxt = succ.get(cur)
            if nxt is None or isna(nxt) or nxt in seen:
                break
            seen.add(nxt)
            cur, steps = nxt, steps + 1
        return (cur if steps else None), steps, (status_by_id.get(cur) if steps else None)

    rows = []
    contents = ctx.heavy(arch, "content")
    # The values iterrows() would give (one object array of the columns read, row by row),
    # without building a Series for every row.
    fields = [
        "id",
        "category",
        "created_at",
        "decay_lambda",
        "confidence",
        "pinned",
        "reinforcement_count",
        "superseded_by",
    ]
    values = arch[fields].to_numpy(dtype=object)
    reason_of = reasons.to_dict() if reasons.index.is_unique else None
    for label, row, text in zip(arch.index, values, contents):
        b = dict(zip(fields, row))
        end, steps, end_status = chain(str(b["id"]))
        rows.append(
            {
                "id": b["id"],
                "archive_reason": reasons.loc[label] if reason_of is None else reason_of[label],
                "category": b["category"],
                "created_at": b["created_at"],
                "decay_lambda": b["decay_lambda"],
                "tier": _tier(b["decay_lambda"]),
                "confidence": b["confidence"],
                "pinned": b["pinned"],
                "reinforcement_count": b["reinforcement_count"],
                "seed_role": _seeds.match_seed(text, b["id"]),
                "superseded_by": b["superseded_by"],
                "chain_end": end,
                "chain_length": steps,
                "chain_end_status": end_status,
            }
        )
    archived = pd.DataFrame(
        rows,
        columns=[
            "id",
            "archive_reason",
            "category",
            "created_at",
            "decay_lambda",
            "tier",
            "confidence",
            "pinned",
            "reinforcement_count",
            "seed_role",
            "superseded_by",
            "chain_end",
            "chain_length",
            "chain_end_status",
        ],
    )
    archived["content"] = contents.astype("string").reset_index(drop=True)
    for col in (
        "id",
        "archive_reason",
        "seed_role",
        "superseded_by",
        "chain_end",
        "chain_end_status",
        "tier",
    ):
        archived[col] = strings(archived, col, rows)
    archived["chain_length"] = archived["chain_length"].astype("Int64")
    archived["created_at"] = pd.to_datetime(archived["created_at"], utc=True)
    tables["archived"] = archived
    if not recorded:
        ctx.notes.append(
            f"schema {ctx.schema} has no blocks.superseded_by (added in schema 6): "
            "which block superseded which was never recorded"
        )

    by = dict(zip(table["archive_reason"], table["count"]))
    sup, dec = int(by.get("superseded", 0)), int(by.get("decayed", 0))
    headline["archived_superseded"] = sup
    headline["archived_decayed"] = dec
    headline["archived_forgotten"] = int(by.get("forgotten", 0))
    headline["archived_other"] = int(len(arch) - sup - dec - by.get("forgotten", 0))
    # the doc's §10 test: a ~40:1 ratio elsewhere closes the case. None when nothing decayed.
    headline["supersession_to_decay"] = sup / dec if dec else None
    # two meanings, two names (memlab._metrics): of all archived, and of all ever created
    for metric in ("supersession_share", "superseded_of_created"):
        headline[metric] = metric_value(metric, headline)
    headline["superseded_by_recorded"] = bool(recorded)


def _tier(lam: Any) -> str | None:
    if isna(lam):
        return None
    return tier_of_lambda(lam) or "other"


# ── session clock and recency ─────────────────────────────────────────────────────────────


def clock_section(ctx: Context, tables: dict, headline: dict) -> None:
    sessions = ctx.frame("sessions")
    hours = num(ctx.cfg("total_active_hours"))
    n = len(sessions)
    durations = sessions["duration_s"] if "duration_s" in sessions else pd.Series(dtype=float)
    prune = num(ctx.cfg("prune_threshold"))
    prune = prune if math.isfinite(prune) and prune > 0 else PRUNE_THRESHOLD
    clock = pd.DataFrame(
        [
            {
                "total_active_hours": hours,
                "sessions": n,
                "mean_session_s": hours * 3600.0 / n
                if n and math.isfinite(hours)
                else float("nan"),
                "median_session_s": float(durations.median())
                if durations.notna().any()
                else float("nan"),
                "first_session": sessions["started_at"].min() if n else pd.NaT,
                "last_session": sessions["started_at"].max() if n else pd.NaT,
                "prune_threshold": prune,
                "last_curate_at_hours": num(ctx.cfg("last_curate_at")),
            }
        ]
    )
    tables["clock"] = clock

    # Both tables from numpy columns in one constructor each (the same arithmetic as on the
    # Series, without a pandas operation per column).
    lam = np.asarray(list(DECAY_LAMBDA.values()))
    to_prune = math.log(1.0 / prune) / lam
    tiers = pd.DataFrame(
        {
            "tier": pd.array(list(DECAY_LAMBDA), dtype="string"),
            "decay_lambda": lam,
            "recency_after_lifetime": np.exp(-lam * hours),
            "half_life_hours": math.log(2) / lam,
            "hours_to_prune": to_prune,
            "lifetimes_to_prune": to_prune / hours if hours else float("nan"),
        }
    )
    tables["recency_tiers"] = tiers

    live = ctx.live
    since = (hours - live["last_reinforced_at"]).clip(lower=0.0)
    recency = np.exp(-live["decay_lambda"].to_numpy() * since.to_numpy())
    per_block = pd.DataFrame(
        {
            "id": live["id"].astype("string").array,
            "status": live["status"].array,
            "category": live["category"].array,
            "decay_lambda": live["decay_lambda"].array,
            "tier": live["decay_lambda"].map(_tier).astype("string").array,
            "penalised": live["decay_lambda"].map(is_penalised).astype("boolean").array,
            "last_reinforced_at": live["last_reinforced_at"].array,
            "hours_since": since.array,
            "recency": recency,
            "below_prune": pd.array(recency < prune, dtype="boolean"),
        },
        index=pd.RangeIndex(len(live)),
    )
    tables["recency_blocks"] = per_block

    headline["total_active_hours"] = hours
    headline["sessions"] = n
    headline["mean_session_s"] = float(clock["mean_session_s"].iloc[0])
    for name, value in zip(tiers["tier"], tiers["recency_after_lifetime"]):
        headline[f"recency_{name.lower()}"] = float(value)
    headline["live_blocks_below_prune"] = int(per_block["below_prune"].sum())
    headline["min_block_recency"] = (
        float(per_block["recency"].min()) if len(per_block) else float("nan")
    )
    penalised = int(per_block["penalised"].sum())
    if penalised:
        ctx.notes.append(
            f"{penalised} live STANDARD block(s) decay faster than their tier: "
            f"negative outcomes multiplied lambda by {PENALTY_FACTOR:g} (up to "
            f"{LAMBDA_CEILING:g})"
        )
    other = int(per_block["tier"].eq("other").sum())
    if other:
        ctx.notes.append(f"{other} live block(s) have a decay_lambda elfmem never writes")


# ── tags (with the deletion caveat) ───────────────────────────────────────────────────────


def tags_section(ctx: Context, tables: dict, headline: dict) -> None:
    status_by_id = pd.Series(ctx.status.to_numpy(), index=ctx.blocks["id"].astype("string"))
    tag_status = ctx.tags["block_id"].astype("string").map(status_by_id).fillna("(orphan)")
    counts = tag_status.value_counts()
    # the distinct tagged blocks of each status (nunique: NA ids are not counted), one pass
    tagged_ids: dict[str, set[Any]] = {}
    for status, block_id in zip(
        tag_status, ctx.tags["block_id"].to_numpy(dtype=object, na_value=None)
    ):
        if block_id is not None:
            tagged_ids.setdefault(status, set()).add(block_id)
    rows = []
    for status, n_blocks in (
        ("active", len(ctx.active)),
        ("inbox", len(ctx.inbox)),
        ("archived", len(ctx.archived)),
    ):
        n_tags = int(counts.get(status, 0))
        tagged = len(tagged_ids.get(status, ()))
        rows.append(
            {
                "status": status,
                "blocks": n_blocks,
                "tags": n_tags,
                "tagged_blocks": tagged,
                "tags_per_block": n_tags / n_blocks if n_blocks else float("nan"),
            }
        )
    orphans = int(counts.get("(orphan)", 0))
    table = pd.DataFrame(rows)
    table["status"] = table["status"].astype("string")
    for col in ("blocks", "tags", "tagged_blocks"):
        table[col] = table[col].astype("Int64")
    tables["tags"] = table
    ctx.notes.append("tags: " + CAVEAT)
    if orphans:
        ctx.notes.append(f"{orphans} tag row(s) point at no block")
    t = table.set_index("status")
    headline["tags_active"] = int(t.at["active", "tags"])
    headline["tags_archived"] = int(t.at["archived", "tags"])
    headline["tags_per_active_block"] = float(t.at["active", "tags_per_block"])
    headline["tags_per_archived_block"] = float(t.at["archived", "tags_per_block"])


# ── §2.4 subsystems ───────────────────────────────────────────────────────────────────────


def subsystems_section(ctx: Context, tables: dict, headline: dict) -> None:
    con = ctx.frame("contradictions")
    kinds = con["kind"].astype("string") if "kind" in con else pd.Series(dtype="string")
    if ctx.schema < 9:
        # before schema 9 the table held nothing but pairwise contradiction findings
        kinds = kinds.fillna("contradiction")
    kinds = kinds.fillna("(unknown)")
    resolved = (
        con["resolved"].astype("boolean") if "resolved" in con else pd.Series(dtype="boolean")
    )
    outcomes = ctx.frame("outcomes")
    amendments = ctx.frame("amendments")
    edges = ctx.frame("edges")
    tag_text = ctx.tags["tag"].astype("string")
    mind_ids = set(
        ctx.tags.loc[tag_text.str.startswith("mind/").fillna(False).to_numpy(), "block_id"].astype(
            "string"
        )
    )
    present = set(ctx.store.meta.get("tables") or ())
    # a subsystem whose table the schema lacks was never recorded: NA, not 0
    has_outcomes = "block_outcomes" in present
    has_amendments = "block_amendments" in present
    has_peers = "peer_roster" in present
    reverted = (
        int(amendments["reverted_at"].notna().sum())
        if has_amendments and "reverted_at" in amendments
        else None
    )

    rows: list[tuple[str, str, int | None]] = [
        ("contradictions", "found", len(con)),
        ("contradictions", "unresolved", int((~resolved.fillna(False)).sum())),
        ("contradictions", "resolved", int(resolved.fillna(False).sum())),
    ]
    for kind, n in kinds.value_counts().sort_index().items():
        rows.append(("contradictions", f"kind: {kind}", int(n)))
    rows += [
        ("outcomes", "records", len(outcomes) if has_outcomes else None),
        (
            "outcomes",
            "blocks with outcomes",
            (int(outcomes["block_id"].nunique()) if len(outcomes) else 0) if has_outcomes else None,
        ),
        ("amendments", "records", len(amendments) if has_amendments else None),
        ("amendments", "reverted", reverted),
        ("graph", "edges", len(edges)),
    ]
    rel = (
        edges["relation_type"].astype("string").fillna("(none)").value_counts()
        if len(edges)
        else pd.Series(dtype="int64")
    )
    rel = rel.sort_values(ascending=False, kind="stable")
    for name, n in rel.items():
        rows.append(("graph", f"relation: {name}", int(n)))
    rows += [
        ("minds", "mind/* blocks", len(mind_ids)),
        ("minds", "category mind", int(ctx.blocks["category"].astype("string").eq("mind").sum())),
        ("peers", "peers", len(ctx.frame("peers")) if has_peers else None),
    ]
    sub = pd.DataFrame(rows, columns=["subsystem", "measure", "value"])
    sub["subsystem"] = sub["subsystem"].astype("string")
    sub["measure"] = sub["measure"].astype("string")
    sub["value"] = sub["value"].astype("Int64")
    tables["subsystems"] = sub
    edge_table = pd.DataFrame(
        {"relation_type": rel.index.astype("string"), "count": rel.to_numpy().astype("int64")}
    )
    if len(edges):
        # each relation's origins, sorted and joined (a groupby of a few rows costs more)
        found: dict[str, set[str]] = {}
        for relation, source in zip(
            edges["relation_type"].astype("string").fillna("(none)"),
            edges["origin"].astype("string"),
        ):
            seen = found.setdefault(relation, set())
            if not isna(source):
                seen.add(source)
        origin = {relation: ", ".join(sorted(seen)) for relation, seen in found.items()}
        edge_table["origins"] = pd.array(
            [origin.get(relation) for relation in edge_table["relation_type"]], dtype="string"
        )
    else:
        edge_table["origins"] = pd.Series(dtype="string")
    edge_table["count"] = edge_table["count"].astype("Int64")
    tables["edges"] = edge_table

    headline["contradictions"] = len(con)
    headline["contradictions_unresolved"] = int((~resolved.fillna(False)).sum())
    # contradictions.kind (schema 9) is where elfmem records near-duplicates; before it, none
    # were recorded
    recorded_kind = "kind" in (ctx.store.meta.get("columns") or {}).get("contradictions", ())
    headline["near_duplicates"] = int(kinds.eq("near_duplicate").sum()) if recorded_kind else None
    headline["outcomes"] = len(outcomes) if has_outcomes else None
    headline["amendments"] = len(amendments) if has_amendments else None
    headline["amendments_reverted"] = reverted
    headline["edges"] = len(edges)
    for name, n in rel.items():
        headline[f"edges_{re.sub(r'[^0-9a-z]+', '_', str(name).lower()).strip('_')}"] = int(n)
    headline["mind_blocks"] = len(mind_ids)
    if not has_amendments:
        ctx.notes.append(
            f"schema {ctx.schema} has no block_amendments table (added in schema "
            "5): amendments were never recorded"
        )
    ctx.notes.append(
        "the doc's 'contradiction checks ≈ 2/3 of LLM calls' needs per-operation "
        "call counts, which elfmem does not store"
    )


# ── §2.5 reinforcement ────────────────────────────────────────────────────────────────────


def reinforcement_section(ctx: Context, tables: dict, headline: dict) -> None:
    active = ctx.active
    counts = active["reinforcement_count"].astype("Float64").fillna(0).astype("float64")
    order = counts.sort_values(ascending=False, kind="stable").index
    top = active.loc[order[:10]]
    top_ids = top["id"].astype("string")
    tag_ids = ctx.tags["block_id"].astype("string")
    # one pass over the tags: the blocks holding a self/* tag (a tag or block with no id, which
    # a damaged database can hold, matches nothing)
    is_self = ctx.tags["tag"].astype("string").str.startswith("self/").fillna(False)
    self_ids = set(tag_ids[is_self.to_numpy(dtype=bool) & tag_ids.notna().to_numpy()])
    self_block = [False if pd.isna(i) else i in self_ids for i in top_ids]
    table = pd.DataFrame(
        {
            "rank": np.arange(1, len(top) + 1),
            "id": top_ids.to_numpy(),
            "reinforcement_count": top["reinforcement_count"].to_numpy(),
            "category": top["category"].to_numpy(),
            "decay_lambda": top["decay_lambda"].to_numpy(),
            "self_block": self_block,
            "content": ctx.heavy(top, "content").astype("string").str.slice(0, 80).to_numpy(),
        }
    )
    table["rank"] = table["rank"].astype("Int64")
    table["reinforcement_count"] = table["reinforcement_count"].astype("Int64")
    table["id"] = table["id"].astype("string")
    table["content"] = table["content"].astype("string")
    table["self_block"] = table["self_block"].astype("boolean")
    tables["reinforcement_top"] = table
    tables["lorenz"] = lorenz(counts)
    total = counts.sum()
    headline["reinforcement_top10"] = ", ".join(
        str(int(v)) for v in counts.loc[order[:10]].to_numpy()
    )
    headline["reinforcement_max"] = int(counts.max()) if len(counts) else None
    headline["reinforcement_gini"] = gini(counts)
    headline["reinforcement_top5_share"] = (
        float(counts.loc[order[:5]].sum() / total) if total else float("nan")
    )


# ── §2.6 staleness ────────────────────────────────────────────────────────────────────────


def staleness_section(ctx: Context, tables: dict, headline: dict) -> None:
    last = ctx.cfg("last_consolidated_at")
    last = pd.Timestamp(last) if last is not None else pd.NaT
    age = (ctx.as_of - last).total_seconds() / 86400.0 if not pd.isna(last) else float("nan")
    inbox = ctx.inbox
    ages = (ctx.as_of - inbox["created_at"]).dt.total_seconds() / 86400.0
    activity = [
        ctx.frame("sessions").get("started_at", pd.Series(dtype="datetime64[ns, UTC]")),
        ctx.frame("sessions").get("ended_at", pd.Series(dtype="datetime64[ns, UTC]")),
        ctx.blocks["created_at"],
        pd.Series([last]),
    ]
    stamps = pd.concat([pd.to_datetime(s, utc=True) for s in activity], ignore_index=True)
    last_activity = stamps.max() if stamps.notna().any() else pd.NaT
    tables["staleness"] = pd.DataFrame(
        [
            {
                "as_of": ctx.as_of,
                "last_consolidated_at": last,
                "consolidation_age_days": age,
                "last_activity_at": last_activity,
                "inbox_blocks": len(inbox),
                "oldest_inbox_days": float(ages.max()) if len(ages) else float("nan"),
                "median_inbox_days": float(ages.median()) if len(ages) else float("nan"),
            }
        ]
    )
    tables["inbox"] = pd.DataFrame(
        {
            "id": inbox["id"].astype("string").to_numpy(),
            "created_at": inbox["created_at"].to_numpy(),
            "age_days": ages.to_numpy(),
            "category": inbox["category"].to_numpy(),
            "content": ctx.heavy(inbox, "content").astype("string").reset_index(drop=True),
        }
    ).sort_values("age_days", ascending=False, ignore_index=True)
    if not pd.isna(last_activity) and ctx.as_of.date() < last_activity.date():
        ctx.notes.append(
            f"as_of {ctx.as_of.date()} is before the store's last activity "
            f"({last_activity.date()}); ages are negative for later events"
        )
    headline["last_consolidated_at"] = last
    headline["consolidation_age_days"] = age
    headline["inbox_oldest_days"] = float(ages.max()) if len(ages) else float("nan")
    headline["last_activity_at"] = last_activity
