"""The figures of a review Proposal (notebooks/05-review.ipynb): the decisions by kind and
risk, the units' map (PCA of the embeddings) with their duplicate clusters, the pairwise
similarity histogram with its thresholds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from memlab._escape import plot_text
from memlab.plots._base import figure_of, plain_axes, whole_counts

__all__ = ["review_items", "cluster_map", "similarity_histogram"]


_RISK_COLOURS = {"low": "#27ae60", "medium": "#f39c12", "high": "#c0392b", "unrated": "#95a5a6"}


def _review_rows(proposal: Any) -> pd.DataFrame:
    """section, risk, tokens_saved per decision (choices when the proposal ranks them by
    impact, else one row per item with risk 'unrated')."""
    frame = getattr(proposal, "choices_frame", None)
    if callable(frame):
        df = frame()
        if len(df):
            return pd.DataFrame(
                {
                    "section": df["section"].astype(str),
                    "risk": df["risk"].fillna("unrated").astype(str),
                    "tokens_saved": pd.to_numeric(df["tokens_saved"], errors="coerce").fillna(0),
                }
            )
    items = proposal.items_frame()
    return pd.DataFrame(
        {"section": items["section"].astype(str), "risk": "unrated", "tokens_saved": 0.0}
    )


def review_items(proposal: Any, *, ax: Axes | None = None) -> Figure:
    """What the review proposes, by kind (section) and impact: bars count the decisions per
    section split by the risk of a wrong tick; the label gives the tokens they would free."""
    rows = _review_rows(proposal)
    if ax is not None:
        fig = figure_of(ax)
    else:
        fig = Figure(
            figsize=(7.5, 0.55 * max(3, rows["section"].nunique()) + 1.4), layout="constrained"
        )
        ax = fig.add_subplot()
    if rows.empty:
        ax.text(0.5, 0.5, "nothing to review", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    counts = rows.pivot_table(
        index="section", columns="risk", values="tokens_saved", aggfunc="size", fill_value=0
    )
    order = [r for r in ("high", "medium", "low", "unrated") if r in counts.columns]
    counts = counts[order].loc[counts.sum(axis=1).sort_values().index]
    left = np.zeros(len(counts))
    for risk in order:
        vals = counts[risk].to_numpy(dtype=float)
        ax.barh(
            [plot_text(s) for s in counts.index],
            vals,
            left=left,
            color=_RISK_COLOURS[risk],
            label=f"{risk} risk" if risk != "unrated" else "not rated",
        )
        left += vals
    saved = rows.groupby("section")["tokens_saved"].sum()
    for y, section in enumerate(counts.index):
        tok = saved.get(section, 0)
        ax.annotate(
            f"{int(left[y])}" + (f" · frees ~{tok:,.0f} tokens" if tok else ""),
            (left[y], y),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    ax.set_xlim(0, left.max() * 1.45)
    whole_counts(ax.xaxis)
    ax.set_xlabel("decisions to make")
    ax.set_title(f"Review: {len(rows)} decision(s) by kind and impact", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    return fig


def cluster_map(proposal: Any, *, ax: Axes | None = None, label_clusters: bool = True) -> Figure:
    """Scatter of every unit of a review (:func:`memlab.reviews.views.projection`, PCA of the
    embeddings); duplicate clusters coloured and joined, survivors as stars, protected units
    ringed, stale candidates crossed."""
    from matplotlib import colormaps

    from memlab.reviews.views import projection

    df = projection(proposal)
    fig, ax = plain_axes(ax, (9.0, 6.0))
    ax.scatter(df["x"], df["y"], s=18, c="#c8c8c8", label="unit", zorder=1)
    prot = df[df["protected"]]
    ax.scatter(
        prot["x"],
        prot["y"],
        s=70,
        facecolors="none",
        edgecolors="#1f77b4",
        label="protected (pinned / constitutional / read-only)",
        zorder=2,
    )
    cmap = colormaps["tab10"]
    pos = df.set_index("uid")
    for n, c in enumerate(proposal.clusters):
        colour = cmap(n % 10)
        members = pos.loc[[m for m in c["members"] if m in pos.index]]
        for p in c["pairs"]:
            if p["a"] in pos.index and p["b"] in pos.index:
                ax.plot(
                    [pos.at[p["a"], "x"], pos.at[p["b"], "x"]],
                    [pos.at[p["a"], "y"], pos.at[p["b"], "y"]],
                    color=colour,
                    lw=1,
                    zorder=3,
                )
        ax.scatter(members["x"], members["y"], s=40, color=colour, zorder=4)
        s = c["survivor"]
        if s in pos.index:
            ax.scatter(
                [pos.at[s, "x"]],
                [pos.at[s, "y"]],
                s=220,
                marker="*",
                color=colour,
                edgecolors="black",
                zorder=5,
            )
            if label_clusters:
                ax.annotate(
                    plot_text(str(c["survivor_title"])[:28]),
                    (pos.at[s, "x"], pos.at[s, "y"]),
                    textcoords="offset points",
                    xytext=(6, 6),
                    fontsize=8,
                )
    stale = df[df["proposed"] == "stale"]
    ax.scatter(
        stale["x"], stale["y"], s=30, marker="x", color="#d62728", label="stale candidate", zorder=4
    )
    ax.scatter(
        [], [], s=160, marker="*", color="grey", edgecolors="black", label="cluster survivor"
    )
    ax.set_title(
        f"{plot_text(proposal.store.get('name'))}: {len(df)} units, "
        f"{len(proposal.clusters)} duplicate clusters (PCA of embeddings)"
    )
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    ax.legend(loc="best", fontsize=8)
    return fig


def similarity_histogram(proposal: Any, *, ax: Axes | None = None, bins: int = 60) -> Figure:
    """A review's pairwise cosine similarities (all pairs, or a sample on big stores), log
    counts, with the near-duplicate and contradiction thresholds."""
    sims = proposal.similarities if proposal.similarities is not None else np.zeros(0)
    fig, ax = plain_axes(ax, (9.0, 4.0))
    ax.hist(sims, bins=bins, range=(-0.2, 1.0), color="#7f7f7f")
    ax.set_yscale("log")
    near = proposal.thresholds.get("near_duplicate")
    low = proposal.thresholds.get("contradiction_min")
    if near is not None:
        above = int((sims >= near).sum())
        ax.axvline(
            near, color="#d62728", lw=2, label=f"near_duplicate {near:.2f} ({above} pairs above)"
        )
    if low is not None:
        ax.axvline(low, color="#ff7f0e", lw=1, ls="--", label=f"contradiction_min {low:.2f}")
    ax.set_xlabel("cosine similarity between two units")
    ax.set_ylabel("pairs (log)")
    ax.set_title(f"{len(sims):,} pairs")
    ax.legend(fontsize=8)
    return fig
