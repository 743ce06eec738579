"""Operator scripts S9 and S10 against a shipped elfmem release: what a month of changes leaves
visible in the store, and six months of use against the seeded constitution.
Named in their scenarios' records (:mod:`memlab.sim.catalog`)."""

from __future__ import annotations

import re
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memlab._files import sqlite_uri
from memlab.sim._texts import CONSTITUTION, REWORDINGS, NoteMaker, constitution_variants
from memlab.sim.real._common import (
    RealContext,
    block_rows,
    llm_call_stats,
    measured_result,
    project_substrate,
    release_write_path,
    role_block,
    roles_in_order,
    seeded_store,
)
from memlab.sim.real.release_facts import release_facts
from memlab.sim.real.releases import release_sources
from memlab.sim.rules import grade_levels
from memlab.sim.scenarios import ScenarioResult

__all__ = ["s9_last_month", "parse_time", "s10_six_months"]


# ---- S9 -------------------------------------------------------------------------------------
def _store_text(db: Path) -> list[tuple[str, str, str]]:
    """Every text cell of every table: (table, column, value)."""
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    out = []
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for t in tables:
            cols = [r[1] for r in con.execute(f'PRAGMA table_info("{t}")')]
            for row in con.execute(f'SELECT * FROM "{t}"'):
                for c, v in zip(cols, row):
                    if isinstance(v, str):
                        out.append((t, c, v))
    finally:
        con.close()
    return out


