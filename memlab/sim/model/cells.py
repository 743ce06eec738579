"""The modelled cells: each scenario's modelled function run under each iteration, graded by
the scenario's rule, and read from or put in the result cache (:mod:`memlab.sim.cache`,
:func:`~memlab.sim.cache.model_cell_key`). The run engine (:func:`memlab.sim.run.simulate`)
sets them beside the measured cells of :mod:`memlab.sim.real`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from memlab.progress import bar
from memlab.sim.cache import ResultCache, instance_digest, model_cell_key, now_utc
from memlab.sim.model.iterations import Iteration
from memlab.sim.model.scenarios import Context
from memlab.sim.registry import ScenarioView
from memlab.sim.rules import RULES
from memlab.sim.scenarios import Scenario, ScenarioResult

__all__ = ["MODELLED_LLM", "SCENARIO_FLAGS", "assumptions", "run_cells"]

#: What a modelled cell has for an LLM.
MODELLED_LLM = (
    "none: the world model counts the LLM calls an iteration's design makes "
    "(memlab/sim/model/world.py) and makes none; whatever an LLM would decide is the "
    "design flag's assumption"
)

#: The design flags and constants each scenario's world model reads: a modelled cell's
#: assumptions (each record's ``flags``, memlab.sim.registry).
SCENARIO_FLAGS: Mapping[str, tuple[str, ...]] = ScenarioView(lambda record: record.flags)


def assumptions(it: Iteration, res: ScenarioResult) -> tuple[str, ...]:
    """A modelled cell's assumptions: the doc's estimate, the design flags its scenario reads
    (with this iteration's values) and what the cell itself says it modelled."""
    flags = tuple(
        f"{name}={getattr(it, name)!r}"
        for name in SCENARIO_FLAGS.get(res.scenario, ())
        if hasattr(it, name)
    )
    return ("doc's estimate",) + flags + tuple(res.modelled)


def run_cells(
    ctx: Context,
    scenarios: list[Scenario],
    iterations: list[Iteration],
    results: dict[tuple[str, str], ScenarioResult],
    cache: ResultCache | None = None,
    embedding: str | None = None,
    cached_only: Iterable[str] = (),
) -> pd.DataFrame:
    """Run each scenario under each iteration into ``results``; one timing row per cell.

    ``cache``: a :class:`~memlab.sim.cache.ResultCache` for the modelled cells (None: every
    cell runs), keyed by :func:`~memlab.sim.cache.model_cell_key` (the iteration's every
    field, the scenario, ``ctx.seed``, the instance digest, ``embedding`` and the source
    digest); a hit comes back with ``cached=True``, a computed cell ``cached=False``.
    ``cached_only``: scenario codes read from the cache and never computed (a miss is left
    out of ``results``)."""
    cached_only = set(cached_only)
    keys: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    if cache is not None:
        digest = instance_digest(ctx.instance)
        for scenario in scenarios:
            for it in iterations:
                keys[(it.name, scenario.code)] = model_cell_key(
                    iteration=it,
                    scenario=scenario.code,
                    seed=ctx.seed,
                    instance=digest,
                    embedding=str(embedding),
                )
    rows = []
    with bar(total=len(scenarios) * len(iterations), desc="simulating", unit="cell") as cells:
        for scenario in scenarios:
            for it in iterations:
                cells.set_postfix_str(f"{scenario.code} x {it.name}")
                t0 = time.perf_counter()
                key = keys.get((it.name, scenario.code))
                res = None if key is None or cache is None else cache.get(key[0])
                if res is None and scenario.code in cached_only:
                    cells.update(1)
                    continue
                if res is None:
                    res = scenario.run(ctx, it)
                    res.basis = "modelled"
                    res.rule = RULES[scenario.code]
                    res.llm = MODELLED_LLM
                    res.assumptions = assumptions(it, res)
                    if key is not None and cache is not None:
                        res.cached, res.measured_at = False, now_utc()
                        cache.put(*key, res)
                results[(it.name, scenario.code)] = res
                rows.append(
                    {
                        "scenario": scenario.code,
                        "iteration": it.name,
                        "seconds": time.perf_counter() - t0,
                    }
                )
                cells.update(1)
    return pd.DataFrame(rows, columns=["scenario", "iteration", "seconds"])
