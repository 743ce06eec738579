"""``simulate()``: run iterations x scenarios on an instance and keep every piece of evidence."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from memlab.errors import SimulationError
from memlab.sim.cache import ResultCache, instance_digest, open_cache
from memlab.sim.claims import claims_table, model_vs_release
from memlab.sim.fitness import findings_table, fitness_table, journey_table
from memlab.sim.instance import Instance, load_instance
from memlab.sim.model.cells import MODELLED_LLM, run_cells
from memlab.sim.model.iterations import Iteration, resolve_iterations
from memlab.sim.model.scenarios import Context
from memlab.sim.model.world import VectorBook
from memlab.sim.real.releases import all_settings, check_setting
from memlab.sim.real.runner import RealParams, release_row, run_real, simplicity
from memlab.sim.scenarios import Scenario, ScenarioResult, resolve_scenarios

__all__ = ["simulate", "SimulationRun", "MODELLED_LLM"]

_WORD = {
    "pass": "pass",
    "partial": "PART",
    "fail": "FAIL",
    "n/a": "n/a",
    "green": "green",
    "amber": "amber",
    "red": "RED",
    None: "-",
}


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
            rows.append({**base, "metric": "summary", "value": res.summary, "unstable": False})
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
            raise SimulationError(f"iterations already in the run: {clash}; give them new names")
        results = dict(self.results)
        timings = run_cells(self._context(), self.scenarios, list(iterations), results)
        return SimulationRun(
            [*self.iterations, *iterations],
            self.scenarios,
            self.instance,
            self.seed,
            results,
            pd.concat([self.timings, timings], ignore_index=True),
            dict(self.meta),
            self.context,
            list(self.releases),
            dict(self.simplicity),
            dict(self.facts),
            dict(self.stability),
        )

    def metrics(self) -> dict[str, Any]:
        """Flat, JSON-safe numbers for a report's metrics.json."""
        out: dict[str, Any] = {
            "instance": self.instance.name,
            "seed": self.seed,
            "seconds": round(float(self.meta.get("seconds", 0.0)), 2),
            "findings": int(len(self.findings)),
        }
        kept = self.journey[self.journey["verdict"] == "incumbent"]
        out["incumbent"] = kept.index[0] if len(kept) else None
        for it in self.iterations:
            row = self.table.loc[it.name]
            key = f"iteration_{it.number}" if it.number else it.name
            for outcome in ("pass", "partial", "fail"):
                out[f"{key}_{outcome}"] = int((row == outcome).sum())
        for rel in self.releases:
            row = self.table.loc[release_row(rel)]
            key = "release_" + rel.replace(".", "_").replace("+", "_")
            for outcome in ("pass", "partial", "fail"):
                out[f"{key}_{outcome}"] = int((row == outcome).sum())
        return out

    # ---- JSON -----------------------------------------------------------------------------------
    def as_dict(self) -> dict[str, Any]:
        """The whole run as one JSON-safe object (what ``memlab simulate --json`` prints):
        ``evidence`` (one row per cell and metric), ``cells`` (iteration, scenario, outcome,
        basis, rule, llm, cached, measured_at), ``claims`` (claim, release, scenario, verdict,
        testable, why, evidence), ``fitness``, ``journey`` (modelled iterations), and ``run``
        (releases, scale, seed, instance digest, cache hits and misses, parameters)."""
        from memlab.formats import _json

        def records(frame: pd.DataFrame, index: str | None = None) -> list[dict[str, Any]]:
            if frame is None or frame.empty:
                return []
            if index is not None:
                frame = frame.reset_index().rename(columns={frame.index.name or "index": index})
            return _json.loads(frame.to_json(orient="records", default_handler=str))[0]

        cells = [
            {
                "iteration": row,
                "scenario": code,
                "outcome": res.outcome,
                "basis": res.basis,
                "rule": res.rule,
                "llm": res.llm,
                "cached": res.cached,
                "measured_at": res.measured_at,
                "summary": res.summary,
                **_stability_record(self.stability.get((row, code))),
            }
            for (row, code), res in self.results.items()
        ]
        cache = self.meta.get("cache") or {}
        params = self.meta.get("params_dict")
        run = {
            "releases": list(self.releases),
            "scale": (params or {}).get("scale"),
            "seed": self.seed,
            "instance": self.instance.name,
            "instance_digest": instance_digest(self.instance),
            "cache_hits": cache.get("hits"),
            "cache_misses": cache.get("misses"),
            "model_cache_hits": (self.meta.get("model_cache") or {}).get("hits"),
            "model_cache_misses": (self.meta.get("model_cache") or {}).get("misses"),
            "cache_folder": cache.get("folder"),
            "fresh": cache.get("fresh"),
            "params": params,
            "embedding": self.meta.get("embedding"),
            "stability_seeds": self.meta.get("stability_seeds"),
            "seconds": round(float(self.meta.get("seconds", 0.0)), 2),
        }
        return {
            "evidence": records(self.evidence),
            "cells": cells,
            "claims": records(self.claims) if self.releases else [],
            # Every iteration's fitness and journey is the world model's (the doc's
            # estimate), never measured: each record says so.
            "fitness": [{**r, "basis": "modelled"} for r in records(self.fitness, "iteration")]
            if self.iterations
            else [],
            "journey": [{**r, "basis": "modelled"} for r in records(self.journey, "iteration")]
            if self.iterations
            else [],
            "run": run,
        }

    # ---- text -----------------------------------------------------------------------------------
    def render(self, *, width: int = 110) -> str:
        """The table (modelled cells marked ``~``), evidence with each scenario's rule (one for
        modelled and measured cells) and its measured cells' LLM stand-in, whether each measured
        cell came from the result cache, fitness, journey, measured simplicity, checked claims
        (testable or not, and why) and findings."""
        inst = self.instance.summary()
        out = [
            f"memlab simulate  seed={self.seed}",
            "instance: " + ", ".join(f"{k}={v}" for k, v in inst.items()),
        ]
        if self.releases:
            out.append(
                f"real rows: elfmem {', '.join(self.releases)} run in their own venvs; "
                f"params: {self.meta.get('params')}"
            )
        out.append("")
        basis = self.basis
        table = self.table.copy()
        for col in table.columns:
            table[col] = [
                _cell(o, b) + self.stability_mark(r, col)
                for r, o, b in zip(table.index, table[col], basis[col])
            ]
        seeds = self.meta.get("stability_seeds") or [self.seed]
        out += [
            "Iteration x Scenario   (~x = modelled: the doc's estimate, executed from the "
            "iteration's design flags; plain = measured on a shipped release)"
            + (
                f"\n  * = the verdict moves across seeds {','.join(map(str, seeds))}; "
                f"? = decided at seed {self.seed} only (see Stability)"
                if len(seeds) > 1
                else ""
            ),
            table.to_string(),
            "",
        ]
        out.append("Evidence")
        for scenario in self.scenarios:
            out.append(f"  {scenario.code}  {scenario.title} ({scenario.nature})")
            for row in self.rows:
                res = self.results.get((row, scenario.code))
                if res is None:
                    continue
                tag = (
                    "modelled, cached"
                    if res.cached
                    else "modelled, computed now"
                    if res.cached is False
                    else "modelled"
                )
                if res.basis == "measured":
                    tag = (
                        f"measured, cached from {res.measured_at}"
                        if res.cached
                        else "measured now"
                        if res.cached is False
                        else "measured"
                    )
                st = self.stability.get((row, scenario.code)) or {}
                if st.get("moved"):
                    tag += "; MOVES: " + ", ".join(
                        f"seed {k} {_WORD[v]}" for k, v in st["seeds"].items()
                    )
                line = f"    {row[:26]:<26} {_WORD[res.outcome]:<5} [{tag}] {res.summary}"
                out.append(line if len(line) <= width * 2 else line[: width * 2 - 1] + "…")
            rule = next(
                (
                    self.results[(r, scenario.code)].rule
                    for r in self.rows
                    if (r, scenario.code) in self.results and self.results[(r, scenario.code)].rule
                ),
                "",
            )
            if rule:
                out.append(f"      rule (modelled and measured alike): {rule}")
            llm = next(
                (
                    self.results[(r, scenario.code)].llm
                    for r in self.rows
                    if (r, scenario.code) in self.results
                    and self.results[(r, scenario.code)].basis == "measured"
                ),
                None,
            )
            if llm:
                out.append(f"      LLM in the measured cells: {llm}")
        out.append("")
        if len(seeds) > 1 and self.stability:
            moved = [k for k, v in self.stability.items() if v["moved"]]
            single = [k for k, v in self.stability.items() if v["moved"] is None]
            out.append(
                f"Stability across seeds {','.join(map(str, seeds))}: "
                f"{len(moved)} of {len(self.stability)} cells move"
                + (f"; {len(single)} decided at seed {self.seed} only" if single else "")
            )
            for key in moved:
                st = self.stability[key]
                out.append(
                    f"  moves  {key[0][:26]:<26} {key[1]:<4} "
                    + ", ".join(f"seed {k}: {_WORD[v]}" for k, v in st["seeds"].items())
                )
            if single:
                out.append(f"  seed {self.seed} only: " + ", ".join(f"{r} {c}" for r, c in single))
                out.append(f"    why: {self.stability[single[0]]['note']}")
            out.append("")
        if self.iterations:
            fit = self.fitness.copy()
            for col in ("Control", "Integrity", "Cost", "Simplicity", "Scale"):
                fit[col] = fit[col].map(lambda v: _WORD[v])
            out += [
                "Fitness of the modelled iterations (rule: memlab/sim/fitness.py; "
                "Simplicity there is the doc's estimate)",
                fit.to_string(),
                "",
            ]
            journey = self.journey[
                ["change", "S1-S10", "fixed", "improved", "regressed", "verdict"]
            ]
            out += ["Journey (modelled)", journey.to_string(), ""]
        if self.simplicity:
            out.append(
                "Simplicity, measured (non-blank, non-comment lines of the installed "
                "elfmem package)"
            )
            for rel, c in self.simplicity.items():
                out.append(
                    f"  elfmem {rel}: {c['code']:,} code lines in {c['files']} files "
                    f"({c['lines']:,} lines in all)"
                )
            out.append("")
        if self.releases:
            out.append("Claims checked against the shipped releases")
            for row in self.claims.itertuples(index=False):
                if row.verdict == "not run":
                    continue
                out.append(
                    f"  [{row.verdict}] {row.claim}"
                    + (
                        f"  (decided by {row.source})"
                        if isinstance(row.source, str)
                        else f"  (no one line: {row.source_note})"
                        if isinstance(row.source_note, str)
                        else ""
                    )
                )
                out.append(f"      {row.release}: {row.evidence}")
                if row.why:
                    out.append(f"      {'testable' if row.testable else 'untestable'}: {row.why}")
            out.append("")
        check = self.model_check
        if len(check):
            out.append("World model vs the shipped release it stands for")
            for (rel, it), part in check.groupby(["release", "iteration"], sort=False):
                off = part[~part["agree"]]
                out.append(
                    f"  {it} vs elfmem {rel}: {int(part['agree'].sum())}/{len(part)} "
                    "scenarios agree"
                    + (
                        "; differ: "
                        + ", ".join(
                            f"{r.scenario} ~{_WORD[r.modelled]}/{_WORD[r.measured]}"
                            for r in off.itertuples()
                        )
                        if len(off)
                        else ""
                    )
                )
            out.append("")
        if self.iterations:
            out.append("Findings: where the modelled run disagrees with the doc")
            if self.findings.empty:
                out.append("  none")
            for row in self.findings.itertuples(index=False):
                out.append(
                    f"  {row.iteration} / {row.where}: doc {row.doc}, run {row.run} -- {row.why}"
                )
        stats = self.meta.get("embedder")
        out += ["", f"run took {self.meta.get('seconds', 0):.1f} s; embeddings: {stats}"]
        model = self.meta.get("model_cache")
        if model:
            cached = [
                f"{r} {c}"
                for (r, c), res in self.results.items()
                if res.basis == "modelled" and res.cached
            ]
            n_seeds = len(self.meta.get("stability_seeds") or [self.seed])
            mine = sum(res.basis == "modelled" for res in self.results.values())
            out.append(
                f"modelled cells: {model['hits']} from the result cache, "
                f"{model['misses']} computed{' (--fresh)' if model['fresh'] else ''}"
                + (f" over {n_seeds} seeds" if n_seeds > 1 else "")
                + (
                    f"; at seed {self.seed}: all {mine} cached"
                    if len(cached) == mine
                    else f"; at seed {self.seed}, cached: {', '.join(cached)}"
                    if cached
                    else f"; at seed {self.seed}: none cached"
                )
            )
        cache = self.meta.get("cache")
        if cache:
            out.append(
                f"real cells: {cache['hits']} from the result cache, {cache['misses']} "
                f"run{' (--fresh)' if cache['fresh'] else ''}; cache {cache['folder']}"
            )
        if self.meta.get("embedding"):
            out.append(f"embedding precision: {self.meta['embedding']}")
        return "\n".join(out)

    def __repr__(self) -> str:
        return (
            f"<SimulationRun {len(self.iterations)} iterations x {len(self.scenarios)} "
            f"scenarios on {self.instance.name!r}, seed={self.seed}>"
        )


