"""A simulation run as numbers and JSON: ``metrics()`` (a report's metrics.json) and
``as_dict()`` (what ``memlab simulate --json`` prints).

Part of :mod:`memlab.sim.run`, whose ``SimulationRun`` is a :class:`RunJson`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab.sim._run_frames import RunFrames
from memlab.sim.cache import instance_digest
from memlab.sim.real.runner import release_row

__all__ = ["RunJson"]


class RunJson(RunFrames):
    """A run's ``metrics()`` and ``as_dict()``."""

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


def _stability_record(st: dict[str, Any] | None) -> dict[str, Any]:
    """A cell's stability for JSON: its outcome per seed, moved (None: one seed), why."""
    if st is None:
        return {"seeds": None, "moved": None, "stability": None}
    return {
        "seeds": {str(k): v for k, v in st["seeds"].items()},
        "moved": st["moved"],
        "stability": st["note"],
    }
