"""Figures the notebooks and reports share: audit figures take an Audit (or its tables),
``outcome_map`` and ``fitness_profile`` a simulation run, ``review_items``, ``cluster_map`` and
``similarity_histogram`` a review Proposal. This is memlab's one figure package: the notebooks
and the report index draw through it, and no module outside ``memlab/plots/`` imports matplotlib
(tests/test_usage_rules.py).

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot, so nothing
opens a window, nothing needs a display, and figures are not kept alive by pyplot's registry.
(``memfs_prompt_size`` and ``memfs_commits`` let pandas' plotting draw onto such a figure, as
the notebook drew them before; pandas imports pyplot to do so, but the figure is not pyplot's.)
Pass ``ax=`` to draw into an existing axes instead (the figure returned is then the one ``ax`` is
on: ``ax.figure``, or its root figure when ``ax`` is in a subfigure).
Text from a store (a name, a reason, a file path) reaches a figure only through
:func:`memlab._escape.plot_text`: matplotlib never reads it as mathtext.

The figures live in private modules, one per reader: ``_audit`` (notebooks/01-audit),
``_memfs`` (02-memfs-audit), ``_sim`` (04-simulation), ``_review`` (05-review), ``_fleet``
(06-fleet), ``_trends`` (the report index), all on ``_base`` (axes, ticks, :func:`show`). Import
them from here: ``__all__`` below is the door.

Example::

    a = memlab.audit("data/demo/elfmem-demo.db", as_of="2026-08-04")
    memlab.plots.recency_curves(a).savefig("recency.png")
"""

from __future__ import annotations

from memlab.plots._audit import (
    archival_causes,
    event_churn,
    recency_curves,
    reinforcement_lorenz,
    stores,
    token_spend,
)
from memlab.plots._base import show
from memlab.plots._fleet import fleet_distributions
from memlab.plots._memfs import memfs_churn, memfs_commits, memfs_prompt_size, memfs_sizes
from memlab.plots._review import cluster_map, review_items, similarity_histogram
from memlab.plots._sim import VERDICT_COLOURS, fitness_profile, outcome_map
from memlab.plots._trends import trend_lines

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
    "VERDICT_COLOURS",
    "review_items",
    "cluster_map",
    "similarity_histogram",
    "fleet_distributions",
    "trend_lines",
    "stores",
    "show",
]
