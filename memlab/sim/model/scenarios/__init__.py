"""Scenarios S1-S11 as modelled experiments: each runs the iteration, returns outcome and evidence.

Every scenario is a function ``(ctx, iteration) -> ScenarioResult``. The outcome (``pass`` /
``partial`` / ``fail`` / ``n/a``) is decided by a rule written in the scenario from the numbers
it measured, and ``metrics`` + ``events`` are the evidence for it. Where something cannot be run
here (an LLM call, a hosted provider), the result says so in ``modelled``. The result type and
the register's view (:data:`~memlab.sim.scenarios.SCENARIOS`) are shared with the real rows, in
:mod:`memlab.sim.scenarios`.

The scenarios live in rooms by kind: :mod:`._base` (what they share), :mod:`.control`
(S1-S6), :mod:`.scale` (S7, S11), :mod:`.concurrency` (S8) and :mod:`.months` (S9, S10). A
new scenario is one function and one :func:`~memlab.sim.registry.register_scenario` call, which
puts its record in :data:`memlab.sim.scenarios.SCENARIOS` (docs/DESIGN.md, "How to add a scenario").
"""

from __future__ import annotations

from memlab.sim.model.scenarios._base import Context

__all__ = ["Context"]
