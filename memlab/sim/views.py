"""Notebook views of a simulation: coloured table, side-by-side evidence, a live threshold control.

Kept out of ``run.py`` so the library needs neither matplotlib nor ipywidgets to simulate.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from memlab.sim.fitness import SYMBOL
from memlab.sim.model.iterations import Iteration
from memlab.sim.run import SimulationRun

__all__ = [
    "outcome_table",
    "fitness_table",
    "evidence_table",
    "compare_runs",
    "threshold_sweep",
    "threshold_explorer",
]

_COLOURS = {
    "pass": "#c8e6c9",
    "partial": "#fff3b0",
    "fail": "#ffcdd2",
    "n/a": "#eeeeee",
    "green": "#c8e6c9",
    "amber": "#fff3b0",
    "red": "#ffcdd2",
}


def _colour(value: Any) -> str:
    return f"background-color: {_COLOURS[value]}" if value in _COLOURS else ""


def outcome_table(run: SimulationRun, *, symbols: bool = False):
    """The table of modelled iterations and real releases, coloured by outcome (a pandas
    Styler). Measured cells are bold; modelled cells (the doc's estimate) are italic grey text
    in a dashed border, with a leading ``~``. A cell whose verdict moves across the run's
    seeds ends in ``*`` (outlined), one decided at one seed of several in ``?``."""
    table = run.table.copy()
    basis = run.basis.reindex_like(table)
    modelled = basis == "modelled"
    css = table.map(_colour)
    css = css.where(~modelled, css + "; font-style: italic; color: #555; border: 1px dashed #999")
    css = css.where(modelled, css + "; font-weight: bold")
    shown = table.map(lambda v: f"{SYMBOL.get(v, v)} {v}" if symbols else str(v))
    shown = shown.where(~modelled, "~" + shown)
    marks = pd.DataFrame(
        {c: [run.stability_mark(r, c) for r in table.index] for c in table.columns},
        index=table.index,
    )
    shown = shown + marks
    css = css.where(marks != "*", css + "; outline: 2px solid #c62828")
    styler = shown.style.apply(lambda _: css, axis=None)
    seeds = run.meta.get("stability_seeds") or []
    if len(seeds) > 1:
        styler = styler.set_caption(
            f"* (outlined): the verdict moves across seeds {', '.join(map(str, seeds))}; "
            f"? : decided at seed {run.seed} only (a measured or S7/S11 cell is read from the "
            "result cache at the other seeds, never run there, and was not in it). "
            "~ italic: modelled."
        )
    return styler


def fitness_table(run: SimulationRun):
    """The five dimensions per iteration, coloured (a pandas Styler), captioned as modelled:
    every iteration's fitness is the world model's, the doc's estimate."""
    return run.fitness.style.map(_colour).set_caption(
        "Modelled (the doc's estimate): fitness of the world model's iterations"
    )


def evidence_table(run: SimulationRun, scenario: str) -> pd.DataFrame:
    """One scenario's metrics side by side: metric (rows) x iteration (columns)."""
    ev = run.evidence
    part = ev[(ev["scenario"] == scenario.upper()) & (ev["metric"] != "modelled")]
    if part.empty:
        return pd.DataFrame()
    return part.pivot_table(
        index="metric",
        columns="iteration",
        values="value",
        aggfunc="first",
        observed=True,
        sort=False,
    )


def compare_runs(
    runs: Mapping[str, SimulationRun], scenario: str, iteration: int | str | Iteration
) -> pd.DataFrame:
    """The same cell from several runs (e.g. two instances): metric (rows) x run (columns)."""
    columns = {}
    for label, run in runs.items():
        res = run.cell(iteration, scenario)
        columns[label] = pd.Series(
            {
                "outcome": res.outcome,
                "summary": res.summary,
                **{k: v for k, v in res.metrics.items()},
            },
            dtype=object,
        )
    return pd.DataFrame(columns)


def threshold_sweep(
    run: SimulationRun,
    iteration: Iteration,
    thresholds: Iterable[float] = (0.85, 0.88, 0.90, 0.92, 0.94),
    scenarios: Sequence[str] = ("S1", "S3", "S10"),
) -> pd.DataFrame:
    """Re-run scenarios with the near-duplicate threshold moved: one row per threshold."""
    rows = []
    for t in thresholds:
        variant = _at_threshold(iteration, t)
        row: dict[str, Any] = {"near_dup_threshold": t}
        for code in scenarios:
            res = run.rerun(variant, code)
            row[code] = res.outcome
            row[f"{code} evidence"] = res.summary
        rows.append(row)
    return pd.DataFrame(rows).set_index("near_dup_threshold")


def _at_threshold(iteration: Iteration, threshold: float) -> Iteration:
    near = min(float(threshold), iteration.exact_dup_threshold)
    return iteration.with_(name=f"{iteration.name} @ near={near:.3f}", near_dup_threshold=near)


def threshold_explorer(
    run: SimulationRun,
    *,
    iteration: Iteration | None = None,
    scenarios: Sequence[str] = ("S1", "S3", "S10"),
):
    """A slider for the near-duplicate threshold and a picker for the iteration; moving either
    re-runs ``scenarios`` on the run's context and shows the new outcomes. Returns the widget
    (display it); in a headless run it renders once with the starting values."""
    import ipywidgets as widgets

    start = iteration or run.iterations[0]
    options = [(it.name, it) for it in run.iterations]
    if start not in [o[1] for o in options]:
        options.insert(0, (start.name, start))
    pick = widgets.Dropdown(
        options=options, value=start, description="iteration", layout=widgets.Layout(width="340px")
    )
    slider = widgets.FloatSlider(
        value=start.near_dup_threshold,
        min=0.80,
        max=0.99,
        step=0.005,
        readout_format=".3f",
        description="near-dup",
        continuous_update=False,
    )
    out = widgets.Output()

    def refresh(_: Any = None) -> None:
        variant = _at_threshold(pick.value, slider.value)
        rows = []
        for code in scenarios:
            res = run.rerun(variant, code)
            rows.append({"scenario": code, "outcome": res.outcome, "evidence": res.summary})
        # The table is put in the Output directly, not captured from display() inside it: a
        # headless runner (nbclient, so papermill and `memlab report`) answers each captured
        # output by sending the widget's state back on the kernel's shell socket while it
        # waits for the cell's reply on that socket, and that race delayed the reply by up to
        # a second per cell (40 such cells: 24-46 s, against 3-6 s so) and in one test run
        # for good (the kernel had answered; the runner waited 8 minutes, until killed).
        out.outputs = ()
        out.append_display_data(pd.DataFrame(rows).set_index("scenario"))

    pick.observe(refresh, names="value")
    slider.observe(refresh, names="value")
    refresh()
    return widgets.VBox([widgets.HBox([pick, slider]), out])
