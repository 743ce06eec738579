"""The printable summary of an elfmem audit: :func:`summary_text` turns the tables and headline
:func:`memlab.kinds.elfmem_db._audit.audit_elfmem` built into the terminal-safe text of
``Audit.summary()``.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from memlab._escape import terminal_lines
from memlab._metrics import METRICS
from memlab.constants import MISSING_TEXT
from memlab.kinds.elfmem_db._audit_context import CAVEAT, Context, isna

__all__ = ["summary_text"]

# ── the printable summary ─────────────────────────────────────────────────────────────────

_MISSING = MISSING_TEXT


def _fmt_int(v: Any) -> str:
    return _MISSING if v is None or isna(v) else f"{int(v):,}"


def _fmt(v: Any, spec: str, suffix: str = "") -> str:
    if v is None or isna(v) or (isinstance(v, float) and not math.isfinite(v)):
        return _MISSING
    return f"{v:{spec}}{suffix}"


def _clip(text: Any, width: int = 48) -> str:
    if text is None or isna(text):
        return ""
    first = " ".join(str(text).split())
    return first if len(first) <= width else first[:width].rstrip() + "..."


def _token_source(h: dict) -> str:
    """Where the live token figure comes from: elfmem's own count, chars/4, or both."""
    share = h.get("live_tokens_est_share")
    if share is None or isna(share) or share == 0:
        return "(elfmem's token_count)"
    if share >= 1:
        return "(chars/4: elfmem recorded no token_count)"
    return (
        f"(elfmem's token_count; {share * 100:.1f}% estimated as chars/4 for "
        f"{h['live_blocks_uncounted']} block(s) without one)"
    )


