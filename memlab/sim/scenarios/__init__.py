"""Scenarios S1-S11 as experiments: each runs the iteration and returns an outcome and evidence.

Every scenario is a function ``(ctx, iteration) -> ScenarioResult``. The outcome (``pass`` /
``partial`` / ``fail`` / ``n/a``) is decided by a rule written in the scenario from the numbers
it measured, and ``metrics`` + ``events`` are the evidence for it. Where something cannot be run
here (an LLM call, a hosted provider), the result says so in ``modelled``.

The scenarios live in rooms by kind: :mod:`._base` (what they share), :mod:`.control`
(S1-S6), :mod:`.scale` (S7, S11), :mod:`.concurrency` (S8) and :mod:`.months` (S9, S10). A
new scenario is one function and one :func:`~memlab.sim.registry.register_scenario` call, which
puts its record in :data:`SCENARIOS` (docs/DESIGN.md, "How to add a scenario").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memlab.errors import SimulationError
from memlab.sim.registry import ScenarioView
from memlab.sim.scenarios._base import OUTCOMES, Context, Scenario, ScenarioResult

__all__ = ["Scenario", "ScenarioResult", "SCENARIOS", "Context", "resolve_scenarios", "OUTCOMES"]

#: code -> :class:`Scenario` record, read from the register (:mod:`memlab.sim.registry`) at
#: each lookup: S1-S11 (:mod:`memlab.sim.catalog`) and any scenario registered since.
SCENARIOS: Mapping[str, Scenario] = ScenarioView(lambda record: record)


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
