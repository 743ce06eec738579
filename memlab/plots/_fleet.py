"""The figure of a fleet (notebooks/06-fleet.ipynb): one histogram per fleet figure."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from memlab._escape import plot_text
from memlab.errors import MemlabError
from memlab.plots._base import whole_counts

__all__ = ["fleet_distributions"]


def fleet_distributions(
    metrics: pd.DataFrame, *, mark: Mapping[str, float] | None = None, mark_label: str = "reference"
) -> Figure:
    """One histogram per fleet figure (:func:`memlab.lake.fleet_metrics`), the highest store
    named; ``mark`` draws one store's value (e.g. the doc's instance) as a line on each."""
    from memlab.lake import FLEET_METRICS

    names = [n for n in FLEET_METRICS if metrics[n].notna().any()]
    if not names:
        raise MemlabError("no fleet figure has a value: the fleet has no audited store")
    cols = 3
    rows = math.ceil(len(names) / cols)
    fig = Figure(figsize=(4.2 * cols, 3.0 * rows), layout="constrained")
    for i, name in enumerate(names):
        ax = fig.add_subplot(rows, cols, i + 1)
        values = metrics[name].dropna()
        ax.hist(values, bins=min(20, max(5, len(values))), color="#2e86c1", alpha=0.85)
        top = metrics.loc[values.idxmax()]
        ax.set_title(
            f"{name}\n(n={len(values)}; highest: {plot_text(str(top['store'])[:28])})", fontsize=9
        )
        if mark is not None and pd.notna(mark.get(name, np.nan)):
            ax.axvline(float(mark[name]), color="#c0392b", lw=2, label=plot_text(mark_label))
            ax.legend(fontsize=8)
        ax.set_ylabel("stores")
        whole_counts(ax.yaxis)
    return fig
