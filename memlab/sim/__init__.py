"""Scenario simulation: the doc's Iterations x Scenarios argument as executed experiments.

    >>> from memlab.sim import simulate, ITERATIONS
    >>> run = simulate(instance="data/demo/elfmem-demo.db", seed=0)
    >>> run.table            # Iteration x Scenario outcomes
    >>> run.cell(1, "S3")    # one cell's summary, metrics and events
    >>> seven = ITERATIONS[5].with_(name="7: cluster-first review", review_cluster_first=True)
    >>> simulate([ITERATIONS[5], seven], ["S11"]).table

Two rooms and what they share. :mod:`memlab.sim.model`, the modelled world: ``iterations``
(choices as data), ``world`` (the store that executes an iteration), ``scenarios`` (S1-S11 as
modelled experiments), ``cells`` (the modelled cells and their cache), ``replay``
(counterfactual replay of a real store). :mod:`memlab.sim.real`, the shipped releases:
``releases`` (venvs and driver), ``runner`` (the real rows), ``scripts`` (the operator
scripts), ``release_facts`` (what a release has, for the claims), ``replay_release``. Here,
what both use: ``scenarios`` (the result type and the register's view), ``registry`` (one
record per scenario: ``register_scenario``), ``catalog`` (S1-S11's records), ``rules`` (one
rule per scenario, modelled and measured alike), ``claims``, ``instance`` (rates from a
store), ``cache`` (the result cache), ``fitness`` (dimensions, journey, the doc's own table),
``run`` (``simulate``), ``sweep`` (which verdicts move), ``views`` (notebook views).
"""

from __future__ import annotations

from memlab.sim import catalog  # noqa: F401  (registers S1-S11)
from memlab.sim.instance import DOC_INSTANCE, Instance, instance_from_store, load_instance
from memlab.sim.model.iterations import ITERATIONS, Iteration
from memlab.sim.model.replay import replay
from memlab.sim.run import SimulationRun, simulate
from memlab.sim.scenarios import SCENARIOS, ScenarioResult
from memlab.sim.sweep import sweep

__all__ = [
    "simulate",
    "SimulationRun",
    "Iteration",
    "ITERATIONS",
    "SCENARIOS",
    "ScenarioResult",
    "Instance",
    "DOC_INSTANCE",
    "instance_from_store",
    "load_instance",
    "replay",
    "sweep",
]
