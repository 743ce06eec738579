"""``simulate()``: run iterations x scenarios on an instance and keep every piece of evidence.

This module is the public face: import from here. ``SimulationRun`` is composed of private
siblings, imported one way (frames <- json, text; stability alone):

* :mod:`~memlab.sim._run_frames`: the run's data and its frames (``table``, ``basis``,
  ``evidence``, ``events``, ``fitness``, ``journey``, ``findings``, ``claims``, ``model_check``,
  ``cell``);
* :mod:`~memlab.sim._run_json`: ``metrics()`` and ``as_dict()``;
* :mod:`~memlab.sim._run_text`: ``render()``;
* :mod:`~memlab.sim._run_stability`: each cell's verdict at the other seeds
  (``SCALE_SCENARIOS``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from memlab.errors import SimulationError
from memlab.sim._run_json import RunJson
from memlab.sim._run_stability import SCALE_SCENARIOS, seed_stability
from memlab.sim._run_text import RunText
from memlab.sim.cache import ResultCache, open_cache
from memlab.sim.instance import load_instance
from memlab.sim.model.cells import MODELLED_LLM, run_cells
from memlab.sim.model.iterations import Iteration, resolve_iterations
from memlab.sim.model.scenarios import Context
from memlab.sim.model.world import VectorBook
from memlab.sim.real.releases import all_settings, check_setting
from memlab.sim.real.runner import RealParams, run_real, simplicity
from memlab.sim.scenarios import ScenarioResult, resolve_scenarios

__all__ = ["simulate", "SimulationRun", "MODELLED_LLM", "SCALE_SCENARIOS"]


@dataclass
class SimulationRun(RunText, RunJson):
    """Iteration x Scenario outcomes with their evidence, fitness, journey and findings."""

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
    stability = seed_stability(
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