def simulate(
    iterations: Any = None,
    scenarios: Any = None,
    *,
    instance: Any = None,
    seed: int = 0,
    releases: Any = (),
    params: RealParams | None = None,
    cache: Any = True,
    fresh: bool = False,
    stability_seeds: int = 1,
) -> SimulationRun:
    """Run each scenario under each modelled iteration and against each shipped release.

    ``iterations``: None (the doc's six), numbers 1-6, Iteration objects, a mapping of them, or
    ``[]`` for real rows only. ``scenarios``: None (S1-S11), codes ("S3") or numbers.
    ``instance``: None for the doc's figures, an :class:`~memlab.sim.instance.Instance`, an
    elfmem Store, or a path to an elfmem database (loaded and audited). ``releases``: elfmem
    settings to run for real (``"all"`` or None for 0.19.2, 0.20.0 and 0.20.0+project, the
    last opening its stores inside a project root and running S8 and S9 only; the default
    ``()`` runs none), each in its release's own cached venv (:mod:`memlab.sim.real.releases`;
    created on first use).
    ``params``: :class:`~memlab.sim.real.RealParams` for the operator scripts (``scale`` is the
    S7/S11 corpus size, 2,000 by default). Modelled cells carry ``basis="modelled"`` and the
    design flags they read; real cells ``basis="measured"`` and their rule.
    ``cache``: the real cells' result cache (:mod:`memlab.sim.cache`; True: the one under
    ``$MEMLAB_CACHE_DIR``, False: none, or a ``ResultCache``); each measured cell says whether
    it came from it (``cached``) and when it was measured (``measured_at``); ``fresh=True``
    re-runs every real cell. ``meta["cache"]`` counts hits and misses; the modelled cells
    are cached in the same folder under their own keys (``meta["model_cache"]``).
    ``stability_seeds``: how many seeds decide each cell's stability (``seed``, ``seed+1``,
    ...; ``memlab simulate`` uses 3): the modelled cells are computed (or read from the cache)
    at each, the measured cells read from the result cache at the others and never run there
    (a cold real cell costs minutes); ``run.stability`` says per cell which seeds decided it
    and whether its verdict moved.
    """
    if (
        not isinstance(stability_seeds, int)
        or isinstance(stability_seeds, bool)
        or not 1 <= stability_seeds <= 100
    ):
        raise SimulationError(
            f"stability_seeds must be an integer from 1 to 100, not {stability_seeds!r}"
        )
    its = (
        []
        if iterations is not None
        and not isinstance(iterations, (Iteration, Mapping))
        and len(list(iterations)) == 0
        else resolve_iterations(iterations)
    )
    scs = resolve_scenarios(scenarios)
    rels = _resolve_releases(releases)
    params = params or RealParams()
    inst, store = load_instance(instance)
    book = VectorBook()
    before = book.embedder.stats.as_dict()  # the embedder is a process-wide singleton
    ctx = Context(inst, seed, book=book, store=store)
    results: dict[tuple[str, str], ScenarioResult] = {}
    started = time.perf_counter()
    model_cache = open_cache(cache, fresh, own_counts=True)
    embedding = book.embedder.cache_key if model_cache is not None else None
    timings = run_cells(ctx, scs, its, results, model_cache, embedding)
    sizes: dict[str, dict[str, int]] = {}
    facts: dict[str, dict[str, Any]] = {}
    claims_run: dict[str, Any] = {}
    store = None
    if rels:
        t0 = time.perf_counter()
        store = ResultCache(fresh=fresh) if cache is True else (cache or None)
        real = run_real(
            rels,
            [s.code for s in scs],
            instance=inst,
            seed=seed,
            params=params,
            cache=store or False,
            fresh=fresh,
        )
        results.update(real)
        sizes = simplicity(rels)
        from memlab.sim.real.release_facts import new_modules, release_facts
        from memlab.sim.real.releases import release_sources

        folders = {rel: release_sources(rel) for rel in rels}
        facts = {rel: release_facts(folder) for rel, folder in folders.items()}
        claims_run = {
            "scale": params.scale,
            "new_modules": new_modules(folders["0.19.2"], folders["0.20.0"])
            if {"0.19.2", "0.20.0"} <= set(folders)
            else [],
        }
        rows = [
            {"scenario": code, "iteration": row, "seconds": res.metrics.get("seconds", 0.0)}
            for (row, code), res in real.items()
        ]
        timings = pd.concat([timings, pd.DataFrame(rows)], ignore_index=True)
        real_seconds = time.perf_counter() - t0
    stability = _stability(
        inst,
        seed,
        int(stability_seeds),
        scs,
        its,
        rels,
        params,
        results,
        book,
        model_cache,
        embedding,
        store,
        ctx.store,
    )
    seconds = time.perf_counter() - started
    after = book.embedder.stats.as_dict()
    stats = {"hits": after["hits"] - before["hits"], "misses": after["misses"] - before["misses"]}
    provenance = getattr(book.embedder, "provenance", None)
    meta = {
        "seconds": seconds,
        "embedder": stats,
        "texts": len(book),
        "embedding": provenance()["summary"] if provenance else None,
        "store": None if store is None else str(getattr(store, "path", "")),
        "params": _params_text(params) if rels else None,
        "params_dict": dataclasses.asdict(params) if rels else None,
        "real_seconds": real_seconds if rels else 0.0,
        "cache": store.stats() if rels and store is not None else None,
        "model_cache": model_cache.stats() if model_cache is not None else None,
        "claims_run": claims_run,
    }
    meta["stability_seeds"] = [seed + k for k in range(max(1, int(stability_seeds)))]
    return SimulationRun(
        its, scs, inst, seed, results, timings, meta, ctx, rels, sizes, facts, stability
    )


