"""The figures of one store's audit (notebooks/01-audit.ipynb): an elfmem audit's tables
(archival causes, decay tiers against the clock, reinforcement concentration, token spend),
several stores in one figure (:func:`stores`), and a mutation log's events per week (a mem0
audit's ``churn``).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from memlab._escape import plot_text
from memlab.audits._base import Audit
from memlab.errors import MemlabError
from memlab.plots._base import constrained_axes, whole_counts

__all__ = [
    "archival_causes",
    "recency_curves",
    "reinforcement_lorenz",
    "token_spend",
    "event_churn",
    "stores",
]


_TIER_COLOURS = {
    "PERMANENT": "#1b4f72",
    "DURABLE": "#2e86c1",
    "STANDARD": "#f39c12",
    "EPHEMERAL": "#c0392b",
}


def _tables(source: Audit | Mapping[str, pd.DataFrame], *names: str) -> list[pd.DataFrame]:
    tables = source.tables if isinstance(source, Audit) else source
    missing = [n for n in names if n not in tables]
    if missing:
        raise MemlabError(
            f"this figure needs the audit table(s) {', '.join(missing)}",
            hint="pass the Audit of an elfmem database (memlab.audit(path))",
        )
    return [tables[n] for n in names]


def stores(
    draw: Any, sources: list[Any], *, panel_height: float = 1.6, width: float = 7.0
) -> Figure:
    """``draw(source, ax=...)`` for several stores in ONE figure, a panel per store, on one
    shared x scale (the union of the panels' ranges), so bars of different stores compare by
    length. ``draw`` is a per-store figure of this module (:func:`archival_causes`,
    :func:`token_spend`)."""
    if not sources:
        raise MemlabError("no store to draw")
    heights = [panel_height + 0.35 * _bars(s) for s in sources]
    fig = Figure(figsize=(width, sum(heights) + 0.4), layout="constrained")
    axes = fig.subplots(len(sources), 1, squeeze=False, height_ratios=heights)[:, 0]
    for source, ax in zip(sources, axes):
        draw(source, ax=ax)
    drawn = [ax for ax in axes if ax.axison]
    if drawn:
        lo = min(ax.get_xlim()[0] for ax in drawn)
        hi = max(ax.get_xlim()[1] for ax in drawn)
        for ax in drawn:
            ax.set_xlim(lo, hi)
    return fig


def _bars(source: Any) -> int:
    tables = source.tables if isinstance(source, Audit) else source
    reasons = tables.get("archive_reasons") if hasattr(tables, "get") else None
    return len(reasons) if reasons is not None else 4


def _name(source: Any) -> str:
    return f"\n{plot_text(source.store_name)}" if isinstance(source, Audit) else ""


def archival_causes(
    source: Audit | Mapping[str, pd.DataFrame], *, ax: Axes | None = None
) -> Figure:
    """Horizontal bars: archived blocks per ``archive_reason`` (doc §2.2)."""
    (reasons,) = _tables(source, "archive_reasons")
    fig, ax = constrained_axes(ax, (6.0, 0.6 * max(2, len(reasons)) + 1.2))
    if reasons.empty:
        ax.text(0.5, 0.5, "nothing archived", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    data = reasons.sort_values("count")
    counts = data["count"].astype("float64").to_numpy()
    reasons = data["archive_reason"].astype(str).to_list()
    bars = ax.barh(
        [plot_text(r) for r in reasons],
        counts,
        color=["#c0392b" if r == "superseded" else "#7f8c8d" for r in reasons],
    )
    total = counts.sum()
    for bar, n in zip(bars, counts):
        ax.annotate(
            f"{int(n)} ({n / total:.0%})",
            (bar.get_width(), bar.get_y() + bar.get_height() / 2),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
        )
    ax.set_xlim(0, counts.max() * 1.25)
    whole_counts(ax.xaxis)
    ax.set_xlabel("archived blocks")
    ax.set_title(f"Why blocks were archived ({int(total)} in all){_name(source)}", fontsize=10)
    return fig


def recency_curves(
    source: Audit | Mapping[str, pd.DataFrame], *, ax: Axes | None = None, blocks: bool = True
) -> Figure:
    """Recency exp(−λ·h) per decay tier against active hours, with this instance's clock.

    The vertical line is the instance's whole lifetime on the session clock; the dashed line
    is the prune threshold below which curate() archives. ``blocks=True`` adds each live
    block at its own hours-since-reinforcement and recency.
    """
    tiers, clock = _tables(source, "recency_tiers", "clock")
    hours = float(clock["total_active_hours"].iloc[0])
    prune = float(clock["prune_threshold"].iloc[0])
    fig, ax = constrained_axes(ax, (7.5, 4.5))
    longest = float(tiers["hours_to_prune"].max())
    lo = min(0.01, hours / 10) if hours > 0 else 0.01
    x = np.logspace(math.log10(lo), math.log10(longest * 3), 400)
    for tier, lam in zip(tiers["tier"].astype(str), tiers["decay_lambda"].astype(float)):
        ax.plot(
            x, np.exp(-lam * x), color=_TIER_COLOURS.get(tier, "#555"), label=f"{tier} (λ={lam:g})"
        )
        if math.isfinite(hours) and hours > 0:
            ax.plot([hours], [math.exp(-lam * hours)], "o", color=_TIER_COLOURS.get(tier, "#555"))
    if blocks and "recency_blocks" in (source.tables if isinstance(source, Audit) else source):
        (per_block,) = _tables(source, "recency_blocks")
        pts = per_block[per_block["hours_since"] > 0]
        if len(pts):
            ax.scatter(
                pts["hours_since"],
                pts["recency"],
                s=8,
                color="#555",
                alpha=0.35,
                label="live blocks now",
                zorder=3,
            )
    ax.axhline(prune, color="#7f8c8d", linestyle="--", linewidth=1)
    ax.annotate(
        f"prune threshold {prune:g}",
        (x[-1], prune),
        xytext=(-2, 3),
        textcoords="offset points",
        color="#7f8c8d",
        fontsize=8,
        ha="right",
    )
    if math.isfinite(hours) and hours > 0:
        ax.axvline(hours, color="black", linewidth=1)
        ax.annotate(
            f"this instance: {hours:.2f} active h",
            (hours, 0.02),
            xytext=(4, 0),
            textcoords="offset points",
            fontsize=8,
            rotation=90,
            va="bottom",
        )
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("active hours since last reinforcement (session clock)")
    ax.set_ylabel("recency")
    ax.set_title(f"Decay tiers against the instance's clock{_name(source)}", fontsize=10)
    ax.legend(loc="center left", fontsize=8)
    return fig


def reinforcement_lorenz(
    source: Audit | Mapping[str, pd.DataFrame], *, ax: Axes | None = None
) -> Figure:
    """Lorenz curve of reinforcement counts over live blocks, with its Gini (doc §2.5)."""
    (curve,) = _tables(source, "lorenz")
    fig, ax = constrained_axes(ax, (5.0, 5.0))
    x = curve["share_of_blocks"].to_numpy(dtype=float)
    y = curve["share_of_reinforcement"].to_numpy(dtype=float)
    ax.plot([0, 1], [0, 1], color="#7f8c8d", linestyle="--", linewidth=1, label="equal")
    ax.plot(x, y, color="#c0392b", label="live blocks")
    ax.fill_between(x, y, x, color="#c0392b", alpha=0.15)
    # Gini = 1 - 2 x area under the Lorenz curve (trapezoids)
    g = 1.0 - float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]))) if len(x) > 1 else float("nan")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("share of blocks (least reinforced first)")
    ax.set_ylabel("share of all reinforcement")
    ax.set_title(f"Reinforcement concentration, Gini {g:.2f}{_name(source)}", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def token_spend(source: Audit | Mapping[str, pd.DataFrame], *, ax: Axes | None = None) -> Figure:
    """LLM tokens spent against the size of what they maintain (log scale; doc §2.1)."""
    (cost,) = _tables(source, "cost")
    values = dict(zip(cost["metric"].astype(str), cost["value"].astype(float)))
    bars = [
        ("LLM input tokens", values.get("llm_input_tokens"), "#c0392b"),
        ("LLM output tokens", values.get("llm_output_tokens"), "#e67e22"),
        ("live corpus tokens", values.get("live_tokens"), "#2e86c1"),
        ("live summary tokens", values.get("summary_tokens"), "#5dade2"),
    ]
    bars = [(label, v, c) for label, v, c in bars if v is not None and math.isfinite(v) and v > 0]
    fig, ax = constrained_axes(ax, (7.0, 3.2))
    if not bars:
        ax.text(
            0.5, 0.5, "no token usage recorded", ha="center", va="center", transform=ax.transAxes
        )
        ax.set_axis_off()
        return fig
    labels, vals, colours = zip(*bars)
    drawn = ax.barh(list(labels)[::-1], list(vals)[::-1], color=list(colours)[::-1])
    for bar, v in zip(drawn, list(vals)[::-1]):
        ax.annotate(
            f"{v:,.0f}",
            (bar.get_width(), bar.get_y() + bar.get_height() / 2),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    ax.set_xscale("log")
    # log bars need a fixed origin: a decade below the smallest, so lengths compare honestly
    ax.set_xlim(10 ** math.floor(math.log10(min(vals)) - 1), max(vals) * 8)
    ax.set_xlabel("tokens (log scale; corpus and summaries as chars/4)")
    ratio = values.get("input_per_corpus_token")
    calls = values.get("llm_calls")
    extra = []
    if ratio is not None and math.isfinite(ratio):
        extra.append(f"{ratio:.1f}× input per corpus token")
    if calls is not None and math.isfinite(calls):
        extra.append(f"{calls:,.0f} calls")
    ax.set_title(
        "Token spend vs live text" + (f": {', '.join(extra)}" if extra else "") + _name(source),
        fontsize=10,
    )
    return fig


def event_churn(audit: Audit, *, ax: Axes | None = None) -> Figure:
    """A mutation log's events per week by type (a mem0 audit's ``churn`` table: ADD, UPDATE,
    DELETE), stacked bars; events without a time are left out (the audit counts them)."""
    churn = audit.tables["churn"].dropna(subset=["week"])
    fig, ax = constrained_axes(ax, (7.0, 2.4))
    if churn.empty:
        ax.text(0.5, 0.5, "no timed events", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    weeks = [plot_text(str(w)[:10]) for w in churn["week"]]
    bottom = [0] * len(churn)
    for event, colour in (("ADD", "#2e7d32"), ("UPDATE", "#f9a825"), ("DELETE", "#c62828")):
        ax.bar(weeks, churn[event], bottom=bottom, color=colour, label=event)
        bottom = [b + int(v) for b, v in zip(bottom, churn[event])]
    whole_counts(ax.yaxis)
    ax.set_ylabel("events")
    ax.legend(fontsize=8, frameon=False)
    ax.set_title(f"Events per week: {plot_text(audit.store_name)}", fontsize=10)
    return fig
