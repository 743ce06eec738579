"""Scenarios S1-S11 as experiments: each runs the iteration and returns an outcome and evidence.

Every scenario is a function ``(ctx, iteration) -> ScenarioResult``. The outcome (``pass`` /
``partial`` / ``fail`` / ``n/a``) is decided by a rule written in the scenario from the numbers
it measured, and ``metrics`` + ``events`` are the evidence for it. Where something cannot be run
here (an LLM call, a hosted provider), the result says so in ``modelled``.

The scenarios live in rooms by kind: :mod:`._base` (what they share), :mod:`.control`
(S1-S6), :mod:`.scale` (S7, S11), :mod:`.concurrency` (S8) and :mod:`.months` (S9, S10). A
new scenario is one function and one line in :data:`SCENARIOS`.
"""

from __future__ import annotations

from typing import Any

from memlab.errors import SimulationError
from memlab.sim.scenarios._base import OUTCOMES, Context, Scenario, ScenarioResult
from memlab.sim.scenarios.concurrency import s8_concurrent
from memlab.sim.scenarios.control import (
    s1_reword,
    s2_delete,
    s3_pinned,
    s4_cost,
    s5_fresh_install,
    s6_missing_key,
)
from memlab.sim.scenarios.months import s9_last_month, s10_six_months
from memlab.sim.scenarios.scale import s7_scale, s11_chunked_review


__all__ = ["Scenario", "ScenarioResult", "SCENARIOS", "Context", "resolve_scenarios",
           "OUTCOMES"]

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
