"""Stability across seeds: each cell's verdict at the seeds after the run's own, computed (the
modelled cells) or read from the result cache (the measured ones, and the scale scenarios).

Part of :mod:`memlab.sim.run`, whose ``simulate`` calls :func:`seed_stability`.
"""

from __future__ import annotations

from typing import Any

from memlab.sim.cache import ResultCache
from memlab.sim.instance import Instance
from memlab.sim.model.cells import run_cells
from memlab.sim.model.iterations import Iteration
from memlab.sim.model.scenarios import Context
from memlab.sim.model.world import VectorBook
from memlab.sim.real.runner import RealParams, run_real
from memlab.sim.scenarios import Scenario, ScenarioResult

__all__ = ["SCALE_SCENARIOS", "seed_stability"]


#: The modelled scenarios whose cells grow the corpus to the doc's scale (14,000 notes at
#: growth 100, embedded anew for each seed: measured >10 min for two extra seeds at load 9):
#: at a stability seed other than the run's own they are read from the cache, never computed.
SCALE_SCENARIOS = ("S7", "S11")


def seed_stability(
    inst: Instance,
    seed: int,
    n: int,
    scs: list[Scenario],
    its: list[Iteration],
    rels: list[str],
    params: RealParams,
    results: dict[tuple[str, str], Any],
    book: VectorBook,
    model_cache: Any,
    embedding: str | None,
    real_cache: Any,
    db: Any,
) -> dict[tuple[str, str], dict[str, Any]]:
    """Each cell's outcome at seeds ``seed .. seed+n-1`` (see :func:`simulate`)."""
    seeds = [seed + k for k in range(max(1, n))]
    found: dict[tuple[str, str], dict[int, str]] = {
        key: {seed: res.outcome} for key, res in results.items()
    }
    if n <= 1:
        return {
            key: {
                "seeds": out,
                "moved": None,
                "note": "one seed (stability not asked: stability_seeds=1)",
            }
            for key, out in found.items()
        }
    for other in seeds[1:]:
        more: dict[tuple[str, str], ScenarioResult] = {}
        if its:
            run_cells(
                Context(inst, other, book=book, store=db),
                scs,
                its,
                more,
                model_cache,
                embedding,
                cached_only=SCALE_SCENARIOS,
            )
        if rels and real_cache is not None:
            lookup = ResultCache(real_cache.folder)  # a hit at another seed holds under --fresh
            more.update(
                run_real(
                    rels,
                    [s.code for s in scs],
                    instance=inst,
                    seed=other,
                    params=params,
                    cache=lookup,
                    cached_only=True,
                )
            )
        for key, res in more.items():
            if key in found:
                found[key][other] = res.outcome
    out = {}
    missing = ", ".join(str(s) for s in seeds[1:])
    for key, outcomes in found.items():
        measured = results[key].basis == "measured"
        if len(outcomes) > 1:
            moved = len(set(outcomes.values())) > 1
            note = (
                f"moves across seeds {', '.join(map(str, outcomes))}"
                if moved
                else f"holds at seeds {', '.join(map(str, outcomes))}"
            )
            if len(outcomes) < len(seeds):
                note += " (its other seeds are not in the result cache)"
        elif measured:
            moved = None
            note = (
                f"seed {seed} only: seeds {missing} of this measured cell are not in the "
                "result cache, and a cold real cell costs minutes (memlab simulate "
                f"--sweep seeds={','.join(map(str, seeds))} measures them)"
            )
        else:
            moved = None
            note = (
                f"seed {seed} only: {key[1]} grows its corpus to the doc's scale, about "
                "14,000 new embeddings per seed (minutes on a CPU), so its other seeds "
                "are read from the result cache only and were not there (memlab simulate "
                f"--sweep seeds={','.join(map(str, seeds))} computes them)"
            )
        out[key] = {"seeds": outcomes, "moved": moved, "note": note}
    return out
