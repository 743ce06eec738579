"""Fleet audit: many stores, each loaded and audited on its own, on Dask, into a Parquet lake.

``fleet(roots)`` finds every store under the roots (or takes a manifest), runs
load → audit → write for each store independently on a Dask ``distributed`` cluster
(a ``LocalCluster`` of processes sized to the machine by default, or an existing scheduler),
in tasks that are batches of stores: one store each for the first two tasks per worker, then
as many as take about :data:`~memlab.constants.FLEET_TASK_SECONDS` at the per-store seconds
measured so far (at most :data:`~memlab.constants.FLEET_MAX_BATCH`); the progress bar counts
stores done of the total, with an ETA. It writes every frame of every store, the audit headline and
the problems to a partitioned
Parquet lake: a few files per table, store kind and run date, and a manifest per run date
(see :mod:`memlab.lake._layout`). A store that fails is a row in ``failures``, never an aborted
run. A store whose files have not changed since the last run (the same reuse key in that run's
manifest) is not read again: its rows are carried from the last run's files into this run's.

Runs on one date: the lake for run date D is the latest ``fleet`` run's view of its stores. A
fleet run writes every partition of D anew (this run's stores only) and then removes the files
D's partitions held before, so a store deleted or renamed since an earlier run that day is no
longer in D's view; it is named in :attr:`FleetResult.superseded` and the summary. Only
Parquet files in the lake's own table folders under ``run_date=D`` are removed, never anything
outside the lake folder, and earlier run dates are never touched. ``export_parquet`` adds or
replaces the stores it is given and carries every other store of D: it removes none.

Entries the folder walk does not open (a symbolic link, a FIFO, a socket or device file) are
not silently dropped: each is a row of :attr:`FleetResult.skipped` and of the lake's
``failures`` table (``error_class`` ``"Skipped"``, the reason as ``message``), and the summary
counts them.

``export_parquet(paths, out)`` writes the same lake for a few stores, in this process.

This module is the public face: import from here. The code lives in private siblings, imported
one way (paths <- layout <- lake <- run <- scan, result, dask <- fleet; summary and sample
apart):

* :mod:`~memlab.lake._scan`: finding the stores (``scan``, ``skipped_entries``);
* :mod:`~memlab.lake._result`: what a run did (``FleetResult``), read back from a lake
  (``read_fleet``), and ``is_lake``;
* :mod:`~memlab.lake._dask`: the stores on Dask, in batches (``batch_size``);
* :mod:`~memlab.lake._fleet`: the runs (``fleet``, ``export_parquet``);
* :mod:`~memlab.lake._lake`: each store's files and reading tables back (``read_lake``,
  ``lake_tables``, ``store_id``); :mod:`~memlab.lake._layout`: partitions, manifests and
  compaction; :mod:`~memlab.lake._paths`: the lake's folders checked; :mod:`~memlab.lake._run`:
  one batch of stores on a worker;
* :mod:`~memlab.lake._summary`: the fleet figures (``fleet_metrics``, ``FLEET_METRICS``,
  ``typicality``) and the summary; :mod:`~memlab.lake._sample`: ``make_sample_fleet``.

Example::

    result = memlab.fleet(["data/fleet"], out="reports/fleet")
    print(result.summary())
    memlab.read_lake("reports/fleet", "headline")
"""

from __future__ import annotations

from memlab.errors import FleetError
from memlab.lake._dask import batch_size
from memlab.lake._fleet import export_parquet, fleet
from memlab.lake._lake import lake_tables, read_lake, store_id
from memlab.lake._result import FleetResult, is_lake, read_fleet
from memlab.lake._sample import make_sample_fleet
from memlab.lake._scan import scan, skipped_entries
from memlab.lake._summary import FLEET_METRICS, fleet_metrics, typicality

__all__ = [
    "fleet",
    "read_fleet",
    "is_lake",
    "export_parquet",
    "scan",
    "read_lake",
    "lake_tables",
    "skipped_entries",
    "fleet_metrics",
    "typicality",
    "FLEET_METRICS",
    "batch_size",
    "make_sample_fleet",
    "FleetResult",
    "FleetError",
    "store_id",
]
