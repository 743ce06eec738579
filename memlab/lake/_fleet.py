"""Running a fleet: :func:`fleet` (every store under folders or in a manifest, on Dask or in
this process) and :func:`export_parquet` (a few stores, in this process), each scanning the
stores, running them in batches into a staging folder and compacting it into the lake's
partitions for the run date (:func:`memlab.lake._layout.compact`).

Example::

    r = memlab.fleet(["~/agents"], out="reports/fleet", workers=2)
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Iterable, cast

import pandas as pd

from memlab._escape import terminal_line
from memlab.constants import FLEET_MAX_BATCH
from memlab.errors import FleetError
from memlab.lake._dask import run_dask
from memlab.lake._lake import write_failure
from memlab.lake._layout import compact, latest_manifest, new_run_id, staging_dir, versions
from memlab.lake._paths import check_lake
from memlab.lake._result import FleetResult, stores_frame
from memlab.lake._run import MESSAGE_CHARS, run_batch
from memlab.lake._scan import walk_roots
from memlab.sources.discover import STORE_WALK_DEPTH

__all__ = ["fleet", "export_parquet"]


def _progress(total: int, enabled: bool | None):
    from memlab.progress import bar

    return bar(total=total, desc="fleet", unit="store", disable=enabled is False)


def _prepare(out: str | Path, run_date: str | None, as_of: Any) -> tuple[Path, str, str | None]:
    lake = Path(out).expanduser()
    if lake.exists() and not lake.is_dir():
        raise FleetError("the lake destination exists and is not a folder", path=lake)
    lake.mkdir(parents=True, exist_ok=True)
    check_lake(lake)  # no symlinked folder inside it: a run writes and deletes only in the lake
    date = run_date or _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    try:
        _dt.date.fromisoformat(date)
    except ValueError as exc:
        raise FleetError(f"run_date {date!r} is not YYYY-MM-DD") from exc
    as_of_text = None if as_of is None else str(pd.Timestamp(as_of).isoformat())
    return lake, date, as_of_text


def fleet(
    roots: Iterable[str | Path] | str | Path | None = None,
    *,
    out: str | Path,
    manifest: str | Path | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    as_of: Any = None,
    run_date: str | None = None,
    reuse: bool = True,
    progress: bool | None = None,
) -> FleetResult:
    """Audit every store under ``roots`` (and/or in ``manifest``) into the lake at ``out``.

    ``workers``: processes of the local Dask cluster (default: the machine's cores);
    ``workers=0`` runs every store in this process, one after another, without Dask.
    ``scheduler``: the address of an existing Dask scheduler (``tcp://host:8786``); its workers
    must see the same paths and the lake folder. ``as_of`` goes to every audit; ``run_date``
    (default today, UTC) names the partition. ``reuse=False`` reads every store again.

    Example::

        r = memlab.fleet(["~/agents"], out="reports/fleet", workers=2)
        r.headline().sort_values("max_limit_ratio").tail()
    """
    return _run(
        roots,
        out=out,
        manifest=manifest,
        scheduler=scheduler,
        workers=workers,
        as_of=as_of,
        run_date=run_date,
        reuse=reuse,
        progress=progress,
        replace_day=True,
    )


def _run(
    roots, *, out, manifest, scheduler, workers, as_of, run_date, reuse, progress, replace_day: bool
) -> FleetResult:
    import shutil
    import time

    stores, skipped = walk_roots(roots, manifest=manifest, max_depth=STORE_WALK_DEPTH)
    skipped = skipped[~skipped["store_id"].isin(stores["store_id"])].reset_index(drop=True)
    lake, date, as_of_text = _prepare(out, run_date, as_of)
    started = time.perf_counter()
    started_at = _dt.datetime.now(_dt.timezone.utc).isoformat()
    run_id = new_run_id()
    staging = staging_dir(lake, run_id)
    staging.mkdir()
    previous = latest_manifest(lake) if reuse else None
    prev_keys = (
        {}
        if previous is None
        else {sid: e.get("key") for sid, e in previous["stores"].items() if e.get("status") == "ok"}
    )
    args = [
        (str(p), None if pd.isna(lbl) else str(lbl), prev_keys.get(sid))
        for p, lbl, sid in zip(stores["path"], stores["label"], stores["store_id"])
    ]
    rows: list[dict[str, Any]] = []
    sizes: list[int] = []
    bar = _progress(len(args), progress)
    try:
        if workers == 0 and scheduler is None:
            used: int | str = "serial"
            for start in range(0, len(args), FLEET_MAX_BATCH):
                chunk = args[start : start + FLEET_MAX_BATCH]
                sizes.append(len(chunk))
                for row in run_batch(chunk, str(staging), date, as_of_text, f"s{start}"):
                    rows.append(row)
                bar.update(len(chunk))
        else:
            used = run_dask(args, staging, date, as_of_text, scheduler, workers, rows, bar, sizes)
        bar.close()
        for row in rows:  # a reused store's kind is the one the last run recorded
            if row["status"] == "reused":
                row["kind"] = cast(dict, previous)["stores"][row["store_id"]].get("kind")
        entries = list(rows)
        for rec in skipped.itertuples():
            f = write_failure(
                staging,
                date,
                sid=rec.store_id,
                path=rec.path,
                kind=None,
                error_class="Skipped",
                message=terminal_line(rec.reason, MESSAGE_CHARS),
            )
            entries.append(
                {
                    "store_id": rec.store_id,
                    "path": rec.path,
                    "status": "skipped",
                    "error_class": "Skipped",
                    "tables": [str(Path(f).parent)],
                }
            )
        info = {
            "started_at": started_at,
            "as_of": as_of_text,
            "versions": versions(),
            "reuse": bool(reuse),
            "workers": str(used),
            "batches": sizes,
        }
        files, gone = compact(
            lake,
            date,
            run_id,
            stores=entries,
            previous=previous,
            keep_others=not replace_day,
            info=info,
        )
    finally:
        bar.close()
        shutil.rmtree(staging, ignore_errors=True)
    result = FleetResult(
        out=lake,
        run_date=date,
        stores=stores_frame(rows),
        seconds=time.perf_counter() - started,
        workers=used,
        skipped=skipped,
        run_id=run_id,
        files=files,
        batches=sizes,
    )
    if replace_day:
        result.superseded = gone
    return result


def export_parquet(
    paths: Iterable[str | Path] | str | Path,
    *,
    out: str | Path,
    as_of: Any = None,
    run_date: str | None = None,
    reuse: bool = True,
) -> FleetResult:
    """Write every frame, the audit headline and the problems of each store to a Parquet lake,
    in this process (no Dask). Same layout as :func:`fleet`. It adds (or replaces) the given
    stores' files in the run date's partitions and removes no other store's.

    Example::

        memlab.export_parquet(["data/demo/elfmem-demo.db"], out="reports/lake")
    """
    return _run(
        paths,
        out=out,
        manifest=None,
        scheduler=None,
        workers=0,
        as_of=as_of,
        run_date=run_date,
        reuse=reuse,
        progress=False,
        replace_day=False,
    )
