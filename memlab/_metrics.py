"""Every headline metric memlab reports, one :class:`Metric` record each (issue 33 item 3, issue
36 item 2; pydriller's one class per metric is the model).

A record says what a metric is (``definition``), in what ``unit``, under which ``group`` (the
terminal's comparison groups), the v2 doc's value where the doc gives one (``doc_value``, from
:data:`memlab.constants.DOC_VALUES`) and how it is obtained: a ``formula`` over other headline
fields (:class:`Ratio`, :class:`FirstOf`), or ``how`` in words when an audit computes it from
its tables. Every output reads the same record and the same value:

* the audits put a formula metric into their headline with :func:`value` (the elfmem audit's
  ``calls_per_surviving_block``, ``supersession_share``, ...), so ``Audit.headline``, its
  JSON, a report's ``metrics.json`` and the lake's ``headline`` table hold one number;
* the run index (:mod:`memlab.report._runs`) and the report's headline panel show
  ``definition`` and the doc's value beside it, and fill a ratio an older ``metrics.json``
  lacks with :func:`derive`, the same formula;
* the fleet lake's figures (:data:`FLEET`) are records too: :func:`column` reads a figure's
  own headline column and falls back to its formula only where the column is missing (a lake
  written before the audit recorded it).

Where two meanings of one word are both useful they have two names: ``supersession_share``
(superseded, of all archived: the doc's 41/42 for the demo) and ``superseded_of_created``
(superseded, of every block ever created).

Two records never share a label (:attr:`Metric.label`, what a reader knows a metric by): the
Agent File audit's ``max_over_limit_ratio`` (blocks over their limit only) was a second "limit
ratio" beside ``max_limit_ratio``; it is :data:`RETIRED`, and every kind reports
``max_limit_ratio`` (with ``n_blocks_over_limit`` counting the blocks over). One count has one
name too: the rows of a store's problems frame are ``problems`` in every kind (the Agent File,
Letta server and Claude Code memory audits' ``n_problems`` is :data:`RETIRED`).

Adding a metric is one :class:`Metric` in :data:`METRICS` (its records are in
:mod:`memlab._metrics_records`).

This module is the public face: import from here. The code lives in private siblings, imported
one way (types <- records <- values):

* :mod:`~memlab._metrics_types`: the record type (``Metric``) and its formulas (``Ratio``,
  ``FirstOf``), with ``is_number``;
* :mod:`~memlab._metrics_records`: the records (``METRICS``, ``RETIRED``, ``FLEET``,
  ``FINDINGS``) and what a name is (``definitions``, ``definition``, ``doc_value``,
  ``group_of``);
* :mod:`~memlab._metrics_values`: a metric's value (``value``, ``derive``, ``column``) and
  ``max_limit_ratio``.

Example::

    from memlab._metrics import METRICS, value
    METRICS["supersession_share"].definition
    value("supersession_share", {"archived_superseded": 41, "blocks_archived": 42})  # 0.976...
"""

from __future__ import annotations

from memlab._metrics_records import (
    FINDINGS,
    FLEET,
    METRICS,
    RETIRED,
    definition,
    definitions,
    doc_value,
    group_of,
)
from memlab._metrics_types import FirstOf, Metric, Ratio, is_number
from memlab._metrics_values import column, derive, max_limit_ratio, value

__all__ = [
    "Metric",
    "Ratio",
    "FirstOf",
    "METRICS",
    "RETIRED",
    "FLEET",
    "FINDINGS",
    "value",
    "derive",
    "column",
    "definitions",
    "definition",
    "doc_value",
    "group_of",
    "is_number",
    "max_limit_ratio",
]
