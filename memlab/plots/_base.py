"""What every figure module of :mod:`memlab.plots` shares: where a figure's axes come from
(a new figure, built without pyplot, or the caller's ``ax=``), whole-number ticks on an axis of
counts, and :func:`show` for a notebook.
"""

from __future__ import annotations

from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure

__all__ = ["figure_of", "constrained_axes", "plain_axes", "whole_counts", "show"]


def figure_of(ax: Axes) -> Figure:
    """The figure ``ax`` is on; for an axes in a subfigure, its root figure (the one that is
    shown and saved: a SubFigure has no ``savefig``)."""
    fig = ax.figure
    return fig.figure if isinstance(fig, SubFigure) else fig


def constrained_axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Figure, Axes]:
    """A new figure of ``size`` with one axes, in constrained layout; or ``ax`` and its figure
    when the caller passes one."""
    if ax is not None:
        return figure_of(ax), ax
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.add_subplot()


def plain_axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Figure, Axes]:
    """Like :func:`constrained_axes` but with matplotlib's default subplot margins (no constrained
    layout): the layout these figures had when the notebooks drew them with pyplot."""
    if ax is not None:
        return figure_of(ax), ax
    fig = Figure(figsize=size)
    return fig, fig.add_subplot()


def whole_counts(axis: Any) -> None:
    """Ticks at whole numbers only, on an axis of counts (no "2.5 blocks")."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


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