def s9_last_month(ctx: RealContext) -> ScenarioResult:
    """The operator's month, then the audit: for each change, is there a row stamped inside
    the month that names it, and can its before-state be read back from the store?

    The changes counted are the modelled S9's: changes to memory that was there (a reword, a
    forget, and any block that left active memory in the month: superseded, decayed), each
    once; the month's learns add memory and are reported beside them (``learns_stamped``),
    not counted. A change that did not happen (a reword consolidation rejected) is not one."""
    proc = ctx.proc
    db = seeded_store(ctx, "s9")
    active_before = {r["id"]: r for r in block_rows(db) if r["status"] == "active"}
    time.sleep(1.1)  # everything stamped from here on is "this month"; the seed is older
    start = datetime.now(timezone.utc).replace(microsecond=0)
    changes: list[dict[str, Any]] = []
    not_applied: list[str] = []
    path = None
    notes = NoteMaker(9_000 + ctx.seed).fresh(3)
    proc.preload([n.text for n in notes])
    learns = []
    for n in notes:
        learns.append(proc.call("learn", n.text)["block_id"])
    proc.request("consolidate")
    rows = block_rows(db)
    if "reword" in ctx.params.s9_changes:
        role = roles_in_order(ctx, "S9")[0]
        old = role_block(rows, role)
        new = REWORDINGS[role][1]
        proc.preload([new])
        path = release_write_path(ctx)
        if path is not None:
            proc.call(path["method"], old["id"], new)
        else:
            proc.call("learn", new, tags=old["tags"], category=old["category"])
            proc.request("consolidate")
        # A reword consolidation rejected (an exact duplicate of the old wording) did not
        # happen: nothing changed, so there is nothing for the audit to find.
        if any(r["content"] == new and r["status"] == "active" for r in block_rows(db)):
            changes.append({"kind": "reword", "id": old["id"], "before": old["content"]})
        else:
            not_applied.append("reword")
    if "forget" in ctx.params.s9_changes and "forget" in ctx.methods:
        victim = role_block(rows, roles_in_order(ctx, "S9")[1])
        proc.call("forget", victim["id"])
        changes.append({"kind": "forget", "id": victim["id"], "before": victim["content"]})
    proc.request("close")
    # Whatever else left active memory in the month (consolidation's supersessions, decay),
    # as the modelled S9 counts it.
    seen = {ch["id"] for ch in changes}
    for r in block_rows(db):
        if r["id"] in active_before and r["id"] not in seen and r["status"] != "active":
            changes.append(
                {
                    "kind": r["archive_reason"] or r["status"],
                    "id": r["id"],
                    "before": active_before[r["id"]]["content"],
                }
            )
    # In project mode the release also keeps the event ledger and the file substrate; the
    # audit reads them as files (a ledger event naming the block, stamped in the month; a
    # before-state still in some memory file).
    sub = project_substrate(db) if ctx.project else {"events": [], "files": {}}
    visible = 0
    detail = []
    for ch in changes:
        stamped = _stamped(db, ch["id"], start) or any(
            isinstance(e, dict) and e.get("id") == ch["id"] and _at_or_after(e.get("t"), start)
            for e in sub["events"]
        )
        recoverable = (
            ch["before"] is None
            or _before_kept(db, ch["before"])
            or any(ch["before"] in text for text in sub["files"].values())
        )
        visible += stamped and recoverable
        detail.append(f"{ch['kind']}: stamped={stamped} before-state={recoverable}")
    learns_stamped = sum(
        _stamped(db, bid, start)
        or any(
            isinstance(e, dict) and e.get("id") == bid and _at_or_after(e.get("t"), start)
            for e in sub["events"]
        )
        for bid in learns
        if bid
    )
    share = visible / len(changes) if changes else None
    m = {
        "changes": len(changes),
        "visible": visible,
        "detail": detail,
        "kinds": [c["kind"] for c in changes],
        "not_applied": not_applied,
        "learns": len(learns),
        "learns_stamped": learns_stamped,
        # Through a write path (0.19.2's accept_amendment, 0.20.0's edit) the seed's pick of
        # role and wording cannot change what is stamped; through learn it can.
        "draw_decides": path is None,
    }
    m["share"] = None if share is None else round(share, 3)
    outcome = "n/a" if share is None else grade_levels("S9", share)
    # The setting, stated: the store is opened without a project, so a release whose event
    # ledger needs one (0.20.0: MemorySystem._log is a no-op with no project root) has it off.
    facts = release_facts(release_sources(ctx.release))
    m["project_mode"] = ctx.project
    m["ledger_off"] = bool(facts["ledger"] and facts["ledger_needs_project"]) and not ctx.project
    if ctx.project:
        m["ledger_events"] = len(sub["events"])
        m["ledger_events_in_month"] = sum(
            isinstance(e, dict) and _at_or_after(e.get("t"), start) for e in sub["events"]
        )
    summary = (
        (
            f"{visible}/{len(changes)} changes to existing memory visible: " + "; ".join(detail)
            if changes
            else "no change to existing memory in the month (n/a)"
        )
        + f"; {learns_stamped}/{len(learns)} learns stamped (added, not counted)"
        + (f"; not applied: {', '.join(not_applied)}" if not_applied else "")
        + (
            "; no project, so the release's event ledger is off (the store's own rows only)"
            if m["ledger_off"]
            else ""
        )
        + (
            f"; project mode: the event ledger ({m['ledger_events_in_month']} events in the "
            "month) and the file substrate read too (the project is not a git repository: "
            "an edit rewrites the block's file, whose history the release leaves to git)"
            if ctx.project
            else ""
        )
    )
    return measured_result(ctx, "S9", outcome, summary, m)


def _stamped(db: Path, block_id: str, start: datetime) -> bool:
    """A row naming ``block_id`` with a timestamp at or after ``start`` in some table."""
    con = sqlite3.connect(sqlite_uri(db, mode="ro"), uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for t in tables:
            for row in con.execute(f'SELECT * FROM "{t}"'):
                values = [v for v in row if isinstance(v, str)]
                if block_id in values and any(_at_or_after(v, start) for v in values):
                    return True
    finally:
        con.close()
    return False


#: A timestamp as SQLite (``CURRENT_TIMESTAMP``: ``YYYY-MM-DD HH:MM:SS``, UTC) or ISO 8601
#: (``T`` separator, fractions, ``Z`` or an offset) writes one; bounded, so linear-time.
_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?"
)


