"""S9 and S10: months of use: auditing what changed last month, and whether the
constitution survives six months.
"""

from __future__ import annotations

import math

from memlab.sim.instance import LAMBDA
from memlab.sim.model.iterations import Iteration
from memlab.sim.model.scenarios._base import (
    Context,
    ScenarioResult,
    live_blocks,
    restatement,
    steady_world,
)
from memlab.sim.model.world import World
from memlab.sim.rules import grade_levels

__all__ = ["s9_last_month", "s10_six_months"]


# ---- S9 / S10: months of use -----------------------------------------------------------------
def s9_last_month(ctx: Context, it: Iteration) -> ScenarioResult:
    rng = ctx.rng("S9")
    maker = ctx.notes()
    taken: set = set()
    world = steady_world(ctx, it, "S9", rng, maker, taken)
    op_rng = ctx.rng("S9", "operator")

    def operator_edits(w: World) -> None:
        pool = [b for b in w.active() if b.role is None and b.family]
        for block in [
            pool[int(i)] for i in op_rng.choice(len(pool), size=min(2, len(pool)), replace=False)
        ]:
            found = restatement(ctx, block.text, block.vec, block.family, op_rng)
            if found is None:
                continue
            if not w.edit(block, found[0]):
                w.learn(found[0], family=block.family, tier=block.tier)  # the only path left
                w.consolidate()

    def operator_forget(w: World) -> None:
        pool = [b for b in w.active() if b.role is None]
        if pool:
            w.forget(pool[int(op_rng.integers(len(pool)))])

    live_blocks(
        ctx, world, 60.0, rng, maker, taken, operator={40.0: operator_edits, 50.0: operator_forget}
    )
    month = [
        e
        for e in world.events
        if e["day"] >= 30.0 and e["op"] in ("supersede", "decay", "edit", "forget")
    ]
    recovered = [e for e in month if e["recorded"] and e["cause_recorded"]]
    kinds = sorted({e["op"] for e in month})
    missing = sorted({e["op"] for e in month if not (e["recorded"] and e["cause_recorded"])})
    metrics = {
        "window_days": "30-60",
        "changes": len(month),
        "changes_by_kind": ", ".join(f"{k}={sum(e['op'] == k for e in month)}" for k in kinds)
        or "-",
        "recoverable": len(recovered),
        "history": it.history,
        "not_recorded_kinds": ",".join(missing) or "-",
    }
    if month:
        recall = len(recovered) / len(month)
        basis = "observed changes"
    else:
        possible = {"supersede"} if it.supersession_active else set()
        possible |= {"decay"} if it.decay_active else set()
        possible |= {"edit", "forget"} if it.can_edit else set()
        logged = possible if it.history == "git" else possible & set(it.mutation_log)
        recall = len(logged) / len(possible) if possible else 1.0
        basis = "no changes in the window: kinds of change the iteration records"
    metrics["recall"] = round(recall, 3)
    metrics["basis"] = basis
    outcome = grade_levels("S9", recall)
    summary = (
        f"{len(recovered)}/{len(month)} changes of the last month recoverable with time "
        f"and cause from {it.history}" + (f"; unrecorded: {', '.join(missing)}" if missing else "")
    )
    return ScenarioResult("S9", it.name, outcome, summary, metrics, month)


def s10_six_months(ctx: Context, it: Iteration) -> ScenarioResult:
    rng = ctx.rng("S10")
    maker = ctx.notes()
    world = ctx.world(it, "S10", rng)
    world.init(constitution=True)
    stats = live_blocks(ctx, world, 182.0, rng, maker, set())
    state = world.constitution()
    intact = sum(s["intact"] for s in state.values())
    filled = sum(s["filled"] for s in state.values())
    counts = world.counts()
    lost = [
        e
        for e in world.events
        if e["op"] in ("supersede", "decay") and (world.blocks[e["block"]].role is not None)
    ]
    metrics = {
        "days": 182,
        "sessions": stats["sessions"],
        "active_hours": round(world.hours, 2),
        "curate_runs": world.curate_runs,
        "blocks_learned": stats["learned"],
        "near_dup_arrivals": stats["near_dup_arrivals"],
        "principle_restatements": stats["principle_restatements"],
        "supersessions": counts["superseded"],
        "decay_archivals": counts["decayed"],
        "roles_intact": intact,
        "roles_filled": filled,
        "constitution_lost_to": ",".join(sorted({e["op"] for e in lost})) or "-",
    }
    for tier in ("DURABLE", "STANDARD", "EPHEMERAL"):
        metrics[f"recency_unreinforced_{tier}"] = round(math.exp(-LAMBDA[tier] * world.hours), 4)
    outcome = grade_levels("S10", intact)
    where = "self.md" if it.constitution_file else "block table"
    summary = (
        f"{intact}/10 principles intact after 182 days ({world.hours:.1f} active h, "
        f"{world.curate_runs} curate runs, {counts['decayed']} decay archivals, "
        f"{counts['superseded']} supersessions; constitution in {where})"
    )
    events = [e for e in world.events if e["op"] in ("supersede", "decay", "guard_refused")]
    return ScenarioResult("S10", it.name, outcome, summary, metrics, events)
