"""Scenarios S1-S11 as experiments: each runs the iteration and returns an outcome and evidence.

Every scenario is a function ``(ctx, iteration) -> ScenarioResult``. The outcome (``pass`` /
``partial`` / ``fail`` / ``n/a``) is decided by a rule written in the scenario from the numbers
it measured, and ``metrics`` + ``events`` are the evidence for it. Where something cannot be run
here (an LLM call, a hosted provider), the result says so in ``modelled``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from memlab.errors import MemlabError, SimulationError, require
from memlab.sim._texts import (
    CONSTITUTION,
    REWORDINGS,
    NoteMaker,
    constitution_variants,
    note_variants,
)
from memlab.sim.instance import LAMBDA, Instance
from memlab.sim.iterations import Iteration
from memlab.sim.world import PROMPT_TOKENS, VectorBook, World

__all__ = ["Scenario", "ScenarioResult", "SCENARIOS", "Context", "resolve_scenarios",
           "OUTCOMES"]

OUTCOMES = ("pass", "partial", "fail", "n/a")
#: The band in which the instance's own supersessions happened (elfmem's defaults): arrivals
#: that the instance recorded as near-duplicates are drawn from texts whose measured cosine to
#: their target falls here. An iteration's own thresholds then decide what happens to them.
OBSERVED_BAND = (0.90, 0.95)
#: The scale scenarios use a fixed corpus so its 14,000 embeddings are reused across seeds;
#: the run's seed picks queries, probes and planted duplicates.
_CORPUS_SEED = 20260804
_S8_BLOCKS_PER_WRITER = 10
_NOTE_BATCH = 4
#: Bounds that keep a run to minutes on any instance; evidence says when one applied.
_MAX_STEPS = 4_000
_MAX_STEADY_BLOCKS = 5_000
_MAX_SCALE_BLOCKS = 50_000
_S7_QUERIES = 100


@dataclass
class ScenarioResult:
    scenario: str
    iteration: str
    outcome: str
    summary: str
    metrics: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    #: What this result rests on that was not executed here, in words.
    modelled: list[str] = field(default_factory=list)
    #: Metrics that depend on the machine or the scheduler (timings, retry counts).
    unstable: tuple[str, ...] = ()
    #: True when the failure mode cannot occur at all under this iteration.
    impossible: bool = False
    #: "measured" (a shipped release ran the operator script) or "modelled" (the world model
    #: executed an iteration's design choices: the doc's estimate).
    basis: str = "modelled"
    #: The rule the outcome follows, in words (measured cells).
    rule: str = ""
    #: What a modelled cell rests on: the iteration's design flags and constants it read.
    assumptions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"{self.scenario}: outcome {self.outcome!r} not in {OUTCOMES}")


@dataclass(frozen=True)
class Scenario:
    code: str
    title: str
    nature: str
    run: Callable[["Context", Iteration], ScenarioResult]


class Context:
    """What scenarios share in one run: the instance, the seed, vectors, and memoised fixtures
    (the scale corpus, writer runs) that do not depend on the iteration."""

    def __init__(self, instance: Instance, seed: int, *, book: VectorBook | None = None,
                 store: Any = None) -> None:
        self.instance = instance
        self.seed = int(seed)
        # Not ``book or ...``: a VectorBook has __len__, so a fresh (empty) one is falsy.
        self.book = book if book is not None else VectorBook()
        self.store = store
        self.memo: dict[Any, Any] = {}

    def rng(self, *keys: Any) -> np.random.Generator:
        """A generator fixed by the seed and the keys: the same world events for every
        iteration of a scenario (common random numbers)."""
        salt = [zlib.crc32(str(k).encode()) for k in keys]
        return np.random.default_rng([self.seed, *salt])

    def notes(self) -> NoteMaker:
        """A fresh reader of the run's note stream: every scenario reads the same notes in the
        same order, so they share embeddings (and, at seed 0, the scale corpus's)."""
        return NoteMaker(_CORPUS_SEED + self.seed)

    def memoised(self, key: Any, make: Callable[[], Any]) -> Any:
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]

    def world(self, iteration: Iteration, scenario: str, rng: np.random.Generator, **kw: Any) -> World:
        return World(iteration, self.instance, self.book, rng, scenario=scenario, **kw)


def _grade(value: float, pass_at: float, partial_at: float, *, higher_is_better: bool = True) -> str:
    if not higher_is_better:
        value, pass_at, partial_at = -value, -pass_at, -partial_at
    if value >= pass_at:
        return "pass"
    if value >= partial_at:
        return "partial"
    return "fail"


