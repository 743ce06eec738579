"""The figures of a memfs repository's audit (notebooks/02-memfs-audit.ipynb): bytes per
domain over commits, churn per file and week, the system prompt's size, commits per week by
author kind.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from memlab._escape import plot_text
from memlab.audits._base import Audit
from memlab.plots._base import constrained_axes, plain_axes, whole_counts

__all__ = ["memfs_sizes", "memfs_churn", "memfs_prompt_size", "memfs_commits"]


def memfs_sizes(audit: Audit, *, memory: bool = True, ax: Axes | None = None) -> Figure:
    """A memfs repository's bytes per domain at each commit: stacked areas for memory files,
    steps for the other files (``memory=False``); domains are the repository's own folders."""
    from memlab.kinds._memfs._audit import size_over_time

    sizes = size_over_time(audit, memory=memory)
    fig, ax = constrained_axes(ax, (10.0, 4.0 if memory else 2.5))
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
    fig, ax = constrained_axes(ax, (10.0, 0.3 * max(1, len(churn)) + 1.5))
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


def memfs_prompt_size(audit: Audit, *, ax: Axes | None = None) -> Figure:
    """A memfs repository's system prompt size (characters) at each commit, as steps."""
    history = audit["prompt_history"]
    fig, ax = plain_axes(ax, (10.0, 3.0))
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
    fig, ax = plain_axes(ax, (10.0, 3.5))
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
    whole_counts(ax.yaxis)
    # beside the bars, never over the last one
    ax.legend(title="author kind", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
