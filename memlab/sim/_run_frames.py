"""A simulation run's data and the frames read from it: outcome, basis, evidence, events,
fitness, journey, findings, claims and the model check, one cell's result.

Part of :mod:`memlab.sim.run`, whose ``SimulationRun`` is a :class:`RunFrames`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from memlab.sim.claims import claims_table, model_vs_release
from memlab.sim.fitness import findings_table, fitness_table, journey_table
from memlab.sim.instance import Instance
from memlab.sim.model.iterations import Iteration
from memlab.sim.model.scenarios import Context
from memlab.sim.real.runner import release_row
from memlab.sim.scenarios import Scenario, ScenarioResult

__all__ = ["RunFrames"]


@dataclass
class RunFrames:
    """A run's Iteration x Scenario results with what it ran on, and the frames built from them
    (each computed once)."""

    iterations: list[Iteration]
    scenarios: list[Scenario]
    instance: Instance
    seed: int
    results: dict[tuple[str, str], ScenarioResult]
    timings: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)
    #: The run's context (vectors, memoised fixtures), reused by ``extend`` and ``rerun``.
    context: Context | None = field(default=None, repr=False)
    #: The shipped releases run for real (their rows follow the modelled iterations).
    releases: list[str] = field(default_factory=list)
    #: Measured source size per release (``memlab.sim.real.count_source_lines``).
    simplicity: dict[str, dict[str, int]] = field(default_factory=dict)
    #: What each release has, read from its installed source
    #: (``memlab.sim.real.release_facts.release_facts``); claims are judged on it.
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Each cell's verdict at every seed it was decided at (``stability_seeds``):
    #: ``{(row, code): {"seeds": {seed: outcome}, "moved": bool | None, "note": str}}``;
    #: ``moved`` is None where the cell has one seed (``note`` says why).
    stability: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @property
    def rows(self) -> list[str]:
        """Table rows: the modelled iterations, then the real releases."""
        return [it.name for it in self.iterations] + [release_row(r) for r in self.releases]

    # ---- frames ---------------------------------------------------------------------------------
    @cached_property
    def table(self) -> pd.DataFrame:
        """Outcome per row (modelled iterations, then real releases) and scenario (columns);
        ``basis`` says which cells were measured."""
        data = {s.code: [self._outcome(r, s.code) for r in self.rows] for s in self.scenarios}
        # object dtype: a cell not run stays None (pandas 3 would read a column of words and
        # None as its string dtype, None becoming NaN)
        return pd.DataFrame(data, index=pd.Index(self.rows, name="iteration"), dtype=object)

    def stability_mark(self, row: str, code: str) -> str:
        """``*`` when the cell's verdict moves across the run's seeds, ``?`` when it was
        decided at one seed of several asked, else ``""``."""
        if len(self.meta.get("stability_seeds") or ()) < 2:
            return ""
        st = self.stability.get((row, code))
        if st is None:
            return ""
        return "*" if st["moved"] else "?" if st["moved"] is None else ""

    def _outcome(self, row: str, code: str) -> str | None:
        res = self.results.get((row, code))
        return None if res is None else res.outcome

    @cached_property
    def basis(self) -> pd.DataFrame:
        """``measured`` or ``modelled`` per cell, same shape as ``table``."""
        data = {
            s.code: [getattr(self.results.get((r, s.code)), "basis", None) for r in self.rows]
            for s in self.scenarios
        }
        return pd.DataFrame(data, index=pd.Index(self.rows, name="iteration"), dtype=object)

    @cached_property
    def model_check(self) -> pd.DataFrame:
        """Each modelled iteration next to the shipped release it stands for (0.19.2 for
        Iteration 1; 0.20.0 for Iterations 2 and 3), scenario by scenario."""
        return model_vs_release(self.table, self.iterations, self.releases)

    @cached_property
    def claims(self) -> pd.DataFrame:
        """The doc's claims about its baseline and redesign next to what the shipped releases
        did in this run, with the evidence (``memlab.sim.claims``)."""
        return claims_table(
            self.results,
            self.releases,
            self.simplicity,
            self.facts,
            self.meta.get("claims_run") or {},
        )

    @cached_property
    def evidence(self) -> pd.DataFrame:
        """One row per (iteration, scenario, metric): the numbers behind each cell."""
        rows = []
        for (it, code), res in self.results.items():
            base = {"iteration": it, "scenario": code, "outcome": res.outcome, "basis": res.basis}
            # a summary that cites a scheduler-dependent number is listed in ``unstable``
            summary_moves = "summary" in res.unstable
            rows.append(
                {**base, "metric": "summary", "value": res.summary, "unstable": summary_moves}
            )
            if res.rule:
                rows.append({**base, "metric": "rule", "value": res.rule, "unstable": False})
            if res.llm:
                rows.append({**base, "metric": "llm", "value": res.llm, "unstable": False})
            if res.cached is not None:
                rows.append({**base, "metric": "cached", "value": res.cached, "unstable": True})
                rows.append(
                    {**base, "metric": "measured_at", "value": res.measured_at, "unstable": True}
                )
            for note in res.assumptions:
                rows.append({**base, "metric": "assumption", "value": note, "unstable": False})
            for name, value in res.metrics.items():
                rows.append(
                    {**base, "metric": name, "value": value, "unstable": name in res.unstable}
                )
            for note in res.modelled:
                rows.append({**base, "metric": "modelled", "value": note, "unstable": False})
            if res.impossible:
                rows.append({**base, "metric": "impossible", "value": True, "unstable": False})
        frame = pd.DataFrame(
            rows,
            columns=["iteration", "scenario", "outcome", "basis", "metric", "value", "unstable"],
        )
        frame["value_num"] = pd.to_numeric(
            frame["value"].map(
                lambda v: (
                    v
                    if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                    else np.nan
                )
            ),
            errors="coerce",
        )
        frame["value"] = frame["value"].map(str).astype("string")
        for col in ("iteration", "scenario", "outcome", "basis"):
            frame[col] = frame[col].astype("category")
        frame["unstable"] = frame["unstable"].astype("boolean")
        return frame

    def stable_evidence(self) -> pd.DataFrame:
        """Evidence without machine-dependent numbers (timings, retry counts): identical for
        the same seed, instance and embeddings."""
        ev = self.evidence
        return ev[~ev["unstable"].astype(bool)].reset_index(drop=True)

    @cached_property
    def events(self) -> pd.DataFrame:
        """The events that produced each cell's evidence."""
        rows = []
        for (it, code), res in self.results.items():
            for k, event in enumerate(res.events):
                rows.append({"iteration": it, "scenario": code, "n": k, **event})
        cols = [
            "iteration",
            "scenario",
            "n",
            "seq",
            "day",
            "hours",
            "op",
            "block",
            "other",
            "cosine",
            "recorded",
            "cause_recorded",
            "detail",
        ]
        frame = pd.DataFrame(rows)
        for col in cols:
            if col not in frame:
                frame[col] = None
        frame = frame[cols]
        for col in ("iteration", "scenario", "op"):
            frame[col] = frame[col].astype("category")
        for col in ("block", "other", "detail"):
            frame[col] = frame[col].astype("string")
        for col in ("recorded", "cause_recorded"):
            frame[col] = frame[col].astype("boolean")
        for col in ("n", "seq"):
            frame[col] = frame[col].astype("Int64")
        return frame

    @cached_property
    def fitness(self) -> pd.DataFrame:
        return fitness_table(self.iterations, self.table)

    @cached_property
    def journey(self) -> pd.DataFrame:
        return journey_table(self.iterations, self.table, self.fitness)

    @cached_property
    def findings(self) -> pd.DataFrame:
        """Where the executed run disagrees with the doc (and notes on the instance)."""
        return findings_table(
            self.iterations, self.table, self.fitness, self.journey, self.results, self._notes()
        )

    def _notes(self) -> list[dict[str, Any]]:
        notes = []
        for it in self.iterations:
            res = self.results.get((it.name, "S10"))
            if res is None or not it.decay_active:
                continue
            decays = res.metrics.get("decay_archivals", 0)
            hours = res.metrics.get("active_hours")
            if decays:
                notes.append(
                    {
                        "iteration": it.name,
                        "where": "S10 decay",
                        "doc": "inert",
                        "run": f"{decays} archivals",
                        "why": f"{hours} active hours in 182 days on "
                        f"{self.instance.name}: curate ran "
                        f"{res.metrics.get('curate_runs')} times; the doc's "
                        "'decay is inert' holds only for short sessions (§10)",
                    }
                )
            break
        return notes

    def cell(self, iteration: str | int | Iteration, scenario: str) -> ScenarioResult:
        """The full result behind one cell (outcome, summary, metrics, events)."""
        name = self._name(iteration)
        return self.results[(name, scenario.upper())]

    def _name(self, iteration: str | int | Iteration) -> str:
        if isinstance(iteration, Iteration):
            return iteration.name
        if isinstance(iteration, int):
            for it in self.iterations:
                if it.number == iteration:
                    return it.name
            raise KeyError(f"no iteration number {iteration} in this run")
        return iteration