def _events(world: World, ops: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    return [e for e in world.events if ops is None or e["op"] in ops]


# ---- shared world activity -----------------------------------------------------------------
def _restatement(ctx: Context, target_text: str, target_vec: np.ndarray, family: tuple | None,
                 rng: np.random.Generator) -> tuple[str, float] | None:
    """A real text restating ``target``, drawn among those whose measured cosine lies in the
    observed band; the closest below the band when none does."""
    if family is None:
        return None
    if family[0] == "role":
        candidates = constitution_variants(family[1]) + [CONSTITUTION[family[1]]]
        batch = len(candidates)
    else:
        candidates = note_variants(family[1])
        # A fixed shuffle per note, embedded a few at a time until one lands in the band:
        # every candidate costs an embedding, and every iteration restating this note sees the
        # same order (so the same embeddings).
        order = np.random.default_rng(zlib.crc32(repr(family[1]).encode())).permutation(
            len(candidates))
        candidates = [candidates[int(i)] for i in order]
        batch = _NOTE_BATCH
    candidates = [t for t in candidates if t != target_text]
    lo, hi = OBSERVED_BAND
    best: tuple[str, float] | None = None
    for start in range(0, len(candidates), batch):
        part = candidates[start:start + batch]
        sims = ctx.book.matrix(part) @ target_vec
        band = np.flatnonzero((sims >= lo) & (sims < hi))
        if len(band):
            k = int(band[rng.integers(len(band))])
            return part[k], float(sims[k])
        for text, sim in zip(part, sims):
            if sim < hi and (best is None or sim > best[1]):
                best = (text, float(sim))
    return best


def _draw_tier(inst: Instance, rng: np.random.Generator) -> str:
    names, p = inst.tier_probabilities(learned=True)
    return names[int(rng.choice(len(names), p=p))]


def _live(ctx: Context, world: World, days: float, rng: np.random.Generator,
          maker: NoteMaker, taken: set, *, operator: dict[float, Callable[[World], None]] | None = None,
          start_day: float = 0.0) -> dict[str, Any]:
    """Run ``days`` of the instance's life: sessions on its clock, blocks at its arrival rate,
    near-duplicate arrivals at its observed rate, one frame per session, consolidation at
    elfmem's inbox threshold, curate when due, a weekly review when the iteration has one."""
    inst = ctx.instance
    real_sessions = max(1, int(round(inst.sessions_per_day * days)))
    # Very chatty instances: simulate groups of sessions as one step (their hours and blocks
    # summed, one frame per step) so six months stay a few thousand steps.
    group = max(1, math.ceil(real_sessions / _MAX_STEPS))
    n_sessions = math.ceil(real_sessions / group)
    step = days / n_sessions
    per_session = group * inst.blocks_per_day / inst.sessions_per_day
    # Arrivals (clock, counts, which blocks are restatements) come from their own generator so
    # every iteration sees the same stream; choices that depend on the world's state (which
    # block is restated, which is queried) draw from ``rng``.
    arrivals = np.random.default_rng(rng.integers(2**63))
    session_hours = inst.session_sampler(arrivals)
    pending = sorted((operator or {}).items())
    stats = {"sessions": 0, "learned": 0, "near_dup_arrivals": 0, "principle_restatements": 0,
             "reviews": 0}
    next_review = start_day + 7.0
    for _ in range(n_sessions):
        world.advance(sum(session_hours() for _ in range(group)), step)
        stats["sessions"] += group
        while pending and pending[0][0] <= world.day:
            pending.pop(0)[1](world)
        for _ in range(int(arrivals.poisson(per_session))):
            stats["learned"] += 1
            restate = arrivals.random() < inst.near_dup_rate
            tier = _draw_tier(inst, arrivals)
            if restate:
                targets: list[tuple[str, np.ndarray, tuple | None]] = [
                    (b.text, b.vec, b.family) for b in world.active()]
                targets += [(t, ctx.book.vec(t), ("role", r)) for r, t in world.self_md.items()]
                if targets:
                    text, vec, family = targets[int(rng.integers(len(targets)))]
                    found = _restatement(ctx, text, vec, family, rng)
                    if found is not None:
                        stats["near_dup_arrivals"] += 1
                        if family and family[0] == "role":
                            stats["principle_restatements"] += 1
                        world.learn(found[0], family=family, tier=tier)
                        continue
            note = maker.fresh(1, taken)[0]
            world.learn(note.text, family=("note", note.key), tier=tier)
        if len(world.active(include_inbox=True)) - len(world.active()) >= 10 or \
                (world.it.files_authoritative and stats["learned"] % 10 == 0):
            world.consolidate()
        active = world.active()
        if active:
            query = active[int(rng.integers(len(active)))].vec
            world.retrieve(query, k=5)
        world.curate()
        if world.it.corpus_review and world.day >= next_review:
            world.review()
            stats["reviews"] += 1
            next_review += 7.0
    while pending:
        pending.pop(0)[1](world)
    world.consolidate()
    return stats


def _steady_world(ctx: Context, it: Iteration, scenario: str, rng: np.random.Generator,
                  maker: NoteMaker, taken: set, **kw: Any) -> World:
    """A world at the instance's size: constitution plus curated notes, counters at zero."""
    world = ctx.world(it, scenario, rng, **kw)
    world.init(constitution=True)
    n = max(0, min(ctx.instance.active_blocks, _MAX_STEADY_BLOCKS) - len(world.active()))
    notes = maker.fresh(n, taken)
    world.add_corpus([x.text for x in notes], [("note", x.key) for x in notes],
                     [_draw_tier(ctx.instance, rng) for _ in notes])
    world.calls.clear()
    world.tokens_in.clear()
    world.tokens_out.clear()
    world.events.clear()
    return world


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
            rows.append((role, cosine, result, applied))
            events.append({"op": "reword", "block": role, "cosine": round(cosine, 4),
                           "detail": f"{result}; applied={applied}"})
    n = len(rows)
    applied = sum(r[3] for r in rows)
    by_result: dict[str, int] = {}
    for r in rows:
        by_result[r[2]] = by_result.get(r[2], 0) + 1
    cos = np.array([r[1] for r in rows])
    lo, hi = it.near_dup_threshold, it.exact_dup_threshold
    metrics = {"rewordings": n, "applied": applied,
               "cosine_min": round(float(cos.min()), 4), "cosine_max": round(float(cos.max()), 4),
               f"in_band_[{lo},{hi})": int(((cos >= lo) & (cos < hi)).sum()),
               f"at_or_above_{hi}": int((cos >= hi).sum()), f"below_{lo}": int((cos < lo).sum())}
    metrics.update({f"result: {k}": v for k, v in sorted(by_result.items())})
    outcome = _grade(applied / n, 1.0, 0.5)
    summary = (f"{applied}/{n} rewordings applied; "
               + "; ".join(f"{v} {k}" for k, v in sorted(by_result.items())))
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
        _live(ctx, world, 30.0, rng, maker, set())
        waited = 30.0
    # A superseded target is replaced by a restatement of itself: its content stays.
    gone = [b.archive_reason in ("forgotten", "decayed") for b in targets]
    replaced = sum(b.archive_reason == "superseded" for b in targets)
    metrics.update({"deleted_directly": sum(deleted), "gone_after": sum(gone),
                    "replaced_by_restatement": replaced,
                    "days_waited": waited, "active_hours_waited": round(world.hours, 3),
                    "target_tiers": ",".join(b.tier for b in targets)})
    # The same rule as the real rows' S2: what counts is whether the targets left active
    # memory within the wait, by any exit that removes them (forgotten or decayed).
    n_gone = sum(gone)
    outcome = "pass" if n_gone == 3 else "partial" if n_gone else "fail"
    if all(deleted):
        summary = f"3 {what} blocks removed directly ({_events(world, ('forget',))[0]['detail']})"
    else:
        summary = (f"no delete path; after {waited:.0f} days ({world.hours:.2f} active h) "
                   f"{sum(gone)}/3 gone")
    return ScenarioResult("S2", it.name, outcome, summary, metrics,
                          _events(world, ("forget", "forget_unsupported", "decay", "supersede")))


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
    metrics: dict[str, Any] = {"role": role, "measured_cosine": round(cosine, 4),
                               "near_threshold": it.near_dup_threshold,
                               "exact_threshold": it.exact_dup_threshold}
    events = [e for e in world.events[start:] if newcomer.id in (e["block"], e["other"])]
    if it.constitution_file:
        state = world.constitution()[role]
        pinned = sum(b.pinned and b.status == "active" for b in world.blocks.values())
        metrics.update({"pinned_blocks_in_block_table": pinned, "self_md_intact": state["intact"]})
        return ScenarioResult(
            "S3", it.name, "pass" if state["intact"] else "fail",
            f"impossible: the principle lives in self.md, not the block table; new block at "
            f"{cosine:.3f} landed as an ordinary note", metrics, events, impossible=True)
    target = next(b for b in world.blocks.values() if b.role == role and b.text == CONSTITUTION[role])
    metrics.update({"pinned_status": target.status, "archive_reason": target.archive_reason or "-",
                    "superseded_by_recorded": target.superseded_by is not None,
                    "mutation_logged": any(e["op"] == "supersede" and e["recorded"] for e in events)})
    if target.status == "archived":
        sup = next(e for e in events if e["op"] == "supersede")
        metrics["tags_deleted"] = int(re.search(r"tags_deleted=(\d+)", sup["detail"]).group(1))
        return ScenarioResult(
            "S3", it.name, "fail",
            f"pinned '{role}' archived (superseded at cosine {cosine:.3f}); "
            f"{metrics['tags_deleted']} tags deleted; logged={metrics['mutation_logged']}",
            metrics, events)
    guarded = any(e["op"] == "guard_refused" for e in events)
    impossible = not it.supersession_active
    if guarded or impossible:
        how = "pin guard refused the supersession" if guarded else "no supersession path"
        return ScenarioResult("S3", it.name, "pass", f"pinned '{role}' kept: {how} "
                              f"(cosine {cosine:.3f})", metrics, events, impossible=impossible)
    return ScenarioResult(
        "S3", it.name, "partial",
        f"pinned '{role}' kept only because {cosine:.3f} missed the band "
        f"[{it.near_dup_threshold}, {it.exact_dup_threshold}); nothing guards it", metrics, events)


# ---- S4 ------------------------------------------------------------------------------------
def s4_cost(ctx: Context, it: Iteration) -> ScenarioResult:
    rng = ctx.rng("S4")
    maker = ctx.notes()
    taken: set = set()
    world = _steady_world(ctx, it, "S4", rng, maker, taken)
    batch = 10
    for _ in range(batch):
        active = world.active()
        if rng.random() < ctx.instance.near_dup_rate and active:
            target = active[int(rng.integers(len(active)))]
            found = _restatement(ctx, target.text, target.vec, target.family, rng)
            if found:
                world.learn(found[0], family=target.family, tier=_draw_tier(ctx.instance, rng))
                continue
        note = maker.fresh(1, taken)[0]
        world.learn(note.text, family=("note", note.key), tier=_draw_tier(ctx.instance, rng))
    world.consolidate()
    world.review()
    calls = world.llm_calls
    per_block = calls / batch
    metrics = {"batch": batch, "corpus_blocks": len(world.active()), "llm_calls": calls,
               "calls_per_block": round(per_block, 2),
               "analysis_calls": world.calls["analysis"],
               "contradiction_calls": world.calls["contradiction"],
               "review_calls": world.calls["review"],
               "llm_input_tokens": sum(world.tokens_in.values()),
               "worst_case_calls": batch * (1 + (it.contradiction_top_k or len(world.active())))
               if it.pairwise_contradiction else batch + world.calls["review"]}
    if ctx.instance.llm_calls_per_active_block is not None:
        metrics["instance_lifetime_calls_per_active_block"] = round(
            ctx.instance.llm_calls_per_active_block, 1)
    outcome = _grade(per_block, 1.5, 3.0, higher_is_better=False)
    summary = (f"{calls} LLM calls for 10 blocks ({world.calls['analysis']} analysis"
               f" + {world.calls['contradiction']} contradiction + {world.calls['review']} review)")
    return ScenarioResult("S4", it.name, outcome, summary, metrics,
                          _events(world, ("contradiction_checks", "review", "supersede")),
                          modelled=["calls counted, not made; token totals use assumed prompt "
                                    f"overheads {PROMPT_TOKENS}"])


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
        how = ("api_key=None, SDK falls back to OPENAI_API_KEY" if api_key is None
               else "profile says api_key: none, a placeholder is injected")
        try:
            import openai
        except ImportError:
            ok = api_key is not None
            return {"client_ok": ok, "measured": False, "how": how,
                    "error": "-" if ok else "modelled: the SDK requires OPENAI_API_KEY"}
        with _without_env("OPENAI_API_KEY", "OPENAI_ADMIN_KEY"):
            try:
                openai.OpenAI(base_url="http://localhost:1234/v1", api_key=api_key)
                return {"client_ok": True, "measured": True, "how": how, "error": "-",
                        "sdk": f"openai {openai.__version__}"}
            except openai.OpenAIError as exc:
                return {"client_ok": False, "measured": True, "how": how,
                        "error": str(exc).split(".")[0], "sdk": f"openai {openai.__version__}"}
    return ctx.memoised(("client", it.key_resolution), make)


def s5_fresh_install(ctx: Context, it: Iteration) -> ScenarioResult:
    check = _client_check(ctx, it)
    rng = ctx.rng("S5")
    world = ctx.world(it, "S5", rng, llm_available=check["client_ok"])
    world.init(constitution=False)
    written = len(world.active(include_inbox=True))
    metrics = {"blocks_written_by_init": written, "llm_calls_during_init": world.llm_calls,
               "failed_llm_calls": sum(world.llm_errors.values()),
               "local_client_without_cloud_key": check["client_ok"],
               "client_check_measured": check["measured"], "client_error": check["error"]}
    problems = []
    if written:
        problems.append(f"init wrote {written} blocks the user did not choose")
    if not check["client_ok"]:
        problems.append(f"local-only setup needs OPENAI_API_KEY ({check['error']})")
    outcome = "pass" if not problems else ("partial" if len(problems) == 1 else "fail")
    summary = "; ".join(problems) or "init wrote 0 blocks; local client built without a cloud key"
    modelled = [] if check["measured"] else ["openai SDK not installed: key rule modelled"]
    return ScenarioResult("S5", it.name, outcome, summary, metrics,
                          _events(world, ("init", "llm_error", "promote")), modelled=modelled)


def s6_missing_key(ctx: Context, it: Iteration) -> ScenarioResult:
    check = _client_check(ctx, it.with_(name=it.name + " (no key)", key_resolution="sdk_default"))
    rng = ctx.rng("S6")
    # Whether an LLM answers without a key is the real SDK's answer (the client check builds
    # the provider's client with no key in the environment), not a constant.
    world = ctx.world(it, "S6", rng, llm_available=check["client_ok"])
    modelled = ["boot behaviour per the doc: elfmem builds adapters lazily (api_key=None) so "
                "the server starts; preflight makes one real call per profile at boot"]
    if it.preflight:
        ok = world.try_call("preflight", 0)
        metrics = {"boot": "refused" if not ok else "ok", "surfaced_at": "boot",
                   "blocks_degraded": len(world.degraded),
                   "failed_llm_calls": sum(world.llm_errors.values()),
                   "sdk_raises_without_key": not check["client_ok"]}
        # Pass only if the missing key stopped the boot; a preflight that got through would
        # mean the bad key went unnoticed.
        outcome = "pass" if not ok else "fail"
        summary = ("preflight failed loudly at boot; nothing written under a bad key" if not ok
                   else "preflight passed without a key: the missing key went unnoticed")
        return ScenarioResult("S6", it.name, outcome, summary, metrics,
                              [{"op": "boot", "detail": f"preflight with no key: {metrics['boot']}"}],
                              modelled=modelled)
    world.init(constitution=True)
    maker = ctx.notes()
    for note in maker.fresh(10):
        world.learn(note.text, family=("note", note.key))
    world.consolidate()
    world.review()
    surfaced = "first review" if world.llm_errors.get("review") else "never (logged only)"
    degraded = len(world.degraded)
    metrics = {"boot": "ok (adapter built lazily)", "surfaced_at": surfaced,
               "blocks_degraded": degraded, "failed_llm_calls": sum(world.llm_errors.values()),
               "blocks_in_memory": len(world.active()),
               "sdk_raises_without_key": not check["client_ok"],
               "client_check_measured": check["measured"]}
    if degraded:
        outcome = "fail"
        summary = (f"server booted; {degraded} blocks promoted with default scores and no "
                   f"summary; error surfaced: {surfaced}")
    else:
        outcome = "partial"
        summary = (f"memory intact (writes need no LLM) but {metrics['failed_llm_calls']} LLM "
                   f"calls failed after boot; surfaced: {surfaced}")
    return ScenarioResult("S6", it.name, outcome, summary, metrics,
                          _events(world, ("llm_error", "review")), modelled=modelled)


# ---- S7 / S11: scale -------------------------------------------------------------------------
def _scale_corpus(ctx: Context) -> dict[str, Any]:
    def make() -> dict[str, Any]:
        inst = ctx.instance
        base = min(inst.active_blocks, _MAX_STEADY_BLOCKS)
        grown = min(base * inst.growth, _MAX_SCALE_BLOCKS)
        maker = NoteMaker(_CORPUS_SEED)
        taken: set = set()
        notes = maker.fresh(grown, taken)
        started = time.perf_counter()
        vecs = ctx.book.matrix([n.text for n in notes])
        return {"base": base, "grown": grown, "notes": notes, "vecs": vecs, "maker": maker,
                "taken": taken, "embed_s": time.perf_counter() - started}
    return ctx.memoised("scale_corpus", make)


_STOP = frozenset("a an and are as at be by do does for from how in is it its of on or the this "
                  "to we what when where which with did decide about work fix".split())


def _terms(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in _STOP]


def _relevant(query_note, corpus_keys: np.ndarray) -> np.ndarray:
    """Blocks that answer a query about a note: same component, same symptom."""
    c, s, _, _ = query_note.key
    return (corpus_keys[:, 0] == c) & (corpus_keys[:, 1] == s)


class _Grep:
    """A keyword scan with no index, as grep does it: every query term is searched for in every
    block's text (a literal substring scan in C, numpy's ``char.find``)."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = np.array([t.lower() for t in texts])

    def term_counts(self, terms: list[str]) -> np.ndarray:
        """Distinct query terms found in each block."""
        counts = np.zeros(len(self.texts), dtype=np.int32)
        for term in dict.fromkeys(terms):
            counts += np.char.find(self.texts, term) >= 0
        return counts

    def any_term(self, terms: list[str]) -> np.ndarray:
        """Blocks matching any term, in file order (what `rg -e t1 -e t2` lists)."""
        return np.flatnonzero(self.term_counts(terms))


class _Ripgrep:
    """The real ``rg`` (Debian's ripgrep) over the corpus written as a markdown file, one block
    per line: ``rg -n -i -F -e t1 -e t2`` lists matching lines in file order."""

    name = "ripgrep"

    def __init__(self, texts: list[str], folder: Path) -> None:
        self.rg = shutil.which("rg")
        self.path = folder / "corpus.md"
        self.path.write_text("".join(t.replace("\n", " ") + "\n" for t in texts),
                             encoding="utf-8")

    def any_term(self, terms: list[str]) -> np.ndarray:
        args = [self.rg, "-n", "-i", "-F", "--no-heading", "--no-filename"]
        for term in dict.fromkeys(terms):
            args += ["-e", term]
        proc = subprocess.run([*args, str(self.path)], capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            raise MemlabError(f"rg failed: {proc.stderr.strip()[:200]}", path=self.path)
        lines = [int(line.split(":", 1)[0]) - 1 for line in proc.stdout.splitlines() if line]
        return np.array(lines, dtype=np.int64)


def _retrieval(ctx: Context, arm: str, size: int, window: int) -> dict[str, Any]:
    """hit@5 / precision@5 / latency of one retrieval arm at one corpus size (memoised).

    ``index``: nearest neighbours of the query's embedding (faiss). ``files``: no index;
    whole-file inclusion while the corpus fits the window, else ripgrep: blocks matching any
    query term, in file order, as many as the frame holds (ripgrep does not rank); what a
    ranked term-overlap scan would get is recorded beside it.
    """
    def make() -> dict[str, Any]:
        fx = _scale_corpus(ctx)
        inst = ctx.instance
        notes = fx["notes"][:size]
        keys = np.array([n.key for n in notes])
        rng = ctx.rng("S7", "queries")
        picks = rng.choice(fx["base"], size=min(_S7_QUERIES, fx["base"]), replace=False)
        queries = [fx["notes"][int(i)] for i in picks]
        qtexts = [NoteMaker.query(q, named=bool(k % 2)) for k, q in enumerate(queries)]
        qterms = [_terms(t) for t in qtexts]
        relevant = [_relevant(q, keys) for q in queries]
        corpus_tokens = size * inst.mean_block_tokens
        frame_k = 5
        out: dict[str, Any] = {"queries": len(queries)}
        if arm == "index":
            from memlab.embed import NeighborIndex

            index = NeighborIndex(fx["vecs"][:size])
            qv = ctx.book.matrix(qtexts)
            t0 = time.perf_counter()
            _, ids = index.search(qv, frame_k)
            out["ms_per_query"] = 1000 * (time.perf_counter() - t0) / len(queries)
            tops = [row[row >= 0] for row in ids]
            out["method"] = f"faiss {index.kind} over {size:,} vectors"
            out["context_tokens"] = frame_k * inst.mean_block_tokens
        elif corpus_tokens <= window:
            tops = [np.arange(size)] * len(queries)
            out["ms_per_query"] = 0.0
            out["method"] = "whole-file inclusion (corpus fits the window)"
            out["context_tokens"] = corpus_tokens
        else:
            grep = _Grep([n.text for n in notes])
            tmp = tempfile.TemporaryDirectory(prefix="memlab-rg-")
            scan = _Ripgrep([n.text for n in notes], Path(tmp.name)) if shutil.which("rg") \
                else None
            t0 = time.perf_counter()
            matches = [(scan or grep).any_term(terms) for terms in qterms]
            out["ms_per_query"] = 1000 * (time.perf_counter() - t0) / len(queries)
            tmp.cleanup()
            tool = ("ripgrep (rg)" if scan else
                    "substring scan (numpy; ripgrep not installed, same matches as rg -F -i)")
            tops = [m[:frame_k] for m in matches]
            out["grep_matches_per_query"] = float(np.mean([len(m) for m in matches]))
            out["tokens_to_include_all_matches"] = float(
                np.mean([len(m) for m in matches]) * inst.mean_block_tokens)
            # For the record: what an index-free *ranked* scan (term overlap) would get.
            ranked = [np.argsort(-grep.term_counts(terms), kind="stable")[:frame_k]
                      for terms in qterms]
            out["ranked_scan_hit@5"] = float(np.mean([relevant[qi][ranked[qi]].any()
                                                      for qi in range(len(queries))]))
            out["method"] = (f"{tool} over {size:,} blocks ({corpus_tokens:,.0f} tokens > "
                             f"{window:,} window), first {frame_k} matches")
            out["context_tokens"] = frame_k * inst.mean_block_tokens
        hits = [bool(rel[top].any()) for rel, top in zip(relevant, tops)]
        prec = [float(rel[top].mean()) if len(top) else 0.0 for rel, top in zip(relevant, tops)]
        out["hit@5"] = float(np.mean(hits))
        out["precision@5"] = float(np.mean(prec)) if arm != "files" or corpus_tokens > window \
            else float(np.mean([rel.mean() for rel in relevant]))
        return out
    return ctx.memoised(("retrieval", arm, size, window), make)


def _write_path(ctx: Context, it: Iteration, size: int) -> dict[str, float]:
    fx = _scale_corpus(ctx)
    probes = ctx.memoised("s7_probes", lambda: ctx.notes().fresh(10, set(fx["taken"])))
    sims = ctx.book.matrix([p.text for p in probes]) @ fx["vecs"][:size].T
    candidates = (sims >= it.contradiction_prefilter).sum(axis=1)
    checks = np.minimum(candidates, it.contradiction_top_k) if it.contradiction_top_k is not None \
        else candidates
    analysis = 1.0 if it.write_time_analysis else 0.0
    per_block = analysis + (checks.mean() if it.pairwise_contradiction else 0.0)
    coverage = float((checks / np.maximum(candidates, 1)).mean()) if it.pairwise_contradiction \
        else float("nan")
    window = it.review_window_tokens - PROMPT_TOKENS["review"][0]
    chunks = math.ceil(size * ctx.instance.mean_block_tokens / window) if it.corpus_review else 0
    return {"calls_per_block": float(per_block), "candidates_per_block": float(candidates.mean()),
            "contradiction_coverage": coverage, "review_calls": chunks}


def s7_scale(ctx: Context, it: Iteration) -> ScenarioResult:
    fx = _scale_corpus(ctx)
    base, grown = fx["base"], fx["grown"]
    window = it.review_window_tokens
    arm = "index" if it.semantic_index else "files"
    small = _retrieval(ctx, arm, base, window)
    large = _retrieval(ctx, arm, grown, window)
    wb, wg = _write_path(ctx, it, base), _write_path(ctx, it, grown)
    metrics = {
        "blocks": f"{base} -> {grown}" + (" (capped)" if grown < ctx.instance.active_blocks
                                          * ctx.instance.growth else ""),
        "retrieval_large": large["method"],
        "hit@5_small": round(small["hit@5"], 3), "hit@5_large": round(large["hit@5"], 3),
        "precision@5_large": round(large["precision@5"], 3),
        "ms_per_query_small": round(small["ms_per_query"], 3),
        "ms_per_query_large": round(large["ms_per_query"], 3),
        "context_tokens_per_query_small": round(small["context_tokens"]),
        "context_tokens_per_query_large": round(large["context_tokens"]),
        "write_calls_per_block_small": round(wb["calls_per_block"], 2),
        "write_calls_per_block_large": round(wg["calls_per_block"], 2),
        "review_calls_small": wb["review_calls"], "review_calls_large": wg["review_calls"],
    }
    for extra in ("grep_matches_per_query", "tokens_to_include_all_matches", "ranked_scan_hit@5"):
        if extra in large:
            metrics[f"{extra}_large"] = round(large[extra], 3)
    if it.pairwise_contradiction:
        metrics["contradiction_candidates_per_block_large"] = round(wg["candidates_per_block"], 1)
        metrics["contradiction_coverage_small"] = round(wb["contradiction_coverage"], 3)
        metrics["contradiction_coverage_large"] = round(wg["contradiction_coverage"], 3)
    unstable = ("ms_per_query_small", "ms_per_query_large")
    # Headroom: the large corpus keeps at least 60 % of the small corpus's hit rate.
    floor = 0.6 * small["hit@5"]
    metrics["hit@5_needed"] = round(floor, 3)
    retrieval_ok = large["hit@5"] >= floor
    write_grows = wg["calls_per_block"] > 1.5 * max(wb["calls_per_block"], 1e-9)
    coverage_falls = it.pairwise_contradiction and \
        wg["contradiction_coverage"] < 0.9 * wb["contradiction_coverage"]
    if not retrieval_ok:
        outcome = "fail"
        summary = (f"retrieval collapses at {grown:,} blocks: hit@5 {small['hit@5']:.2f} -> "
                   f"{large['hit@5']:.2f}, needs {floor:.2f} ({large['method']})")
    elif write_grows or coverage_falls:
        outcome = "partial"
        cov = (f"; contradiction checks cover {wb['contradiction_coverage']:.0%} -> "
               f"{wg['contradiction_coverage']:.0%} of candidates (capped at "
               f"top_k={it.contradiction_top_k})" if coverage_falls else "")
        summary = (f"retrieval holds (hit@5 {small['hit@5']:.2f} -> {large['hit@5']:.2f}); write "
                   f"path {wb['calls_per_block']:.1f} -> {wg['calls_per_block']:.1f} calls/block{cov}")
    else:
        summary = (f"retrieval holds (hit@5 {small['hit@5']:.2f} -> {large['hit@5']:.2f}, "
                   f"{large['ms_per_query']:.2f} ms/query); {wg['calls_per_block']:.1f} "
                   f"calls/block; review {wb['review_calls']} -> {wg['review_calls']} call(s) per run")
        outcome = "pass"
    events = [{"op": "retrieval", "detail": f"{size}: {r['method']}, hit@5={r['hit@5']:.3f}"}
              for size, r in ((base, small), (grown, large))]
    return ScenarioResult("S7", it.name, outcome, summary, metrics, events,
                          modelled=["blocks are synthetic engineering notes; token budgets use "
                                    f"the instance's mean block size "
                                    f"({ctx.instance.mean_block_tokens:.0f} tokens)"],
                          unstable=unstable)


def _s11_fixture(ctx: Context) -> dict[str, Any]:
    def make() -> dict[str, Any]:
        from memlab.embed import NeighborIndex

        fx = _scale_corpus(ctx)
        rng = ctx.rng("S11")
        grown = fx["grown"]
        n_plant = max(10, min(50, grown // 200))
        sources = rng.choice(int(grown * 0.8), size=n_plant, replace=False)
        order = list(range(grown))
        planted = []
        for src in sources:
            note = fx["notes"][int(src)]
            found = _restatement(ctx, note.text, fx["vecs"][int(src)], ("note", note.key), rng)
            if found is None:
                continue
            pos = int(rng.integers(int(src) + 1, grown + len(planted) + 1))
            planted.append((int(src), found[0], found[1], pos))
        extra = ctx.book.matrix([p[1] for p in planted])
        all_vecs = np.vstack([fx["vecs"], extra])
        for k, (_, _, _, pos) in enumerate(planted):
            order.insert(min(pos, len(order)), grown + k)
        truth = NeighborIndex(all_vecs).pairs_above(OBSERVED_BAND[0])
        return {"vecs": all_vecs, "order": np.array(order), "truth": truth,
                "planted": planted, "n": len(order)}
    return ctx.memoised("s11", make)


def _chunks(ctx: Context, it: Iteration, fx: dict[str, Any]) -> np.ndarray:
    """Chunk id of every block for one review run."""
    window = it.review_window_tokens - PROMPT_TOKENS["review"][0]
    per_chunk = max(1, int(window // ctx.instance.mean_block_tokens))
    n = fx["n"]
    if not it.review_cluster_first:
        position = np.empty(n, dtype=np.int64)
        position[fx["order"]] = np.arange(n)
        return position // per_chunk

    def make() -> np.ndarray:
        faiss = require("faiss", "embeddings", feature="cluster-first review", package="faiss-cpu")
        vecs = fx["vecs"]
        k = 2 * math.ceil(n / per_chunk)
        km = faiss.Kmeans(vecs.shape[1], k, niter=20, seed=ctx.seed, verbose=False)
        km.train(vecs)
        assign = km.index.search(vecs, 1)[1].ravel()
        parts = []
        for c in range(k):
            members = np.flatnonzero(assign == c)
            if len(members) > per_chunk:
                # Too big for one call: cut along the cluster's main axis, so the cut separates
                # blocks that are far apart rather than arbitrary ones.
                centred = vecs[members] - vecs[members].mean(0)
                axis = np.linalg.svd(centred, full_matrices=False)[2][0]
                members = members[np.argsort(centred @ axis, kind="stable")]
                parts += [members[x:x + per_chunk] for x in range(0, len(members), per_chunk)]
            elif len(members):
                parts.append(members)
        # First-fit decreasing: whole clusters into as few calls as they fit.
        parts.sort(key=len, reverse=True)
        loads: list[int] = []
        chunk = np.empty(n, dtype=np.int64)
        for part in parts:
            for ci, load in enumerate(loads):
                if load + len(part) <= per_chunk:
                    loads[ci] += len(part)
                    chunk[part] = ci
                    break
            else:
                loads.append(len(part))
                chunk[part] = len(loads) - 1
        return chunk
    return ctx.memoised(("s11_cluster", per_chunk), make)


def s11_chunked_review(ctx: Context, it: Iteration) -> ScenarioResult:
    if not it.corpus_review:
        return ScenarioResult("S11", it.name, "n/a", "no corpus-level review: duplicates are "
                              "handled pairwise at write time", {})
    fx = _s11_fixture(ctx)
    chunk = _chunks(ctx, it, fx)
    truth = fx["truth"]
    i, j = truth["i"].to_numpy(), truth["j"].to_numpy()
    same = chunk[i] == chunk[j]
    planted_idx = {(src, len(fx["order"]) - len(fx["planted"]) + k)
                   for k, (src, _, _, _) in enumerate(fx["planted"])}
    planted_mask = np.array([(a, b) in planted_idx for a, b in zip(i, j)])
    n_chunks = int(chunk.max()) + 1
    visible = float(same.mean()) if len(same) else 1.0
    metrics = {"blocks": fx["n"], "review_chunks": n_chunks,
               "chunking": "embedding clusters" if it.review_cluster_first else "creation order",
               "duplicate_pairs_>=0.90": int(len(truth)),
               "planted_pairs": int(len(fx["planted"])),
               "pairs_within_one_chunk": int(same.sum()),
               "visible_fraction": round(visible, 3),
               "planted_visible": int((same & planted_mask).sum())}
    # Pass: at least 85 % of duplicate pairs reach one reviewer call. Cluster-first chunking
    # measures about 0.9 here (the misses straddle cluster cuts); creation order a few percent.
    outcome = "pass" if n_chunks == 1 else _grade(visible, 0.85, 0.5)
    summary = (f"{n_chunks} chunks by {metrics['chunking']}: {int(same.sum())}/{len(truth)} "
               f"duplicate pairs (cos >= 0.90) share a chunk ({visible:.0%})")
    return ScenarioResult("S11", it.name, outcome, summary, metrics,
                          [{"op": "review_chunking", "detail": summary}],
                          modelled=["the reviewer is assumed to find a duplicate pair only "
                                    "when both blocks are in the same call"])


# ---- S8: two real writers --------------------------------------------------------------------
def _git_env(home: Path) -> dict[str, str]:
    return {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(home), "GIT_AUTHOR_NAME": "sim", "GIT_AUTHOR_EMAIL": "sim@x",
            "GIT_COMMITTER_NAME": "sim", "GIT_COMMITTER_EMAIL": "sim@x", "GIT_TERMINAL_PROMPT": "0"}


def _git(repo: Path, *args: str, env: dict[str, str],
         check: bool = False) -> subprocess.CompletedProcess:
    """Run git in ``repo``. ``check``: a setup step the measurement rests on; its failure
    raises rather than being counted as a lost block or a push conflict."""
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=env)
    if check and proc.returncode != 0:
        raise RuntimeError(f"S8 setup: git {' '.join(args[:2])} failed ({proc.returncode}): "
                           f"{proc.stderr.strip()[-500:]}")
    return proc


def _spawn_writers(kind: str, target: Path, n: int, folder: Path, *extra: str,
                   env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    script = Path(__file__).with_name("_writers.py")
    procs = [subprocess.Popen([sys.executable, str(script), kind, str(target), w, str(n),
                               str(folder), *extra], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
             for w in ("A", "B")]
    outs = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            if proc.returncode != 0:
                raise RuntimeError(f"S8 writer failed ({proc.returncode}): {err.strip()[-500:]}")
            outs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        # A failed or timed-out writer must not leave its partner (or itself) running.
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return outs


def _s8_sqlite(n: int) -> dict[str, Any]:
    import sqlite3

    root = Path(tempfile.mkdtemp(prefix="memlab-s8-"))
    try:
        db = root / "memory.db"
        conn = sqlite3.connect(db, isolation_level=None)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        conn.executescript("CREATE TABLE blocks(id TEXT PRIMARY KEY, writer TEXT, content TEXT);"
                           "CREATE TABLE counters(learned INTEGER);"
                           "INSERT INTO counters VALUES (0);"
                           "CREATE TABLE curated(id INTEGER PRIMARY KEY, content TEXT);"
                           "INSERT INTO curated VALUES (1, '## curated');")
        conn.close()
        (root / "rv").mkdir()
        t0 = time.perf_counter()
        outs = _spawn_writers("sqlite", db, n, root / "rv")
        elapsed = time.perf_counter() - t0
        conn = sqlite3.connect(db)
        rows = conn.execute("SELECT count(*) FROM blocks").fetchone()[0]
        counter = conn.execute("SELECT learned FROM counters").fetchone()[0]
        curated = conn.execute("SELECT content FROM curated").fetchone()[0]
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        conn.close()
        edits = curated.count("+ note by")
        return {"journal_mode": mode, "blocks_written": 2 * n, "blocks_present": rows,
                "lost_blocks": 2 * n - rows, "lost_counter_updates": 2 * n - counter,
                "edits_made": 2, "edits_present": edits, "lost_edits": 2 - edits,
                "integrity": integrity, "failed_writes": sum(o["errors"] for o in outs),
                "busy_retries": sum(o["busy_retries"] for o in outs), "seconds": elapsed}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _s8_files(n: int, append_only: bool) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="memlab-s8-"))
    try:
        env = _git_env(root)
        repo = root / "memory"
        (repo / "log").mkdir(parents=True)
        (repo / "notes").mkdir()
        (repo / "log" / "2026-08.md").write_text("# log 2026-08\n")
        (repo / "notes" / "curated.md").write_text("## curated\nthe shared curated block\n")
        _git(repo, "init", "-q", "-b", "main", env=env, check=True)
        _git(repo, "add", ".", env=env, check=True)
        _git(repo, "commit", "-q", "-m", "base", env=env, check=True)
        (root / "rv").mkdir()
        t0 = time.perf_counter()
        outs = _spawn_writers("files", repo, n, root / "rv", "1" if append_only else "0", env=env)
        elapsed = time.perf_counter() - t0
        text = (repo / "log" / "2026-08.md").read_text() + (repo / "notes" / "curated.md").read_text()
        present = len(set(re.findall(r"<!-- id: ([AB]-\d{3}) -->", text)))
        edits = (repo / "notes" / "curated.md").read_text().count("+ note by")
        commits = int(_git(repo, "rev-list", "--count", "HEAD", env=env,
                           check=True).stdout.strip()) - 1
        dirty = _git(repo, "status", "--porcelain", "--no-optional-locks", env=env).stdout.strip()
        fsck = _git(repo, "fsck", "--no-progress", env=env).returncode == 0
        clone = _s8_clones(root, n, env)
        return {"substrate": "files in git, one working tree",
                "learn_path": "append to log (O_APPEND)" if append_only else
                "rewrite notes file (read, write whole)",
                "blocks_written": 2 * n, "blocks_present": present, "lost_blocks": 2 * n - present,
                "edits_made": 2, "edits_present": edits, "lost_edits": 2 - edits,
                "commits": commits, "uncommitted_after": len(dirty.splitlines()) if dirty else 0,
                "fsck_ok": fsck, "failed_commits": sum(o["failed_commits"] for o in outs),
                "commit_retries": sum(o["commit_retries"] for o in outs), "seconds": elapsed,
                **clone}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _s8_clones(root: Path, n: int, env: dict[str, str]) -> dict[str, Any]:
    """Two agents on two clones: both append to this month's log, then push. Measured with and
    without ``merge=union`` for log/ in .gitattributes."""
    out: dict[str, Any] = {}
    for union in (False, True):
        base = root / f"clones-{int(union)}"
        origin = base / "origin.git"
        seed = base / "seed"
        seed.mkdir(parents=True)
        (seed / "log").mkdir()
        (seed / "log" / "2026-08.md").write_text("# log 2026-08\n")
        if union:
            (seed / ".gitattributes").write_text("log/*.md merge=union\n")
        _git(seed, "init", "-q", "-b", "main", env=env, check=True)
        _git(seed, "add", ".", env=env, check=True)
        _git(seed, "commit", "-q", "-m", "base", env=env, check=True)
        _git(base, "clone", "-q", "--bare", str(seed), str(origin), env=env, check=True)
        clones = []
        for w in ("A", "B"):
            path = base / w
            _git(base, "clone", "-q", str(origin), str(path), env=env, check=True)
            with open(path / "log" / "2026-08.md", "a") as fh:
                for i in range(n):
                    fh.write(f"\n## block {i} by {w}\n<!-- id: {w}-{i:03d} -->\n")
            _git(path, "commit", "-q", "-am", f"learn by {w}", env=env, check=True)
            clones.append(path)
        conflicts = 0
        for path in clones:
            if _git(path, "push", "-q", "origin", "main", env=env).returncode != 0:
                rebase = _git(path, "pull", "-q", "--rebase", "origin", "main", env=env)
                if rebase.returncode != 0:
                    conflicts += 1
                    _git(path, "rebase", "--abort", env=env)
                else:
                    _git(path, "push", "-q", "origin", "main", env=env)
        check = base / "check"
        _git(base, "clone", "-q", str(origin), str(check), env=env, check=True)
        present = len(set(re.findall(r"<!-- id: ([AB]-\d{3}) -->",
                                     (check / "log" / "2026-08.md").read_text())))
        key = "clones_union" if union else "clones"
        out[f"{key}_conflicts"] = conflicts
        out[f"{key}_blocks_upstream"] = f"{present}/{2 * n}"
    return out


def s8_concurrent(ctx: Context, it: Iteration) -> ScenarioResult:
    n = _S8_BLOCKS_PER_WRITER
    if it.files_authoritative and shutil.which("git") is None:
        raise MemlabError("S8 runs its file writers against a real git repository and needs "
                          "the git command", hint="install git, or leave S8 out of scenarios")
    if not it.files_authoritative:
        m = ctx.memoised(("s8", "sqlite"), lambda: _s8_sqlite(n))
        lost = m["lost_blocks"] + m["lost_counter_updates"] + m["failed_writes"]
        # Same rule as the files arm: lost blocks fail; a lost read-modify-write edit (the
        # protocol's race, identical on both substrates) is partial.
        outcome = ("fail" if lost or m["integrity"] != "ok" else
                   "partial" if m["lost_edits"] else "pass")
        summary = (f"2 processes x {n} blocks + 1 shared edit on SQLite ({m['journal_mode']}): "
                   f"{m['lost_blocks']} blocks lost, {m['lost_edits']} edits lost, "
                   f"integrity {m['integrity']}")
        return ScenarioResult("S8", it.name, outcome, summary, m, [
            {"op": "writers", "detail": summary}], unstable=("busy_retries", "seconds"))
    m = ctx.memoised(("s8", "files", it.learn_append_only),
                     lambda: _s8_files(n, it.learn_append_only))
    if m["lost_blocks"] or m["failed_commits"] or not m["fsck_ok"]:
        outcome = "fail"
    elif m["lost_edits"] or m["clones_conflicts"]:
        outcome = "partial"
    else:
        outcome = "pass"
    summary = (f"2 processes x {n} blocks ({m['learn_path']}) + 1 shared edit: "
               f"{m['lost_blocks']} blocks lost, {m['lost_edits']}/2 edits lost; two clones: "
               f"{m['clones_conflicts']} push conflict(s) ({m['clones_union_conflicts']} with "
               f"merge=union)")
    return ScenarioResult("S8", it.name, outcome, summary, m, [{"op": "writers", "detail": summary}],
                          unstable=("commit_retries", "seconds"))


# ---- S9 / S10: months of use -----------------------------------------------------------------
def s9_last_month(ctx: Context, it: Iteration) -> ScenarioResult:
    rng = ctx.rng("S9")
    maker = ctx.notes()
    taken: set = set()
    world = _steady_world(ctx, it, "S9", rng, maker, taken)
    op_rng = ctx.rng("S9", "operator")

    def operator_edits(w: World) -> None:
        pool = [b for b in w.active() if b.role is None and b.family]
        for block in [pool[int(i)] for i in op_rng.choice(len(pool), size=min(2, len(pool)),
                                                            replace=False)]:
            found = _restatement(ctx, block.text, block.vec, block.family, op_rng)
            if found is None:
                continue
            if not w.edit(block, found[0]):
                w.learn(found[0], family=block.family, tier=block.tier)  # the only path left
                w.consolidate()

    def operator_forget(w: World) -> None:
        pool = [b for b in w.active() if b.role is None]
        if pool:
            w.forget(pool[int(op_rng.integers(len(pool)))])

    _live(ctx, world, 60.0, rng, maker, taken,
          operator={40.0: operator_edits, 50.0: operator_forget})
    month = [e for e in world.events if e["day"] >= 30.0 and
             e["op"] in ("supersede", "decay", "edit", "forget")]
    recovered = [e for e in month if e["recorded"] and e["cause_recorded"]]
    kinds = sorted({e["op"] for e in month})
    missing = sorted({e["op"] for e in month if not (e["recorded"] and e["cause_recorded"])})
    metrics = {"window_days": "30-60", "changes": len(month),
               "changes_by_kind": ", ".join(f"{k}={sum(e['op'] == k for e in month)}" for k in kinds)
               or "-", "recoverable": len(recovered), "history": it.history,
               "not_recorded_kinds": ",".join(missing) or "-"}
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
    outcome = _grade(recall, 0.95, 0.5)
    summary = (f"{len(recovered)}/{len(month)} changes of the last month recoverable with time "
               f"and cause from {it.history}" + (f"; unrecorded: {', '.join(missing)}" if missing
                                                 else ""))
    return ScenarioResult("S9", it.name, outcome, summary, metrics, month)


def s10_six_months(ctx: Context, it: Iteration) -> ScenarioResult:
    rng = ctx.rng("S10")
    maker = ctx.notes()
    world = ctx.world(it, "S10", rng)
    world.init(constitution=True)
    stats = _live(ctx, world, 182.0, rng, maker, set())
    state = world.constitution()
    intact = sum(s["intact"] for s in state.values())
    filled = sum(s["filled"] for s in state.values())
    counts = world.counts()
    lost = [e for e in world.events if e["op"] in ("supersede", "decay") and
            (world.blocks[e["block"]].role is not None)]
    metrics = {"days": 182, "sessions": stats["sessions"], "active_hours": round(world.hours, 2),
               "curate_runs": world.curate_runs, "blocks_learned": stats["learned"],
               "near_dup_arrivals": stats["near_dup_arrivals"],
               "principle_restatements": stats["principle_restatements"],
               "supersessions": counts["superseded"], "decay_archivals": counts["decayed"],
               "roles_intact": intact, "roles_filled": filled,
               "constitution_lost_to": ",".join(sorted({e["op"] for e in lost})) or "-"}
    for tier in ("DURABLE", "STANDARD", "EPHEMERAL"):
        metrics[f"recency_unreinforced_{tier}"] = round(math.exp(-LAMBDA[tier] * world.hours), 4)
    outcome = _grade(intact / len(CONSTITUTION), 1.0, 0.8)
    where = "self.md" if it.constitution_file else "block table"
    summary = (f"{intact}/10 principles intact after 182 days ({world.hours:.1f} active h, "
               f"{world.curate_runs} curate runs, {counts['decayed']} decay archivals, "
               f"{counts['superseded']} supersessions; constitution in {where})")
    events = [e for e in world.events if e["op"] in ("supersede", "decay", "guard_refused")]
    return ScenarioResult("S10", it.name, outcome, summary, metrics, events)


SCENARIOS: dict[str, Scenario] = {s.code: s for s in (
    Scenario("S1", "Operator rewords one constitutional principle", "control", s1_reword),
    Scenario("S2", "Operator deletes 3 unwanted seeded blocks", "control", s2_delete),
    Scenario("S3", "New block at 0.91 cosine to a pinned constitutional block", "adversarial",
             s3_pinned),
    Scenario("S4", "10 blocks learned in a batch: steady-state LLM cost", "cost", s4_cost),
    Scenario("S5", "Fresh install, local model only", "onboarding", s5_fresh_install),
    Scenario("S6", "API key absent; server starts anyway", "adversarial", s6_missing_key),
    Scenario("S7", "Corpus grows 100x", "scale", s7_scale),
    Scenario("S8", "Two agents write concurrently", "adversarial", s8_concurrent),
    Scenario("S9", "Audit what changed in memory last month", "integrity", s9_last_month),
    Scenario("S10", "Does the constitution survive 6 months?", "integrity", s10_six_months),
    Scenario("S11", "Chunked whole-corpus review hides cross-chunk duplicates", "scale",
             s11_chunked_review),
)}


def resolve_scenarios(scenarios: Any) -> list[Scenario]:
    if scenarios is None:
        return list(SCENARIOS.values())
    if isinstance(scenarios, (str, int)):
        scenarios = [scenarios]
    out = []
    for s in scenarios:
        code = f"S{s}" if isinstance(s, int) else str(s).upper()
        if code not in SCENARIOS:
            raise SimulationError(f"unknown scenario {s!r}; choose from {list(SCENARIOS)}")
        out.append(SCENARIOS[code])
    return out
