"""Figures the notebooks and reports share: audit figures take an Audit (or its tables),
``outcome_map`` and ``fitness_profile`` a simulation run, ``review_items``, ``cluster_map`` and
``similarity_histogram`` a review Proposal. This is memlab's one figure module: the notebooks
and the report index draw through it, and no other module imports matplotlib
(tests/test_usage_rules.py).

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot, so nothing
opens a window, nothing needs a display, and figures are not kept alive by pyplot's registry.
(``memfs_prompt_size`` and ``memfs_commits`` let pandas' plotting draw onto such a figure, as
the notebook drew them before; pandas imports pyplot to do so, but the figure is not pyplot's.)
Pass ``ax=`` to draw into an existing axes instead (the figure returned is then the one ``ax`` is
on: ``ax.figure``, or its root figure when ``ax`` is in a subfigure).
Text from a store (a name, a reason, a file path) reaches a figure only through
:func:`memlab._escape.plot_text`: matplotlib never reads it as mathtext.

Example::

    a = memlab.audit("data/demo/elfmem-demo.db", as_of="2026-08-04")
    memlab.plots.recency_curves(a).savefig("recency.png")
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure

from memlab._escape import plot_text
from memlab.audits._base import Audit
from memlab.errors import MemlabError

__all__ = [
    "archival_causes",
    "recency_curves",
    "reinforcement_lorenz",
    "token_spend",
    "memfs_sizes",
    "memfs_churn",
    "memfs_prompt_size",
    "memfs_commits",
    "event_churn",
    "outcome_map",
    "fitness_profile",
    "review_items",
    "cluster_map",
    "similarity_histogram",
    "fleet_distributions",
    "trend_lines",
    "stores",
    "show",
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


def _figure_of(ax: Axes) -> Figure:
    """The figure ``ax`` is on; for an axes in a subfigure, its root figure (the one that is
    shown and saved: a SubFigure has no ``savefig``)."""
    fig = ax.figure
    return fig.figure if isinstance(fig, SubFigure) else fig


def _axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return _figure_of(ax), ax
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.add_subplot()


def _plain_axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Figure, Axes]:
    """Like :func:`_axes` but with matplotlib's default subplot margins (no constrained
    layout): the layout these figures had when the notebooks drew them with pyplot."""
    if ax is not None:
        return _figure_of(ax), ax
    fig = Figure(figsize=size)
    return fig, fig.add_subplot()


def _whole_counts(axis: Any) -> None:
    """Ticks at whole numbers only, on an axis of counts (no "2.5 blocks")."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


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
    fig, ax = _axes(ax, (6.0, 0.6 * max(2, len(reasons)) + 1.2))
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
    _whole_counts(ax.xaxis)
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
    fig, ax = _axes(ax, (7.5, 4.5))
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
    fig, ax = _axes(ax, (5.0, 5.0))
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
    fig, ax = _axes(ax, (7.0, 3.2))
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


