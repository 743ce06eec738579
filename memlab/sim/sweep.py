"""Sensitivity: which verdicts move across the seeds, scales or instances a run is given.

    >>> from memlab.sim.sweep import sweep
    >>> frame = sweep("seeds", [0, 1, 2], releases="all")   # memlab simulate --sweep seeds=0,1,2

Each value is one :func:`~memlab.sim.run.simulate` (the real cells come from the result cache
when they were measured before, :mod:`memlab.sim.cache`). The frame has one row per cell
(iteration or release row, scenario), its basis, its outcome under each value, ``moved`` (the
outcome differs between two values) and ``metrics_moved`` (a stable metric differs: the cell
read the input even where its verdict held). A cell that never moves is visible as such.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import pandas as pd

from memlab.errors import SimulationError

__all__ = ["sweep", "parse_sweep", "AXES"]

#: What can be swept, and the simulate() input each one sets.
AXES = ("seeds", "scales", "instances")


def parse_sweep(text: str) -> tuple[str, list[Any]]:
    """``"seeds=0,1,2"`` -> ``("seeds", [0, 1, 2])`` (scales: integers; instances: paths)."""
    axis, sep, values = str(text).partition("=")
    axis = axis.strip().lower()
    if not sep or axis not in AXES:
        raise SimulationError(
            f"--sweep needs AXIS=V1,V2,... with AXIS one of {', '.join(AXES)}, not {text!r}"
        )
    items = [v.strip() for v in values.split(",") if v.strip()]
    if len(items) < 2:
        raise SimulationError(f"--sweep {axis} needs at least two values, not {values!r}")
    if axis in ("seeds", "scales"):
        try:
            return axis, [int(v) for v in items]
        except ValueError:
            raise SimulationError(f"--sweep {axis} takes integers, not {values!r}") from None
    return axis, items


def sweep(
    axis: str,
    values: Sequence[Any],
    *,
    iterations: Any = None,
    scenarios: Any = None,
    instance: Any = None,
    seed: int = 0,
    releases: Any = (),
    params: Any = None,
    cache: Any = True,
    fresh: bool = False,
) -> pd.DataFrame:
    """Run :func:`simulate` once per value of ``axis`` and compare the cells (module docs)."""
    from memlab.sim.real.runner import RealParams
    from memlab.sim.run import simulate

    if axis not in AXES:
        raise SimulationError(f"cannot sweep {axis!r}", hint=f"one of {', '.join(AXES)}")
    params = params or RealParams()
    runs = {}
    for value in values:
        kw: dict[str, Any] = {"instance": instance, "seed": seed, "params": params}
        if axis == "seeds":
            kw["seed"] = int(value)
        elif axis == "scales":
            kw["params"] = dataclasses.replace(params, scale=int(value))
        else:
            kw["instance"] = value
        runs[str(value)] = simulate(
            iterations, scenarios, releases=releases, cache=cache, fresh=fresh, **kw
        )
    rows = []
    first = next(iter(runs.values()))
    for key, res in first.results.items():
        outcomes, sigs = {}, set()
        for label, run in runs.items():
            other = run.results.get(key)
            outcomes[label] = None if other is None else other.outcome
            if other is not None:
                sigs.add(
                    repr(
                        sorted(
                            (k, str(v)) for k, v in other.metrics.items() if k not in other.unstable
                        )
                    )
                )
        seen = {o for o in outcomes.values() if o is not None}
        rows.append(
            {
                "row": key[0],
                "scenario": key[1],
                "basis": res.basis,
                **outcomes,
                "moved": len(seen) > 1,
                "metrics_moved": len(sigs) > 1,
            }
        )
    frame = pd.DataFrame(
        rows, columns=["row", "scenario", "basis", *runs, "moved", "metrics_moved"]
    )
    frame.attrs["axis"] = axis
    return frame