def summary_text(ctx: Context, tables: dict, h: dict) -> str:
    out: list[str] = []
    add = out.append
    add(
        f"elfmem audit: {h['store']} (schema {h['schema_version']}, elfmem "
        f"{h['elfmem_release']}), as of {ctx.as_of.date()}"
    )
    add("")
    add("Cost")
    width = 34
    rows = [
        ("Lifetime LLM calls", _fmt_int(h["llm_calls"])),
        ("Lifetime LLM input tokens", _fmt_int(h["llm_input_tokens"])),
        ("Lifetime LLM output tokens", _fmt_int(h["llm_output_tokens"])),
        ("Embedding calls", _fmt_int(h["embedding_calls"])),
        ("Blocks ever created", _fmt_int(h["blocks_ever"])),
        (
            "Blocks active now",
            f"{_fmt_int(h['blocks_active'])} (inbox "
            f"{_fmt_int(h['blocks_inbox'])}, archived "
            f"{_fmt_int(h['blocks_archived'])})",
        ),
        (
            "Live corpus size",
            f"{_fmt_int(h['live_chars'])} chars, "
            f"{_fmt_int(round(h['live_tokens']))} tokens " + _token_source(h),
        ),
        (
            "Live summaries size",
            f"{_fmt_int(h['summary_chars'])} chars ≈ {_fmt_int(round(h['summary_tokens']))} tokens",
        ),
        ("LLM calls per surviving block", _fmt(h["calls_per_surviving_block"], ".1f")),
        ("Input tokens per corpus token", _fmt(h["input_per_corpus_token"], ".1f", "×")),
        ("Input tokens per summary token", _fmt(h["input_per_summary_token"], ".1f", "×")),
        (f"GPU time at {ctx.seconds_per_call:g} s/call", _fmt(h["gpu_hours"], ".1f", " h")),
    ]
    out += [f"  {k:<{width}} {v}" for k, v in rows]
    add("")

    add("Archival")
    reasons = tables["archive_reasons"]
    if len(reasons):
        add(
            "  "
            + ", ".join(
                f"{r} {int(n)}" for r, n in zip(reasons["archive_reason"], reasons["count"])
            )
        )
        sup, dec = h["archived_superseded"], h["archived_decayed"]
        if sup or dec:
            add(f"  supersession : decay = {sup}:{dec}")
        for name in ("supersession_share", "superseded_of_created"):
            add(f"  {name} {_fmt(h.get(name), '.3f')}: {METRICS[name].definition}")
    else:
        add("  nothing archived")
    if not h["superseded_by_recorded"]:
        add(f"  superseded_by: not recorded (schema {h['schema_version']} < 6)")
    else:
        arch = tables["archived"]
        chained = int(arch["chain_length"].fillna(0).gt(0).sum())
        add(f"  superseded_by recorded for {chained} of {len(arch)} archived blocks")
    add("")

    add("Session clock")
    add(
        f"  {_fmt(h['total_active_hours'], '.2f')} total active hours across "
        f"{_fmt_int(h['sessions'])} sessions (average session: "
        f"{_fmt(h['mean_session_s'], '.0f')} s)"
    )
    tiers = tables["recency_tiers"]
    add(
        f"  recency after {_fmt(h['total_active_hours'], '.2f')} h: "
        + " / ".join(_fmt(v, ".4f") for v in tiers["recency_after_lifetime"])
        + "  ("
        + " / ".join(f"{t} λ={lam:g}" for t, lam in zip(tiers["tier"], tiers["decay_lambda"]))
        + ")"
    )
    add(
        f"  live blocks below the prune threshold "
        f"({_fmt(float(tables['clock']['prune_threshold'].iloc[0]), 'g')}) now: "
        f"{h['live_blocks_below_prune']} of {len(tables['recency_blocks'])}"
    )
    add("")

    add("Constitution")
    cons = tables["constitution"]
    if h["role_slots_seeded"]:
        add(
            f"  {h['role_slots_left']} of {h['role_slots_seeded']} role slots remain, "
            f"{h['role_slots_changed']} with content different from the seed "
            f"(seed of elfmem {h['seed_releases']})"
        )
        for role_tag, content, created_at, state in zip(
            cons["role_tag"], cons["live_content"], cons["live_created_at"], cons["state"]
        ):
            if state not in ("changed", "unchanged"):
                continue
            created = "" if pd.isna(created_at) else f" (created {created_at.date()})"
            add(f'  {role_tag:<26} -> "{_clip(content)}"{created} [{state}]')
        lost = cons[cons["state"].eq("lost")]
        if len(lost):
            fate = lost["original_archive_reason"].fillna("missing").value_counts()
            add(
                "  lost: "
                + ", ".join(lost["role"])
                + "  (originals: "
                + ", ".join(f"{k} {v}" for k, v in fate.items())
                + ")"
            )
        gone = cons[cons["original_status"].eq("archived")]
        if len(gone):
            add(
                f"  seeded originals archived: {len(gone)} ("
                + ", ".join(
                    f"{k} {v}"
                    for k, v in gone["original_archive_reason"]
                    .fillna("none")
                    .value_counts()
                    .items()
                )
                + ")"
            )
    else:
        add("  no constitutional seed found")
    prot = tables["protected_superseded"]
    if len(prot):
        why = prot["why"].fillna("")
        flags = [
            (why.str.contains(f, regex=False).sum(), label)
            for f, label in (
                ("PERMANENT", "PERMANENT"),
                ("pinned", "pinned"),
                ("confidence 1.0", "at confidence 1.0"),
            )
        ]
        add(
            f"  protected blocks archived anyway: {len(prot)} ("
            + ", ".join(f"{n} {label}" for n, label in flags if n)
            + ")"
        )
    add("")

    add("Tags")
    tg = tables["tags"].set_index("status")
    add(
        f"  tags per block: {_fmt(h['tags_per_active_block'], '.1f')} vs "
        f"{_fmt(h['tags_per_archived_block'], '.2f')}  (active {h['tags_active']} tags / "
        f"{int(tg.at['active', 'blocks'])} blocks; archived {h['tags_archived']} / "
        f"{int(tg.at['archived', 'blocks'])})"
    )
    add("  caveat: " + CAVEAT)
    add("")

    add("Subsystems")
    sub = tables["subsystems"]
    kinds = [
        (m.split(": ", 1)[1], int(v))
        for s, m, v in zip(sub["subsystem"], sub["measure"], sub["value"])
        if s == "contradictions" and m.startswith("kind: ")
    ]
    add(
        f"  contradictions: {h['contradictions']} found, {h['contradictions_unresolved']} "
        "unresolved" + (" (" + ", ".join(f"{k} {v}" for k, v in kinds) + ")" if kinds else "")
    )
    add(
        f"  outcome records: {_fmt_int(h['outcomes'])}; amendments: "
        f"{_fmt_int(h['amendments'])}"
        + ("" if h["amendments"] is not None else " (not recorded: no block_amendments table)")
    )
    edges = tables["edges"]
    add(
        f"  edges: {h['edges']}"
        + (
            " ("
            + ", ".join(f"{int(n)} {r}" for r, n in zip(edges["relation_type"], edges["count"]))
            + ")"
            if len(edges)
            else ""
        )
    )
    add(f"  mind/* blocks: {h['mind_blocks']}")
    add("")

    add("Reinforcement")
    add(f"  top counts: {h['reinforcement_top10'] or _MISSING}")
    share = h["reinforcement_top5_share"]
    add(
        f"  Gini {_fmt(h['reinforcement_gini'], '.2f')}; the top 5 hold "
        f"{_fmt(None if share is None else share * 100, '.0f', '%')} of all reinforcement"
    )
    add("")

    add("Staleness")
    st = tables["staleness"].iloc[0]
    if pd.isna(st["last_consolidated_at"]):
        add("  never consolidated")
    else:
        add(
            f"  last consolidated {st['last_consolidated_at'].date()}: "
            f"{_fmt(h['consolidation_age_days'], '.1f')} days "
            f"({_fmt(h['consolidation_age_days'] / 7, '.1f')} weeks) before {ctx.as_of.date()}"
        )
    if len(tables["inbox"]):
        ages = tables["inbox"]["age_days"]
        add(
            f"  inbox: {len(ages)} block(s), {_fmt(ages.min(), '.1f')}-"
            f"{_fmt(ages.max(), '.1f')} days old ({_fmt(ages.max() / 7, '.1f')} weeks at most)"
        )
    else:
        add("  inbox empty")
    notes = [n for n in ctx.notes if not n.startswith("tags: ")]
    if notes:
        add("")
        add("Notes")
        out += [f"  - {n}" for n in notes]
    return terminal_lines(out)