def memfs_sizes(audit: Audit, *, memory: bool = True, ax: Axes | None = None) -> Figure:
    """A memfs repository's bytes per domain at each commit: stacked areas for memory files,
    steps for the other files (``memory=False``); domains are the repository's own folders."""
    from memlab.kinds._memfs._audit import size_over_time

    sizes = size_over_time(audit, memory=memory)
    fig, ax = _axes(ax, (10.0, 4.0 if memory else 2.5))
    what = "Memory files" if memory else "Other files (not memory)"
    if sizes.empty:
        ax.text(0.5, 0.5, f"{what.lower()}: none", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    labels = [plot_text(c) for c in sizes.columns]
    index = pd.DatetimeIndex(sizes.index)
    x = (index.tz_convert(None) if index.tz is not None else index).to_numpy()
    if memory:
        ax.stackplot(x, sizes.to_numpy(dtype=float).T, labels=labels, linewidth=0)
    else:
        for col, label in zip(sizes.columns, labels):
            ax.step(x, sizes[col].to_numpy(dtype=float), where="post", label=label)
    ax.set_xlabel("commit time")
    ax.set_ylabel("bytes")
    ax.set_title(f"{what}: size by domain (bytes)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def memfs_churn(audit: Audit, *, top: int = 25, ax: Axes | None = None) -> Figure:
    """Lines changed per memory file (rows, the ``top`` most churned) and week (columns)."""
    from memlab.kinds._memfs._audit import churn_matrix

    churn = churn_matrix(audit, top=top)
    fig, ax = _axes(ax, (10.0, 0.3 * max(1, len(churn)) + 1.5))
    if churn.empty:
        ax.text(0.5, 0.5, "no churn", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    im = ax.imshow(churn.to_numpy(), aspect="auto", cmap="Reds")
    ax.set_yticks(range(len(churn)), [plot_text(p) for p in churn.index])
    weeks = [w.strftime("%Y-%m-%d") if hasattr(w, "strftime") else w for w in churn.columns]
    ax.set_xticks(range(churn.shape[1]), [plot_text(w) for w in weeks], rotation=45, ha="right")
    fig.colorbar(im, ax=ax, label="lines changed")
    ax.set_title("Churn per memory file and week", fontsize=10)
    return fig


def event_churn(audit: Audit, *, ax: Axes | None = None) -> Figure:
    """A mutation log's events per week by type (a mem0 audit's ``churn`` table: ADD, UPDATE,
    DELETE), stacked bars; events without a time are left out (the audit counts them)."""
    churn = audit.tables["churn"].dropna(subset=["week"])
    fig, ax = _axes(ax, (7.0, 2.4))
    if churn.empty:
        ax.text(0.5, 0.5, "no timed events", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    weeks = [plot_text(str(w)[:10]) for w in churn["week"]]
    bottom = [0] * len(churn)
    for event, colour in (("ADD", "#2e7d32"), ("UPDATE", "#f9a825"), ("DELETE", "#c62828")):
        ax.bar(weeks, churn[event], bottom=bottom, color=colour, label=event)
        bottom = [b + int(v) for b, v in zip(bottom, churn[event])]
    _whole_counts(ax.yaxis)
    ax.set_ylabel("events")
    ax.legend(fontsize=8, frameon=False)
    ax.set_title(f"Events per week: {plot_text(audit.store_name)}", fontsize=10)
    return fig


def memfs_prompt_size(audit: Audit, *, ax: Axes | None = None) -> Figure:
    """A memfs repository's system prompt size (characters) at each commit, as steps."""
    history = audit["prompt_history"]
    fig, ax = _plain_axes(ax, (10.0, 3.0))
    if history.empty:
        ax.text(0.5, 0.5, "no prompt history", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    history.plot(
        x="committed_at",
        y="prompt_chars",
        drawstyle="steps-post",
        legend=False,
        title="Prompt size (chars) over commits",
        ax=ax,
    )
    ax.set_xlabel("commit time")
    return fig


def memfs_commits(audit: Audit, *, ax: Axes | None = None) -> Figure:
    """A memfs repository's commits per week, stacked by author kind."""
    from memlab.kinds._memfs._audit import commits_by_kind

    by_kind = commits_by_kind(audit)
    by_kind = by_kind.loc[:, by_kind.sum(axis=0) > 0]  # the legend lists only what is drawn
    fig, ax = _plain_axes(ax, (10.0, 3.5))
    if by_kind.empty:
        ax.text(0.5, 0.5, "no commits", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    # weeks as their start dates, one label per bar (left as dates, pandas' time-series axis
    # put its own ticks under the bars, which relabelling then mislabelled)
    weeks = pd.Index([d.strftime("%Y-%m-%d") for d in by_kind.index], name=by_kind.index.name)
    by_kind.set_axis(weeks).plot.bar(stacked=True, title="Commits per week by author kind", ax=ax)
    ax.set_xticks(range(len(weeks)), weeks, rotation=45, ha="right")
    ax.set_ylabel("commits")
    _whole_counts(ax.yaxis)
    # beside the bars, never over the last one
    ax.legend(title="author kind", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


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
    fig, ax = _axes(ax, (1.0 + 0.9 * max(3, len(cols)), 1.2 + 0.45 * max(2, len(rows))))
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
    fig, ax = _axes(ax, (7.5, 3.6))
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
        fig = _figure_of(ax)
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
    _whole_counts(ax.xaxis)
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
    fig, ax = _plain_axes(ax, (9.0, 6.0))
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
    fig, ax = _plain_axes(ax, (9.0, 4.0))
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
        _whole_counts(ax.yaxis)
    return fig


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
                from matplotlib.ticker import MaxNLocator

                ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xticks(x, labels, fontsize=9, rotation=30 if len(dates) > 4 else 0)
        ax.set_xlim(-0.5, len(dates) - 0.5)
        ax.tick_params(axis="y", labelsize=9)
        ax.grid(axis="y", color="#e5e8e8", linewidth=0.8)
        ax.set_title(plot_text(metric), fontsize=10)
    if title:
        fig.suptitle(plot_text(title), fontsize=11)
    return fig


def show(fig: Figure, *, dpi: int = 110) -> None:
    """Display ``fig`` in a notebook as an embedded PNG, whatever the matplotlib backend.

    Figures here are built without pyplot, so the inline backend does not know them; this also
    keeps headless runs (papermill, ``MPLBACKEND=Agg``) rendering the same images.
    """
    import io

    from IPython.display import Image, display

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    display(Image(data=buf.getvalue(), format="png"))
