"""``simulate()``: run iterations x scenarios on an instance and keep every piece of evidence."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from memlab.sim.fitness import fitness_table, findings_table, journey_table
from memlab.sim.instance import Instance, load_instance
from memlab.sim.iterations import Iteration, resolve_iterations
from memlab.sim.scenarios import Context, Scenario, ScenarioResult, resolve_scenarios
from memlab.sim.world import VectorBook

__all__ = ["simulate", "SimulationRun"]

_WORD = {"pass": "pass", "partial": "PART", "fail": "FAIL", "n/a": "n/a",
         "green": "green", "amber": "amber", "red": "RED", None: "-"}


@dataclass
class SimulationRun:
    """Iteration x Scenario outcomes with their evidence, fitness, journey and findings."""

    iterations: list[Iteration]
    scenarios: list[Scenario]
    instance: Instance
    seed: int
    results: dict[tuple[str, str], ScenarioResult]
    timings: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)
    #: The run's context (vectors, memoised fixtures), reused by ``extend`` and ``rerun``.
    context: Context | None = field(default=None, repr=False)

    # ---- frames ---------------------------------------------------------------------------------
    @cached_property
    def table(self) -> pd.DataFrame:
        """Outcome per iteration (rows) and scenario (columns)."""
        data = {s.code: [self.results[(it.name, s.code)].outcome for it in self.iterations]
                for s in self.scenarios}
        frame = pd.DataFrame(data, index=pd.Index([it.name for it in self.iterations],
                                                  name="iteration"))
        return frame

    @cached_property
    def evidence(self) -> pd.DataFrame:
        """One row per (iteration, scenario, metric): the numbers behind each cell."""
        rows = []
        for (it, code), res in self.results.items():
            base = {"iteration": it, "scenario": code, "outcome": res.outcome}
            rows.append({**base, "metric": "summary", "value": res.summary, "unstable": False})
            for name, value in res.metrics.items():
                rows.append({**base, "metric": name, "value": value,
                             "unstable": name in res.unstable})
            for note in res.modelled:
                rows.append({**base, "metric": "modelled", "value": note, "unstable": False})
            if res.impossible:
                rows.append({**base, "metric": "impossible", "value": True, "unstable": False})
        frame = pd.DataFrame(rows, columns=["iteration", "scenario", "outcome", "metric", "value",
                                            "unstable"])
        frame["value_num"] = pd.to_numeric(
            frame["value"].map(lambda v: v if isinstance(v, (int, float, np.number))
                               and not isinstance(v, bool) else np.nan), errors="coerce")
        frame["value"] = frame["value"].map(str).astype("string")
        for col in ("iteration", "scenario", "outcome"):
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
        cols = ["iteration", "scenario", "n", "seq", "day", "hours", "op", "block", "other",
                "cosine", "recorded", "cause_recorded", "detail"]
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
        return findings_table(self.iterations, self.table, self.fitness, self.journey,
                              self.results, self._notes())

    def _notes(self) -> list[dict[str, Any]]:
        notes = []
        for it in self.iterations:
            res = self.results.get((it.name, "S10"))
            if res is None or not it.decay_active:
                continue
            decays = res.metrics.get("decay_archivals", 0)
            hours = res.metrics.get("active_hours")
            if decays:
                notes.append({"iteration": it.name, "where": "S10 decay", "doc": "inert",
                              "run": f"{decays} archivals",
                              "why": f"{hours} active hours in 182 days on "
                                     f"{self.instance.name}: curate ran "
                                     f"{res.metrics.get('curate_runs')} times; the doc's "
                                     "'decay is inert' holds only for short sessions (§10)"})
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

    # ---- more runs on the same context ----------------------------------------------------------
    def _context(self) -> Context:
        if self.context is None:
            self.context = Context(self.instance, self.seed)
        return self.context

    def rerun(self, iteration: Iteration, scenario: str) -> ScenarioResult:
        """Run one scenario for an iteration (new or changed) on this run's instance, seed and
        vectors; fast, since every embedding and fixture is already in memory."""
        return resolve_scenarios([scenario])[0].run(self._context(), iteration)

    def extend(self, *iterations: Iteration) -> "SimulationRun":
        """A run with more iterations (e.g. a user's Iteration 7), all scenarios, same context."""
        names = {it.name for it in self.iterations}
        clash = [it.name for it in iterations if it.name in names]
        if clash:
            raise ValueError(f"iterations already in the run: {clash}; give them new names")
        results = dict(self.results)
        timings = _execute(self._context(), self.scenarios, list(iterations), results)
        return SimulationRun([*self.iterations, *iterations], self.scenarios, self.instance,
                             self.seed, results,
                             pd.concat([self.timings, timings], ignore_index=True),
                             dict(self.meta), self.context)

    def metrics(self) -> dict[str, Any]:
        """Flat, JSON-safe numbers for a report's metrics.json."""
        out: dict[str, Any] = {"instance": self.instance.name, "seed": self.seed,
                               "seconds": round(float(self.meta.get("seconds", 0.0)), 2),
                               "findings": int(len(self.findings))}
        kept = self.journey[self.journey["verdict"] == "incumbent"]
        out["incumbent"] = kept.index[0] if len(kept) else None
        for it in self.iterations:
            row = self.table.loc[it.name]
            key = f"iteration_{it.number}" if it.number else it.name
            for outcome in ("pass", "partial", "fail"):
                out[f"{key}_{outcome}"] = int((row == outcome).sum())
        return out

    # ---- text -----------------------------------------------------------------------------------
    def render(self, *, width: int = 110) -> str:
        """The Iteration x Scenario table with evidence, fitness, journey and findings."""
        inst = self.instance.summary()
        out = [f"memlab simulate  seed={self.seed}",
               "instance: " + ", ".join(f"{k}={v}" for k, v in inst.items()), ""]
        table = self.table.copy().map(lambda o: _WORD[o])
        out += ["Iteration x Scenario", table.to_string(), ""]
        out.append("Evidence")
        for scenario in self.scenarios:
            out.append(f"  {scenario.code}  {scenario.title} ({scenario.nature})")
            for it in self.iterations:
                res = self.results[(it.name, scenario.code)]
                line = f"    {it.name[:26]:<26} {_WORD[res.outcome]:<5} {res.summary}"
                out.append(line if len(line) <= width * 2 else line[:width * 2 - 1] + "…")
        out.append("")
        fit = self.fitness.copy()
        for col in ("Control", "Integrity", "Cost", "Simplicity", "Scale"):
            fit[col] = fit[col].map(lambda v: _WORD[v])
        out += ["Fitness (rule: memlab/sim/fitness.py)", fit.to_string(), ""]
        journey = self.journey[["change", "S1-S10", "fixed", "improved", "regressed", "verdict"]]
        out += ["Journey", journey.to_string(), ""]
        out.append("Findings: where the run disagrees with the doc")
        if self.findings.empty:
            out.append("  none")
        for row in self.findings.itertuples(index=False):
            out.append(f"  {row.iteration} / {row.where}: doc {row.doc}, run {row.run} -- {row.why}")
        stats = self.meta.get("embedder")
        out += ["", f"run took {self.meta.get('seconds', 0):.1f} s; embeddings: {stats}"]
        return "\n".join(out)

    def __repr__(self) -> str:
        return (f"<SimulationRun {len(self.iterations)} iterations x {len(self.scenarios)} "
                f"scenarios on {self.instance.name!r}, seed={self.seed}>")


def simulate(iterations: Any = None, scenarios: Any = None, *, instance: Any = None,
             seed: int = 0) -> SimulationRun:
    """Run each scenario under each iteration on an instance.

    ``iterations``: None (the doc's six), numbers 1-6, Iteration objects, or a mapping of them.
    ``scenarios``: None (S1-S11), codes ("S3") or numbers. ``instance``: None for the doc's
    figures, an :class:`~memlab.sim.instance.Instance`, an elfmem Store, or a path to an elfmem
    database (loaded with ``memlab.load_elfmem`` and audited). The same seed, instance and
    embedding model give the same table and the same stable evidence.
    """
    its = resolve_iterations(iterations)
    scs = resolve_scenarios(scenarios)
    inst, store = load_instance(instance)
    book = VectorBook()
    before = book.embedder.stats.as_dict()  # the embedder is a process-wide singleton
    ctx = Context(inst, seed, book=book, store=store)
    results: dict[tuple[str, str], ScenarioResult] = {}
    started = time.perf_counter()
    timings = _execute(ctx, scs, its, results)
    seconds = time.perf_counter() - started
    after = book.embedder.stats.as_dict()
    stats = {"hits": after["hits"] - before["hits"], "misses": after["misses"] - before["misses"]}
    meta = {"seconds": seconds, "embedder": stats, "texts": len(book),
            "store": None if store is None else str(getattr(store, "path", ""))}
    return SimulationRun(its, scs, inst, seed, results, timings, meta, ctx)


def _execute(ctx: Context, scenarios: list[Scenario], iterations: list[Iteration],
             results: dict[tuple[str, str], ScenarioResult]) -> pd.DataFrame:
    """Run each scenario under each iteration into ``results``; one timing row per cell."""
    from memlab.progress import bar

    rows = []
    with bar(total=len(scenarios) * len(iterations), desc="simulating", unit="cell") as cells:
        for scenario in scenarios:
            for it in iterations:
                cells.set_postfix_str(f"{scenario.code} x {it.name}")
                t0 = time.perf_counter()
                results[(it.name, scenario.code)] = scenario.run(ctx, it)
                rows.append({"scenario": scenario.code, "iteration": it.name,
                             "seconds": time.perf_counter() - t0})
                cells.update(1)
    return pd.DataFrame(rows, columns=["scenario", "iteration", "seconds"])
