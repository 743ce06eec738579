"""A fleet run's stores on Dask ``distributed`` (:func:`run_dask`): a ``LocalCluster`` of
processes sized to the machine, or an existing scheduler, fed tasks that are batches of stores
(:func:`batch_size`: one store each for the first two tasks per worker, then as many as take
about :data:`~memlab.constants.FLEET_TASK_SECONDS` at the per-store seconds measured so far).

Example::

    memlab.lake.batch_size(0.5)  # stores per task at half a second a store
"""

from __future__ import annotations

import os
from pathlib import Path

from memlab._escape import terminal_line
from memlab.constants import FLEET_MAX_BATCH, FLEET_TASK_SECONDS
from memlab.errors import FleetError
from memlab.lake._lake import store_id, write_failure
from memlab.lake._run import MESSAGE_CHARS, run_batch

__all__ = ["run_dask", "batch_size"]


def run_dask(
    args, staging, date, as_of_text, scheduler, workers, rows, bar, sizes: list[int]
) -> int | str:
    import logging

    from memlab.errors import require

    require("distributed", "fleet", feature="memlab fleet", package="dask[distributed]")
    from dask.distributed import Client, LocalCluster

    cluster = None
    n_default = workers or os.cpu_count() or 1
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise FleetError(
                    f"cannot reach the Dask scheduler at {scheduler}: "
                    f"{terminal_line(exc, MESSAGE_CHARS)}"
                ) from exc
            used: int | str = scheduler
        else:
            import dask

            n = workers or os.cpu_count() or 1
            # Dask's statistical profiler samples every worker thread's stack each 10 ms for the
            # dashboard (which a fleet run does not serve); measured here it cost a worker ~5%.
            try:
                with dask.config.set({"distributed.worker.profile.enabled": False}):
                    cluster = LocalCluster(
                        n_workers=n,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        silence_logs=logging.ERROR,
                    )
            except RuntimeError as exc:  # "Nanny failed to start": the workers never came up
                raise FleetError(
                    "the local Dask cluster's worker processes did not start",
                    hint="from a script, call memlab.fleet under `if __name__ == '__main__':` "
                    "(each worker process imports the script first)",
                ) from exc
            client = Client(cluster)
            used = n
        with client:
            _submit_batches(
                client,
                args,
                staging,
                date,
                as_of_text,
                rows,
                bar,
                workers=len(client.scheduler_info().get("workers", {})) or n_default,
                sizes=sizes,
            )
    finally:
        if cluster is not None:
            cluster.close()
    return used


def batch_size(seconds_per_store: float | None) -> int:
    """Stores per task: about :data:`~memlab.constants.FLEET_TASK_SECONDS` of work at the
    per-store seconds measured so far (1 before anything is measured), at most
    :data:`~memlab.constants.FLEET_MAX_BATCH`."""
    if not seconds_per_store or seconds_per_store <= 0:
        return 1
    return max(1, min(FLEET_MAX_BATCH, round(FLEET_TASK_SECONDS / seconds_per_store)))


def _submit_batches(
    client, args, staging, date, as_of_text, rows, bar, *, workers: int, sizes: list[int]
) -> None:
    """Keep two tasks per worker in flight; each new task is a batch sized by the per-store
    seconds measured on the stores done so far. Each task's rows are written by the worker
    into the staging folder; only a few scalars per store come back."""
    from dask.distributed import as_completed

    pending = list(args)
    done_seconds, done_stores = 0.0, 0
    batches: dict[str, list] = {}
    counter = 0

    def submit(size: int):
        nonlocal counter
        chunk = pending[:size]
        del pending[:size]
        sizes.append(len(chunk))
        counter += 1
        fut = client.submit(
            run_batch, chunk, str(staging), date, as_of_text, f"t{counter}", pure=False
        )
        batches[fut.key] = chunk
        return fut

    first = [submit(1) for _ in range(min(len(pending), 2 * max(1, workers)))]
    ac = as_completed(first)
    for fut in ac:
        chunk = batches.pop(fut.key)
        try:
            got = fut.result()
        except Exception as exc:  # the worker died: still a row per store, not an abort
            got = []
            message = terminal_line(f"worker failed: {exc}", MESSAGE_CHARS)
            for path, _label, _key in chunk:
                sid = store_id(path)
                for old in staging.glob(f"**/{sid}.parquet"):  # what it staged before dying
                    old.unlink(missing_ok=True)
                f = write_failure(
                    staging,
                    date,
                    sid=sid,
                    path=path,
                    kind=None,
                    error_class=type(exc).__name__,
                    message=message,
                )
                got.append(
                    {
                        "store_id": sid,
                        "path": path,
                        "kind": None,
                        "status": "failed",
                        "error_class": type(exc).__name__,
                        "message": message,
                        "seconds": None,
                        "tables": [str(Path(f).parent)],
                    }
                )
        fut.release()
        rows.extend(got)
        measured = [r["seconds"] for r in got if r.get("seconds") is not None]
        done_seconds += sum(measured)
        done_stores += len(measured)
        bar.update(len(chunk))
        if pending:
            ac.add(submit(batch_size(done_seconds / done_stores if done_stores else None)))
