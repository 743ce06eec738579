"""The figure of the report index (:mod:`memlab.report`): headline metrics by run."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
from matplotlib.figure import Figure

from memlab._escape import plot_text
from memlab.errors import MemlabError
from memlab.plots._base import whole_counts

__all__ = ["trend_lines"]


def trend_lines(
    series: Mapping[str, Mapping[str, Any]],
    metrics: list[str],
    *,
    title: str | None = None,
    cols: int = 3,
) -> Figure:
    """Small multiples, one per metric: its value at each dated run (``series`` is run date ->
    metric -> value). A run without a number for a metric (null: not recorded) leaves a gap
    and an '–' at the foot of the panel, never a 0; a metric no run has is not drawn."""
    dates = sorted(series)
    metrics = [m for m in metrics if any(m in series[d] for d in dates)]
    if not metrics:
        raise MemlabError("no run has any of these metrics", hint=", ".join(metrics) or "none")
    cols = max(1, min(cols, len(metrics)))
    rows = math.ceil(len(metrics) / cols)
    fig = Figure(figsize=(4.3 * cols, 2.9 * rows), layout="constrained")
    x = np.arange(len(dates))
    labels = [
        plot_text(d[5:] if len(dates) > 1 and len({d[:4] for d in dates}) == 1 else d)
        for d in dates
    ]
    for i, metric in enumerate(metrics):
        ax = fig.add_subplot(rows, cols, i + 1)
        values = [series[d].get(metric) for d in dates]
        y = np.array(
            [
                float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan
                for v in values
            ]
        )
        ax.plot(x, y, marker="o", color="#2e86c1", linewidth=1.8)
        finite = np.isfinite(y)
        if not finite.any():
            ax.text(
                0.5,
                0.5,
                "– not recorded\nin any run",
                ha="center",
                va="center",
                transform=ax.transAxes,
                color="#7f8c8d",
                fontsize=10,
            )
            ax.set_yticks([])
        for xi, missing in zip(x, ~finite if finite.any() else np.zeros(len(x), bool)):
            if missing:
                ax.annotate(
                    "–",
                    (xi, 0),
                    xycoords=("data", "axes fraction"),
                    xytext=(0, 3),
                    textcoords="offset points",
                    ha="center",
                    color="#7f8c8d",
                    fontsize=11,
                )
        if finite.any():
            last = int(np.flatnonzero(finite)[-1])
            ax.annotate(
                f"{y[last]:,.4g}",
                (x[last], y[last]),
                xytext=(0, 6),
                textcoords="offset points",
                ha="center",
                fontsize=9,
            )
            lo, hi = float(np.nanmin(y)), float(np.nanmax(y))
            pad = (hi - lo) * 0.25 or (abs(hi) * 0.1 or 1.0)
            ax.set_ylim(lo - pad, hi + pad)
            if all(float(v).is_integer() for v in y[finite]):
                whole_counts(ax.yaxis)
        ax.set_xticks(x, labels, fontsize=9, rotation=30 if len(dates) > 4 else 0)
        ax.set_xlim(-0.5, len(dates) - 0.5)
        ax.tick_params(axis="y", labelsize=9)
        ax.grid(axis="y", color="#e5e8e8", linewidth=0.8)
        ax.set_title(plot_text(metric), fontsize=10)
    if title:
        fig.suptitle(plot_text(title), fontsize=11)
    return fig