#: The modelled scenarios whose cells grow the corpus to the doc's scale (14,000 notes at
#: growth 100, embedded anew for each seed: measured >10 min for two extra seeds at load 9):
#: at a stability seed other than the run's own they are read from the cache, never computed.
SCALE_SCENARIOS = ("S7", "S11")


def _stability(
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


def _resolve_releases(releases: Any) -> list[str]:
    if releases is None or releases == "all":
        return all_settings()
    if isinstance(releases, str):
        releases = [r for r in releases.split(",") if r.strip()]
    return [check_setting(r) for r in releases]


def _params_text(params: RealParams) -> str:
    default = RealParams()
    changed = {k: v for k, v in dataclasses.asdict(params).items() if getattr(default, k) != v}
    return f"scale={params.scale}" + "".join(
        f", {k}={v}" for k, v in changed.items() if k != "scale"
    )


def _stability_record(st: dict[str, Any] | None) -> dict[str, Any]:
    """A cell's stability for JSON: its outcome per seed, moved (None: one seed), why."""
    if st is None:
        return {"seeds": None, "moved": None, "stability": None}
    return {
        "seeds": {str(k): v for k, v in st["seeds"].items()},
        "moved": st["moved"],
        "stability": st["note"],
    }


def _cell(outcome: str | None, basis: str | None) -> str:
    word = _WORD[outcome]
    return word if basis == "measured" or outcome is None else "~" + word
