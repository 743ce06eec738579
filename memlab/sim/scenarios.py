"""What the modelled and the measured cells share about a scenario: the result type
(:class:`ScenarioResult`, its :data:`OUTCOMES`), the register's view of the scenarios
(:data:`SCENARIOS`, :func:`resolve_scenarios`) and the S8 schedule both sides run.

The modelled scenario functions are in :mod:`memlab.sim.model.scenarios`, the operator scripts
in :mod:`memlab.sim.real.scripts`; both return a :class:`ScenarioResult` from here, so neither
room imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memlab.errors import SimulationError
from memlab.sim.registry import Scenario, ScenarioView

__all__ = [
    "Scenario",
    "ScenarioResult",
    "SCENARIOS",
    "resolve_scenarios",
    "OUTCOMES",
    "S8_THINK_S",
    "S8_SCHEDULES",
]

OUTCOMES = ("pass", "partial", "fail", "n/a")
#: How long a writer "thinks" between reading the shared block and writing it back (an agent's
#: LLM step is longer); the same for the modelled writers and the real releases' drivers.
S8_THINK_S = 0.02
#: The schedules every S8 cell runs, in order (memlab/sim/model/_writers.py,
#: memlab/sim/real/_scale.py).
S8_SCHEDULES = ("serial", "interleaved", "free")


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
    #: Metrics that depend on the machine or the scheduler (timings, retry counts), and
    #: "summary" when the summary cites one of them (its evidence row is then unstable too).
    unstable: tuple[str, ...] = ()
    #: True when the failure mode cannot occur at all under this iteration.
    impossible: bool = False
    #: "measured" (a shipped release ran the operator script) or "modelled" (the world model
    #: executed an iteration's design choices: the doc's estimate).
    basis: str = "modelled"
    #: The rule the outcome follows, in words, with its thresholds: one per scenario, the same
    #: for modelled and measured cells (the scenario's record, memlab.sim.registry).
    rule: str = ""
    #: What a modelled cell rests on: the iteration's design flags and constants it read.
    assumptions: tuple[str, ...] = ()
    #: What stood in for the LLM, and what that stand-in cannot do (every cell).
    llm: str | None = None
    #: True when the result came from the result cache (memlab.sim.cache), False when it was
    #: run or computed now; None when no cache was used.
    cached: bool | None = None
    #: When the release ran this cell, or the world model computed it (UTC, ISO 8601); None
    #: when no cache was used for a modelled cell.
    measured_at: str | None = None

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"{self.scenario}: outcome {self.outcome!r} not in {OUTCOMES}")


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
