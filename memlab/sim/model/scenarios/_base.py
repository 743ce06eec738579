"""What every modelled scenario shares: the run's context, grading, and the world activity
(sessions of learning, restatements, steady worlds) several scenarios live on. The result type
is :mod:`memlab.sim.scenarios`' (shared with the real rows).
"""

from __future__ import annotations

import math
import zlib
from typing import Any, Callable

import numpy as np

from memlab.constants import EXACT_DUP_THRESHOLD, NEAR_DUP_THRESHOLD
from memlab.sim._texts import CONSTITUTION, NoteMaker, constitution_variants, note_variants
from memlab.sim.instance import Instance
from memlab.sim.model.iterations import Iteration
from memlab.sim.model.world import VectorBook, World
from memlab.sim.registry import Scenario
from memlab.sim.scenarios import OUTCOMES, ScenarioResult

__all__ = [
    "Scenario",
    "ScenarioResult",
    "Context",
    "OUTCOMES",
    "OBSERVED_BAND",
    "CORPUS_SEED",
    "MAX_STEADY_BLOCKS",
    "MAX_SCALE_BLOCKS",
    "world_events",
    "restatement",
    "draw_tier",
    "live_blocks",
    "steady_world",
]

#: The band in which the instance's own supersessions happened (elfmem's defaults): arrivals
#: that the instance recorded as near-duplicates are drawn from texts whose measured cosine to
#: their target falls here. An iteration's own thresholds then decide what happens to them.
OBSERVED_BAND = (NEAR_DUP_THRESHOLD, EXACT_DUP_THRESHOLD)
#: The scale scenarios use a fixed corpus so its 14,000 embeddings are reused across seeds;
#: the run's seed picks queries, probes and planted duplicates.
CORPUS_SEED = 20260804
_NOTE_BATCH = 4
#: Bounds that keep a run to minutes on any instance; evidence says when one applied.
_MAX_STEPS = 4_000
MAX_STEADY_BLOCKS = 5_000
MAX_SCALE_BLOCKS = 50_000


class Context:
    """What scenarios share in one run: the instance, the seed, vectors, and memoised fixtures
    (the scale corpus, writer runs) that do not depend on the iteration."""

    def __init__(
        self, instance: Instance, seed: int, *, book: VectorBook | None = None, store: Any = None
    ) -> None:
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
        return NoteMaker(CORPUS_SEED + self.seed)

    def memoised(self, key: Any, make: Callable[[], Any]) -> Any:
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]

    def world(
        self, iteration: Iteration, scenario: str, rng: np.random.Generator, **kw: Any
    ) -> World:
        return World(iteration, self.instance, self.book, rng, scenario=scenario, **kw)


def world_events(world: World, ops: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    return [e for e in world.events if ops is None or e["op"] in ops]


# ---- shared world activity -----------------------------------------------------------------
def restatement(
    ctx: Context,
    target_text: str,
    target_vec: np.ndarray,
    family: tuple | None,
    rng: np.random.Generator,
) -> tuple[str, float] | None:
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
            len(candidates)
        )
        candidates = [candidates[int(i)] for i in order]
        batch = _NOTE_BATCH
    candidates = [t for t in candidates if t != target_text]
    lo, hi = OBSERVED_BAND
    best: tuple[str, float] | None = None
    for start in range(0, len(candidates), batch):
        part = candidates[start : start + batch]
        sims = ctx.book.matrix(part) @ target_vec
        band = np.flatnonzero((sims >= lo) & (sims < hi))
        if len(band):
            k = int(band[rng.integers(len(band))])
            return part[k], float(sims[k])
        for text, sim in zip(part, sims):
            if sim < hi and (best is None or sim > best[1]):
                best = (text, float(sim))
    return best


def draw_tier(inst: Instance, rng: np.random.Generator) -> str:
    names, p = inst.tier_probabilities(learned=True)
    return names[int(rng.choice(len(names), p=p))]


def live_blocks(
    ctx: Context,
    world: World,
    days: float,
    rng: np.random.Generator,
    maker: NoteMaker,
    taken: set,
    *,
    operator: dict[float, Callable[[World], None]] | None = None,
    start_day: float = 0.0,
) -> dict[str, Any]:
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
    stats = {
        "sessions": 0,
        "learned": 0,
        "near_dup_arrivals": 0,
        "principle_restatements": 0,
        "reviews": 0,
    }
    next_review = start_day + 7.0
    for _ in range(n_sessions):
        world.advance(sum(session_hours() for _ in range(group)), step)
        stats["sessions"] += group
        while pending and pending[0][0] <= world.day:
            pending.pop(0)[1](world)
        for _ in range(int(arrivals.poisson(per_session))):
            stats["learned"] += 1
            restate = arrivals.random() < inst.near_dup_rate
            tier = draw_tier(inst, arrivals)
            if restate:
                targets: list[tuple[str, np.ndarray, tuple | None]] = [
                    (b.text, b.vec, b.family) for b in world.active()
                ]
                targets += [(t, ctx.book.vec(t), ("role", r)) for r, t in world.self_md.items()]
                if targets:
                    text, vec, family = targets[int(rng.integers(len(targets)))]
                    found = restatement(ctx, text, vec, family, rng)
                    if found is not None:
                        stats["near_dup_arrivals"] += 1
                        if family and family[0] == "role":
                            stats["principle_restatements"] += 1
                        world.learn(found[0], family=family, tier=tier)
                        continue
            note = maker.fresh(1, taken)[0]
            world.learn(note.text, family=("note", note.key), tier=tier)
        if len(world.active(include_inbox=True)) - len(world.active()) >= 10 or (
            world.it.files_authoritative and stats["learned"] % 10 == 0
        ):
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


def steady_world(
    ctx: Context,
    it: Iteration,
    scenario: str,
    rng: np.random.Generator,
    maker: NoteMaker,
    taken: set,
    **kw: Any,
) -> World:
    """A world at the instance's size: constitution plus curated notes, counters at zero."""
    world = ctx.world(it, scenario, rng, **kw)
    world.init(constitution=True)
    n = max(0, min(ctx.instance.active_blocks, MAX_STEADY_BLOCKS) - len(world.active()))
    notes = maker.fresh(n, taken)
    world.add_corpus(
        [x.text for x in notes],
        [("note", x.key) for x in notes],
        [draw_tier(ctx.instance, rng) for _ in notes],
    )
    world.calls.clear()
    world.tokens_in.clear()
    world.tokens_out.clear()
    world.events.clear()
    return world