def parse_time(value: Any) -> datetime | None:
    """``value`` as an aware UTC datetime when it is a timestamp in any form SQLite or ISO 8601
    writes (a naive one is UTC, as SQLite's ``CURRENT_TIMESTAMP`` is), else None."""
    if not isinstance(value, str) or len(value) > 40 or not _TIME.fullmatch(value.strip()):
        return None
    text = value.strip()
    frac = re.search(r"\.(\d{1,9})", text)
    if frac and len(frac.group(1)) > 6:  # fromisoformat takes at most microseconds
        text = text.replace(frac.group(0), "." + frac.group(1)[:6])
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def _at_or_after(value: Any, start: datetime) -> bool:
    t = parse_time(value)
    return t is not None and t >= start


def _before_kept(db: Path, before: str) -> bool:
    """The reworded block's prior content is readable somewhere other than as a live,
    unchanged row (an archived row, an amendment's pre_content, a history table)."""
    for t, c, v in _store_text(db):
        if v == before:
            return True
    return False


# ---- S10 ------------------------------------------------------------------------------------
def s10_six_months(ctx: RealContext) -> ScenarioResult:
    proc = ctx.proc
    inst = ctx.instance
    p = ctx.params
    # This cell's own LLM calls (the driver's counter also holds earlier cells' calls; a
    # cached cell must not depend on which cells ran before it in the same driver).
    llm_before = llm_call_stats(proc)["total_calls"]
    db = seeded_store(ctx, "s10")
    seeded = {role: role_block(block_rows(db), role)["id"] for role in CONSTITUTION}
    # Restated principles per learned block: the instance's constitutional supersessions only
    # (not every near-duplicate: most restate ordinary notes), else the near-duplicate rate.
    if p.s10_restate_rate is not None:
        rate, source = p.s10_restate_rate, "parameter s10_restate_rate"
    elif inst.principle_restate_rate is not None:
        rate, source = (
            inst.principle_restate_rate,
            (
                f"instance: {inst.principle_restatements} constitutional supersessions / "
                f"{inst.blocks_ever} blocks"
            ),
        )
    else:
        rate, source = (
            inst.near_dup_rate,
            ("instance: every near-duplicate (its constitutional share is unknown)"),
        )
    rng = ctx.rng("S10")
    per_day = inst.blocks_ever / inst.span_days
    maker = NoteMaker(10_000 + ctx.seed)
    variants = {role: constitution_variants(role) for role in CONSTITUTION}
    learned = restated = 0
    hours = inst.total_active_hours / inst.span_days
    texts_by_day = []
    for _ in range(p.s10_days):
        k = int(rng.poisson(per_day))
        day = []
        for _ in range(k):
            if rng.random() < rate:
                role = sorted(CONSTITUTION)[int(rng.integers(len(CONSTITUTION)))]
                day.append(variants[role][int(rng.integers(len(variants[role])))])
                restated += 1
            else:
                day.append(maker.fresh(1)[0].text)
        texts_by_day.append(day)
        learned += k
    proc.preload([t for d in texts_by_day for t in d])
    for day in texts_by_day:
        for text in day:
            proc.call("learn", text)
        proc.request("session", hours=hours, consolidate=True, curate=True)
    rows = {r["id"]: r for r in block_rows(db)}
    intact = [
        role
        for role, bid in seeded.items()
        if rows[bid]["status"] == "active" and rows[bid]["content"] == CONSTITUTION[role]
    ]
    lost = {
        role: rows[bid]["archive_reason"]
        for role, bid in seeded.items()
        if rows[bid]["status"] != "active"
    }
    m = {
        "days": p.s10_days,
        "learned": learned,
        "restatements": restated,
        "restate_rate": round(rate, 3),
        "restate_rate_source": source,
        "active_hours": round(hours * p.s10_days, 2),
        "roles_intact": len(intact),
        "lost": lost,
        "llm": llm_call_stats(proc)["total_calls"] - llm_before,
    }
    outcome = grade_levels("S10", len(intact))
    summary = (
        f"{p.s10_days} days, {learned} blocks learned ({restated} restating a "
        f"principle): {len(intact)}/10 roles hold their seeded text; lost {lost or 'none'}"
    )
    proc.request("close")
    return measured_result(ctx, "S10", outcome, summary, m)
