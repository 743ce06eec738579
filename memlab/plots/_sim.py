"""The figures of a simulation run (notebooks/04-simulation.ipynb): the outcome per system
and scenario, measured or modelled, and each iteration's fitness profile.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from memlab._escape import plot_text
from memlab.plots._base import constrained_axes

__all__ = ["VERDICT_COLOURS", "outcome_map", "fitness_profile"]


#: verdict -> colour, shared by the simulation figures (a fitness level maps onto the same).
VERDICT_COLOURS = {
    "pass": "#27ae60",
    "partial": "#f39c12",
    "fail": "#c0392b",
    "green": "#27ae60",
    "amber": "#f39c12",
    "red": "#c0392b",
}
_NO_VERDICT = "#d5d8dc"
_LEVEL = {"red": 0, "fail": 0, "amber": 1, "partial": 1, "green": 2, "pass": 2}


def _cell_basis(run: Any) -> pd.DataFrame:
    """'measured' / 'modelled' per (iteration, scenario) cell, shaped like ``run.table``.

    Read from ``run.basis`` when the run has it; otherwise a cell is modelled when its result
    lists anything it rests on that was not executed (``ScenarioResult.modelled``)."""
    table = run.table
    basis = getattr(run, "basis", None)
    if isinstance(basis, pd.DataFrame):
        return basis.reindex(index=table.index, columns=table.columns)
    out = pd.DataFrame("measured", index=table.index, columns=table.columns)
    for (it, code), res in getattr(run, "results", {}).items():
        if it in out.index and code in out.columns and getattr(res, "modelled", None):
            out.loc[it, code] = "modelled"
    return out


def outcome_map(run: Any, *, ax: Axes | None = None) -> Figure:
    """System x Scenario heat map: each cell coloured by its verdict; a hatched cell (and a
    '~' before its word) rests on a model rather than a measurement."""
    table = run.table
    basis = _cell_basis(run)
    rows, cols = list(table.index), list(table.columns)
    fig, ax = constrained_axes(ax, (1.0 + 0.9 * max(3, len(cols)), 1.2 + 0.45 * max(2, len(rows))))
    for i, it in enumerate(rows):
        for j, code in enumerate(cols):
            verdict = table.loc[it, code]
            verdict = (
                None
                if verdict is None or (isinstance(verdict, float) and math.isnan(verdict))
                else str(verdict)
            )
            modelled = basis.loc[it, code] == "modelled"
            colour = _NO_VERDICT if verdict is None else VERDICT_COLOURS.get(verdict, _NO_VERDICT)
            ax.add_patch(_rect(j, i, colour, hatch="////" if modelled else None))
            word = "FAIL" if verdict == "fail" else verdict or "n/a"
            # on a hatched cell the word sits on a patch of the cell's own colour: white hatch
            # lines never run through white letters
            ax.text(
                j + 0.5,
                i + 0.5,
                ("~" if modelled else "") + word,
                ha="center",
                va="center",
                fontsize=9,
                color="white" if verdict in ("pass", "fail") else "black",
                bbox=dict(boxstyle="round,pad=0.25", facecolor=colour, edgecolor="none")
                if modelled
                else None,
            )
    ax.set_xlim(0, len(cols))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([j + 0.5 for j in range(len(cols))], [plot_text(c) for c in cols])
    ax.set_yticks([i + 0.5 for i in range(len(rows))], [plot_text(r) for r in rows], fontsize=9)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    n_modelled = int((basis == "modelled").to_numpy().sum())
    ax.set_title("Outcome per system and scenario", fontsize=10, pad=22)
    ax.set_xlabel(
        f"green pass · amber partial · red FAIL\nhatched '~': modelled "
        f"({n_modelled} of {table.size}); solid: measured",
        fontsize=8,
    )
    return fig


def _rect(x: float, y: float, colour: str, *, hatch: str | None = None):
    from matplotlib.patches import Rectangle

    return Rectangle(
        (x + 0.03, y + 0.05),
        0.94,
        0.9,
        facecolor=colour,
        edgecolor="white",
        hatch=hatch,
        linewidth=0.5,
    )


def fitness_profile(run: Any, *, ax: Axes | None = None) -> Figure:
    """Each iteration's fitness across Control, Integrity, Cost, Simplicity and Scale: a line
    per iteration on red (0) / amber (1) / green (2), offset slightly so lines stay apart."""
    fitness = run.fitness
    dims = [d for d in ("Control", "Integrity", "Cost", "Simplicity", "Scale") if d in fitness]
    fig, ax = constrained_axes(ax, (7.5, 3.6))
    n = len(fitness)
    cmap = __import__("matplotlib").colormaps["tab10"]
    for k, (it, row) in enumerate(fitness.iterrows()):
        offset = (k - (n - 1) / 2) * (0.12 / max(1, n - 1)) * 2 if n > 1 else 0.0
        levels = [_LEVEL.get(str(row[d]), np.nan) for d in dims]
        ax.plot(
            range(len(dims)),
            [v + offset if v == v else v for v in levels],
            marker="o",
            color=cmap(k % 10),
            label=plot_text(it),
            linewidth=1.5,
        )
    for level, colour in ((0, "#c0392b"), (1, "#f39c12"), (2, "#27ae60")):
        ax.axhspan(level - 0.35, level + 0.35, color=colour, alpha=0.10, linewidth=0)
    ax.set_xticks(range(len(dims)), dims)
    ax.set_yticks([0, 1, 2], ["red", "amber", "green"])
    ax.set_ylim(-0.5, 2.5)
    ax.set_title("Fitness profile per iteration (higher is better)", fontsize=10)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig
