"""S1-S6: the operator's control over memory (reword, delete, a pinned block), the
steady-state cost of learning, and starting with a local model only or without a key.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any

import numpy as np

from memlab.errors import SimulationError
from memlab.sim._texts import CONSTITUTION, REWORDINGS, constitution_variants
from memlab.sim.model.iterations import Iteration
from memlab.sim.model.scenarios._base import (
    Context,
    ScenarioResult,
    draw_tier,
    live_blocks,
    restatement,
    steady_world,
    world_events,
)
from memlab.sim.model.world import PROMPT_TOKENS
from memlab.sim.rules import grade_checks, grade_levels, grade_s6

__all__ = ["s1_reword", "s2_delete", "s3_pinned", "s4_cost", "s5_fresh_install", "s6_missing_key"]


# ---- S1 ------------------------------------------------------------------------------------
def s1_reword(ctx: Context, it: Iteration) -> ScenarioResult:
    """Reword each constitutional principle six ways and see what the iteration does."""
    rows, events = [], []
    rng = ctx.rng("S1")
    for role, seed_text in CONSTITUTION.items():
        for text in REWORDINGS[role]:
            world = ctx.world(it, "S1", rng)
            world.init(constitution=True)
            cosine = ctx.book.cosine(seed_text, text)
            if world.edit(role, text):
                result = "edited in place"
            else:
                # No edit API: the operator learns the new wording with the principle's own
                # tags (its role and tier, as the real 0.19.2 script does) and hopes.
                world.learn(text, family=("role", role), tier="PERMANENT", role=role)
                world.consolidate()
                ops = [e["op"] for e in world.events]
                if "reject_exact" in ops:
                    result = "rejected as exact duplicate"
                elif "supersede" in ops:
                    result = "superseded the principle (new wording holds the role)"
                elif "guard_refused" in ops:
                    result = "kept as a second copy (pin guard)"
                else:
                    result = "kept as a second copy"
            state = world.constitution()[role]
            old_active = any(b.text == seed_text for b in world.active())
            applied = state["text"] == text and state["filled"] and not old_active
            new_active = any(b.text == text for b in world.active())
            score = 1.0 if applied else 0.5 if new_active else 0.0
            rows.append((role, cosine, result, applied, score))
            events.append(
                {
                    "op": "reword",
                    "block": role,
                    "cosine": round(cosine, 4),
                    "detail": f"{result}; applied={applied}",
                }
            )
    n = len(rows)
    applied = sum(r[3] for r in rows)
    by_result: dict[str, int] = {}
    for r in rows:
        by_result[r[2]] = by_result.get(r[2], 0) + 1
    cos = np.array([r[1] for r in rows])
    lo, hi = it.near_dup_threshold, it.exact_dup_threshold
    metrics = {
        "rewordings": n,
        "applied": applied,
        "cosine_min": round(float(cos.min()), 4),
        "cosine_max": round(float(cos.max()), 4),
        f"in_band_[{lo},{hi})": int(((cos >= lo) & (cos < hi)).sum()),
        f"at_or_above_{hi}": int((cos >= hi).sum()),
        f"below_{lo}": int((cos < lo).sum()),
    }
    metrics.update({f"result: {k}": v for k, v in sorted(by_result.items())})
    metrics["score"] = round(sum(r[4] for r in rows) / n, 3)
    outcome = grade_levels("S1", metrics["score"])
    summary = f"{applied}/{n} rewordings applied (score {metrics['score']}); " + "; ".join(
        f"{v} {k}" for k, v in sorted(by_result.items())
    )
    return ScenarioResult("S1", it.name, outcome, summary, metrics, events)


# ---- S2 ------------------------------------------------------------------------------------
def s2_delete(ctx: Context, it: Iteration) -> ScenarioResult:
    rng = ctx.rng("S2")
    world = ctx.world(it, "S2", rng)
    world.init(constitution=False)
    seeded = world.active(include_inbox=True)
    metrics: dict[str, Any] = {"blocks_written_by_init": len(seeded)}
    maker = ctx.notes()
    if len(seeded) >= 3:
        picks = rng.choice(len(seeded), size=3, replace=False)
        targets = [seeded[int(i)] for i in sorted(picks)]
        what = "seeded"
    else:
        # Nothing seeded: nothing unwanted to remove. Show deletion works on three blocks
        # the user learned, so the cell is a run, not a presumption.
        notes = maker.fresh(3)
        targets = [world.learn(n.text, family=("note", n.key)) for n in notes]
        world.consolidate()
        what = "user-learned (init seeded none)"
    metrics["targets"] = f"3 {what}"
    deleted = [world.forget(b) for b in targets]
    waited = 0.0
    if not all(deleted):
        # No delete API: the only exits are supersession and decay. Wait a month of use.
        live_blocks(ctx, world, 30.0, rng, maker, set())
        waited = 30.0
    # A superseded target is replaced by a restatement of itself: its content stays.
    gone = [b.archive_reason in ("forgotten", "decayed") for b in targets]
    replaced = sum(b.archive_reason == "superseded" for b in targets)
    metrics.update(
        {
            "deleted_directly": sum(deleted),
            "gone_after": sum(gone),
            "replaced_by_restatement": replaced,
            "days_waited": waited,
            "active_hours_waited": round(world.hours, 3),
            "target_tiers": ",".join(b.tier for b in targets),
        }
    )
    # The same rule as the real rows' S2: what counts is whether the targets left active
    # memory within the wait, by any exit that removes them (forgotten or decayed).
    n_gone = sum(gone)
    outcome = grade_levels("S2", n_gone)
    if all(deleted):
        summary = (
            f"3 {what} blocks removed directly ({world_events(world, ('forget',))[0]['detail']})"
        )
    else:
        summary = (
            f"no delete path; after {waited:.0f} days ({world.hours:.2f} active h) "
            f"{sum(gone)}/3 gone"
        )
    return ScenarioResult(
        "S2",
        it.name,
        outcome,
        summary,
        metrics,
        world_events(world, ("forget", "forget_unsupported", "decay", "supersede")),
    )


# ---- S3 ------------------------------------------------------------------------------------
def _pair_near(ctx: Context, target: float = 0.91) -> tuple[str, str, float]:
    def make() -> tuple[str, str, float]:
        best = None
        for role, seed_text in CONSTITUTION.items():
            variants = constitution_variants(role)
            sims = ctx.book.matrix(variants) @ ctx.book.vec(seed_text)
            for text, sim in zip(variants, sims):
                key = abs(float(sim) - target)
                if best is None or key < best[0]:
                    best = (key, role, text, float(sim))
        assert best is not None
        return best[1], best[2], best[3]

    return ctx.memoised(("pair", target), make)


def s3_pinned(ctx: Context, it: Iteration) -> ScenarioResult:
    role, text, cosine = _pair_near(ctx)
    rng = ctx.rng("S3")
    world = ctx.world(it, "S3", rng)
    world.init(constitution=True)
    start = len(world.events)
    newcomer = world.learn(text, family=("role", role), tier="DURABLE")
    world.consolidate()
    metrics: dict[str, Any] = {
        "role": role,
        "measured_cosine": round(cosine, 4),
        "near_threshold": it.near_dup_threshold,
        "exact_threshold": it.exact_dup_threshold,
    }
    events = [e for e in world.events[start:] if newcomer.id in (e["block"], e["other"])]
    if it.constitution_file:
        state = world.constitution()[role]
        pinned = sum(b.pinned and b.status == "active" for b in world.blocks.values())
        metrics.update({"pinned_blocks_in_block_table": pinned, "self_md_intact": state["intact"]})
        return ScenarioResult(
            "S3",
            it.name,
            "pass" if state["intact"] else "fail",
            f"impossible: the principle lives in self.md, not the block table; new block at "
            f"{cosine:.3f} landed as an ordinary note",
            metrics,
            events,
            impossible=True,
        )
    target = next(
        b for b in world.blocks.values() if b.role == role and b.text == CONSTITUTION[role]
    )
    metrics.update(
        {
            "pinned_status": target.status,
            "archive_reason": target.archive_reason or "-",
            "superseded_by_recorded": target.superseded_by is not None,
            "mutation_logged": any(e["op"] == "supersede" and e["recorded"] for e in events),
        }
    )
    if target.status == "archived":
        sup = next(e for e in events if e["op"] == "supersede")
        deleted = re.search(r"tags_deleted=(\d+)", sup["detail"])
        if deleted is None:
            raise SimulationError(f"S3: the supersede event does not say tags_deleted: {sup!r}")
        metrics["tags_deleted"] = int(deleted.group(1))
        return ScenarioResult(
            "S3",
            it.name,
            "fail",
            f"pinned '{role}' archived (superseded at cosine {cosine:.3f}); "
            f"{metrics['tags_deleted']} tags deleted; logged={metrics['mutation_logged']}",
            metrics,
            events,
        )
    guarded = any(e["op"] == "guard_refused" for e in events)
    impossible = not it.supersession_active
    if guarded or impossible:
        how = "pin guard refused the supersession" if guarded else "no supersession path"
        return ScenarioResult(
            "S3",
            it.name,
            "pass",
            f"pinned '{role}' kept: {how} (cosine {cosine:.3f})",
            metrics,
            events,
            impossible=impossible,
        )
    return ScenarioResult(
        "S3",
        it.name,
        "partial",
        f"pinned '{role}' kept only because {cosine:.3f} missed the band "
        f"[{it.near_dup_threshold}, {it.exact_dup_threshold}); nothing guards it",
        metrics,
        events,
    )


# ---- S4 ------------------------------------------------------------------------------------
def s4_cost(ctx: Context, it: Iteration) -> ScenarioResult:
    rng = ctx.rng("S4")
    maker = ctx.notes()
    taken: set = set()
    world = steady_world(ctx, it, "S4", rng, maker, taken)
    batch = 10
    for _ in range(batch):
        active = world.active()
        if rng.random() < ctx.instance.near_dup_rate and active:
            target = active[int(rng.integers(len(active)))]
            found = restatement(ctx, target.text, target.vec, target.family, rng)
            if found:
                world.learn(found[0], family=target.family, tier=draw_tier(ctx.instance, rng))
                continue
        note = maker.fresh(1, taken)[0]
        world.learn(note.text, family=("note", note.key), tier=draw_tier(ctx.instance, rng))
    world.consolidate()
    world.review()
    calls = world.llm_calls
    per_block = calls / batch
    metrics = {
        "batch": batch,
        "corpus_blocks": len(world.active()),
        "llm_calls": calls,
        "calls_per_block": round(per_block, 2),
        "analysis_calls": world.calls["analysis"],
        "contradiction_calls": world.calls["contradiction"],
        "review_calls": world.calls["review"],
        "llm_input_tokens": sum(world.tokens_in.values()),
        "worst_case_calls": batch * (1 + (it.contradiction_top_k or len(world.active())))
        if it.pairwise_contradiction
        else batch + world.calls["review"],
    }
    if ctx.instance.llm_calls_per_active_block is not None:
        metrics["instance_lifetime_calls_per_active_block"] = round(
            ctx.instance.llm_calls_per_active_block, 1
        )
    outcome = grade_levels("S4", per_block)
    summary = (
        f"{calls} LLM calls for 10 blocks ({world.calls['analysis']} analysis"
        f" + {world.calls['contradiction']} contradiction + {world.calls['review']} review)"
    )
    return ScenarioResult(
        "S4",
        it.name,
        outcome,
        summary,
        metrics,
        world_events(world, ("contradiction_checks", "review", "supersede")),
        modelled=[
            f"calls counted, not made; token totals use assumed prompt overheads {PROMPT_TOKENS}"
        ],
    )


# ---- S5 / S6: keys ---------------------------------------------------------------------------
@contextlib.contextmanager
def _without_env(*names: str):
    saved = {n: os.environ.pop(n) for n in names if n in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def _client_check(ctx: Context, it: Iteration) -> dict[str, Any]:
    """Can the iteration build a client for a local endpoint with no cloud key in the
    environment? Measured with the real OpenAI SDK when it is installed (no request is sent:
    construction is where the SDK checks credentials)."""

    def make() -> dict[str, Any]:
        api_key = None if it.key_resolution == "sdk_default" else "none"
        how = (
            "api_key=None, SDK falls back to OPENAI_API_KEY"
            if api_key is None
            else "profile says api_key: none, a placeholder is injected"
        )
        try:
            import openai
        except ImportError:
            ok = api_key is not None
            return {
                "client_ok": ok,
                "measured": False,
                "how": how,
                "error": "-" if ok else "modelled: the SDK requires OPENAI_API_KEY",
            }
        with _without_env("OPENAI_API_KEY", "OPENAI_ADMIN_KEY"):
            try:
                openai.OpenAI(base_url="http://localhost:1234/v1", api_key=api_key)
                return {
                    "client_ok": True,
                    "measured": True,
                    "how": how,
                    "error": "-",
                    "sdk": f"openai {openai.__version__}",
                }
            except openai.OpenAIError as exc:
                return {
                    "client_ok": False,
                    "measured": True,
                    "how": how,
                    "error": str(exc).split(".")[0],
                    "sdk": f"openai {openai.__version__}",
                }

    return ctx.memoised(("client", it.key_resolution), make)


def s5_fresh_install(ctx: Context, it: Iteration) -> ScenarioResult:
    check = _client_check(ctx, it)
    rng = ctx.rng("S5")
    world = ctx.world(it, "S5", rng, llm_available=check["client_ok"])
    world.init(constitution=False)
    written = len(world.active(include_inbox=True))
    metrics = {
        "blocks_written_by_init": written,
        "llm_calls_during_init": world.llm_calls,
        "failed_llm_calls": sum(world.llm_errors.values()),
        "local_client_without_cloud_key": check["client_ok"],
        "client_check_measured": check["measured"],
        "client_error": check["error"],
    }
    problems = []
    if written:
        problems.append(f"init wrote {written} blocks the user did not choose")
    if not check["client_ok"]:
        problems.append(f"local-only setup needs OPENAI_API_KEY ({check['error']})")
    outcome = grade_checks([not written, check["client_ok"]])
    summary = "; ".join(problems) or "init wrote 0 blocks; local client built without a cloud key"
    modelled = [] if check["measured"] else ["openai SDK not installed: key rule modelled"]
    return ScenarioResult(
        "S5",
        it.name,
        outcome,
        summary,
        metrics,
        world_events(world, ("init", "llm_error", "promote")),
        modelled=modelled,
    )


def s6_missing_key(ctx: Context, it: Iteration) -> ScenarioResult:
    check = _client_check(ctx, it.with_(name=it.name + " (no key)", key_resolution="sdk_default"))
    rng = ctx.rng("S6")
    # Whether an LLM answers without a key is the real SDK's answer (the client check builds
    # the provider's client with no key in the environment), not a constant.
    world = ctx.world(it, "S6", rng, llm_available=check["client_ok"])
    modelled = [
        "boot behaviour per the doc: elfmem builds adapters lazily (api_key=None) so "
        "the server starts; preflight makes one real call per profile at boot"
    ]
    if it.preflight:
        ok = world.try_call("preflight", 0)
        metrics = {
            "boot": "refused" if not ok else "ok",
            "surfaced_at": "boot",
            "blocks_degraded": len(world.degraded),
            "failed_llm_calls": sum(world.llm_errors.values()),
            "sdk_raises_without_key": not check["client_ok"],
        }
        # Pass only if the missing key stopped the boot; a preflight that got through would
        # mean the bad key went unnoticed.
        # S6's rule: a refused boot is the loud failure (pass); a preflight that got through
        # without a key means the missing key went unnoticed (fail).
        outcome = (
            grade_s6(raised=True, promoted_unanalysed=0, failures_logged=False)
            if not ok
            else "fail"
        )
        summary = (
            "preflight failed loudly at boot; nothing written under a bad key"
            if not ok
            else "preflight passed without a key: the missing key went unnoticed"
        )
        return ScenarioResult(
            "S6",
            it.name,
            outcome,
            summary,
            metrics,
            [{"op": "boot", "detail": f"preflight with no key: {metrics['boot']}"}],
            modelled=modelled,
        )
    world.init(constitution=True)
    maker = ctx.notes()
    for note in maker.fresh(10):
        world.learn(note.text, family=("note", note.key))
    world.consolidate()
    world.review()
    surfaced = "first review" if world.llm_errors.get("review") else "never (logged only)"
    degraded = len(world.degraded)
    metrics = {
        "boot": "ok (adapter built lazily)",
        "surfaced_at": surfaced,
        "blocks_degraded": degraded,
        "failed_llm_calls": sum(world.llm_errors.values()),
        "blocks_in_memory": len(world.active()),
        "sdk_raises_without_key": not check["client_ok"],
        "client_check_measured": check["measured"],
    }
    outcome = grade_s6(
        raised=False,
        promoted_unanalysed=degraded,
        failures_logged=bool(metrics["failed_llm_calls"]),
    )
    if degraded:
        summary = (
            f"server booted; {degraded} blocks promoted with default scores and no "
            f"summary; error surfaced: {surfaced}"
        )
    else:
        summary = (
            f"memory intact (writes need no LLM) but {metrics['failed_llm_calls']} LLM "
            f"calls failed after boot; surfaced: {surfaced}"
        )
    return ScenarioResult(
        "S6",
        it.name,
        outcome,
        summary,
        metrics,
        world_events(world, ("llm_error", "review")),
        modelled=modelled,
    )
