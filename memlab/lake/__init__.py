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

Example::

    result = memlab.fleet(["data/fleet"], out="reports/fleet")
    print(result.summary())
    memlab.read_lake("reports/fleet", "headline")
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, cast

import pandas as pd

from memlab._escape import terminal_line
from memlab.constants import FLEET_MAX_BATCH, FLEET_TASK_SECONDS
from memlab.errors import FleetError, MemlabError, StoreNotFound
from memlab.kinds import detect
from memlab.lake._lake import lake_tables, read_lake, store_id, write_failure
from memlab.lake._layout import (
    compact,
    latest_manifest,
    new_run_id,
    staging_dir,
    versions,
)
from memlab.lake._paths import check_lake, regular_files
from memlab.lake._run import MESSAGE_CHARS, run_batch
from memlab.lake._sample import make_sample_fleet
from memlab.lake._summary import FLEET_METRICS, fleet_metrics, typicality
from memlab.sources.discover import STORE_WALK_DEPTH, walk_stores

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
]

# --------------------------------------------------------------------------- finding stores


def scan(
    roots: Iterable[str | Path] | str | Path | None = None,
    *,
    manifest: str | Path | None = None,
    max_depth: int = STORE_WALK_DEPTH,
) -> pd.DataFrame:
    """The stores a fleet run will process: columns ``path``, ``label``, ``store_id``.

    Under each root, every store some registered kind detects is one row
    (:func:`memlab.sources.discover.walk_stores`: a folder a kind claims is not looked into;
    hidden and dependency folders are skipped; symlinks are not followed). A root that is
    itself a store is that store. A manifest is a CSV or Parquet file with a ``path`` column
    (relative paths are relative to
    the manifest) and an optional ``label`` column.
    """
    return _scan(roots, manifest=manifest, max_depth=max_depth)[0]


def skipped_entries(
    roots: Iterable[str | Path] | str | Path | None, *, max_depth: int = STORE_WALK_DEPTH
) -> pd.DataFrame:
    """What the folder walk of :func:`scan` passes over without opening: columns ``path``,
    ``reason``, ``store_id``.

    The walk (:func:`memlab.sources.discover.walk_stores`) never follows a symbolic link and
    never opens a FIFO, socket or device file (reading a FIFO blocks); this lists each such
    entry in the folders the walk visits (hidden and dependency folders and the inside of a
    store are not visited), so a run can say what it did not read and why.
    """
    return _scan(roots, manifest=None, max_depth=max_depth, need_stores=False)[1]


def _scan(
    roots, *, manifest, max_depth: int, need_stores: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One walk of the roots: (the stores, as :func:`scan`; the entries passed over, as
    :func:`skipped_entries`)."""
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    if isinstance(roots, (str, Path)):
        roots = [roots]

    def on_skip(path: str, reason: str) -> None:
        skipped.append({"path": path, "reason": reason})

    for root in roots or []:
        r = Path(root).expanduser()
        if not r.exists():
            raise StoreNotFound("no such file or folder to look for stores in", path=r)
        try:
            detect(r)
            rows.append({"path": str(r), "label": None})
            continue
        except MemlabError:
            if not r.is_dir():
                raise
        rows.extend(
            {"path": str(e.source), "label": None}
            for e in walk_stores(r, max_depth=max_depth, on_skip=on_skip)
        )
    if manifest is not None:
        rows.extend(_read_manifest(Path(manifest).expanduser()))
    if not rows and need_stores:
        raise FleetError(
            "no stores to process",
            hint="give a folder that holds stores, or a manifest with a 'path' column",
        )
    df = pd.DataFrame(rows, columns=["path", "label"]).drop_duplicates("path")
    df = df.reset_index(drop=True).astype({"path": "string", "label": "string"})
    df["store_id"] = pd.array([store_id(p) for p in df["path"]], dtype="string")
    sk = pd.DataFrame(skipped, columns=["path", "reason"]).drop_duplicates("path")
    sk = sk.reset_index(drop=True).astype({"path": "string", "reason": "string"})
    sk["store_id"] = pd.array([store_id(p) for p in sk["path"]], dtype="string")
    return df, sk


def _read_manifest(path: Path) -> list[dict[str, Any]]:
    try:
        if path.suffix.lower() == ".parquet":
            df = pd.read_parquet(path)
        else:
            df = pd.read_csv(path, dtype="string", keep_default_na=False)
    except FileNotFoundError as exc:
        raise StoreNotFound("no such manifest", path=path) from exc
    except Exception as exc:  # pandas/pyarrow raise many kinds for a malformed file
        raise FleetError(
            f"cannot read the manifest: {terminal_line(exc, MESSAGE_CHARS)}", path=path
        ) from exc
    if "path" not in df.columns:
        raise FleetError(
            "the manifest has no 'path' column",
            path=path,
            hint="a CSV or Parquet file with columns path[,label]",
        )
    rows = []
    for i, rec in enumerate(df.to_dict("records")):
        value = rec.get("path")
        if value is None or str(value).strip() == "":
            raise FleetError(f"row {i + 1} has an empty path", path=path)
        p = Path(str(value)).expanduser()
        if not p.is_absolute():
            p = path.parent / p
        label = rec.get("label")
        rows.append({"path": str(p), "label": None if label in (None, "") else str(label)})
    return rows


# --------------------------------------------------------------------------- running


@dataclass
class FleetResult:
    """What a fleet run did: one row per store in ``stores``; the lake holds the rest."""

    out: Path
    run_date: str
    stores: pd.DataFrame
    seconds: float
    workers: int | str
    notes: list[str] = field(default_factory=list)
    #: Entries the folder walk did not open (symlinks, FIFOs, ...): ``path``, ``reason``,
    #: ``store_id``; each is also a ``failures`` row with ``error_class`` ``"Skipped"``.
    skipped: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(
            {
                "path": pd.Series(dtype="string"),
                "reason": pd.Series(dtype="string"),
                "store_id": pd.Series(dtype="string"),
            }
        )
    )
    #: Stores an earlier run on the same date wrote and this run does not list, whose rows
    #: this run removed from the date's partitions: ``store_id``, ``store_path``, ``tables``
    #: (how many tables held rows of the store).
    superseded: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(
            {
                "store_id": pd.Series(dtype="string"),
                "store_path": pd.Series(dtype="string"),
                "tables": pd.Series(dtype="int64"),
            }
        )
    )
    #: This run's id (``part-<run id>-<n>.parquet``; the manifest's ``run_id``).
    run_id: str | None = None
    #: The Parquet files this run wrote, relative to the lake folder.
    files: list[str] = field(default_factory=list)
    #: Stores per task, in the order the tasks were handed out (batches sized by the
    #: per-store seconds measured so far; a serial run's batches are only for writing).
    batches: list[int] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        return {s: int((self.stores["status"] == s).sum()) for s in ("ok", "reused", "failed")}

    @property
    def failures(self) -> pd.DataFrame:
        cols = ["path", "kind", "error_class", "message"]
        return self.stores.loc[self.stores["status"] == "failed", cols].reset_index(drop=True)

    def headline(self) -> pd.DataFrame:
        """The audit headline of every store in this run, read back from the lake."""
        return read_lake(self.out, "headline", run_date=self.run_date)

    def summary(self, width: int = 100) -> str:
        from memlab.lake._summary import summarize

        return summarize(self, width=width)

    def __repr__(self) -> str:
        c = self.counts
        return (
            f"<FleetResult {len(self.stores)} stores: {c['ok']} ok, {c['reused']} reused, "
            f"{c['failed']} failed; lake {self.out} run {self.run_date}>"
        )


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


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(
        rows, columns=["store_id", "path", "kind", "status", "error_class", "message", "seconds"]
    )
    for col in ("store_id", "path", "kind", "error_class", "message"):
        df[col] = df[col].astype("string")
    df["status"] = df["status"].astype("category")
    df["seconds"] = df["seconds"].astype("float64")
    return df


def is_lake(path: str | Path) -> bool:
    """True for a folder a fleet run (or ``export_parquet``) wrote: it holds a ``headline``
    table of Parquet files."""
    root = Path(path).expanduser()
    headline = root / "headline"
    # a symlinked headline folder (or a link to a Parquet file) is no table a run wrote
    return (
        root.is_dir()
        and headline.is_dir()
        and not headline.is_symlink()
        and bool(regular_files(headline, ".parquet"))
    )


def read_fleet(lake: str | Path, *, run_date: str | None = None) -> FleetResult:
    """An earlier fleet run read back from its lake, as a :class:`FleetResult`: the latest
    run date's stores (or ``run_date``'s), each ``ok`` from the headline table or ``failed``
    from the failures table. Nothing is audited again; ``seconds`` is NaN (not recorded).

    Example::

        run = memlab.lake.read_fleet("reports/fleet")
        print(run.summary())
    """
    root = Path(lake).expanduser()
    if root.is_dir():
        check_lake(root, reading=True)  # a symlinked folder: one line naming it
    if not is_lake(root):
        raise FleetError(
            "not a fleet lake: no headline table of Parquet files",
            path=root,
            hint="point at the --out folder of `memlab fleet`",
        )
    headline = read_lake(root, "headline")
    failures = read_lake(root, "failures")
    found = set(headline["run_date"].dropna()) | set(
        failures.get("run_date", pd.Series(dtype="string")).dropna()
    )
    # A partition folder's name is lake text: only a run date that is a date is one (it goes
    # on to notebooks and queries), and the others are named, not dropped silently.
    dates = sorted(d for d in found if _is_date(d))
    notes = [
        f"ignored partition folders run_date={terminal_line(d, MESSAGE_CHARS)}: "
        "not a YYYY-MM-DD date"
        for d in sorted(found - set(dates))
    ]
    if run_date is not None and not _is_date(run_date):
        raise FleetError(f"run_date {terminal_line(run_date, MESSAGE_CHARS)} is not YYYY-MM-DD")
    if not dates:
        raise FleetError(
            "the lake has no run with a YYYY-MM-DD run date", path=root, hint="; ".join(notes)
        )
    date = run_date or dates[-1]
    if date not in dates:
        raise FleetError(
            f"the lake has no run on {date}", path=root, hint="its runs: " + ", ".join(dates)
        )
    h = headline[headline["run_date"] == date]
    f = failures[failures["run_date"] == date] if len(failures) else failures
    rows = [
        {
            "store_id": r.store_id,
            "path": r.store_path,
            "kind": r.store_kind,
            "status": "ok",
            "error_class": None,
            "message": None,
            "seconds": float("nan"),
        }
        for r in h.itertuples(index=False)
    ]
    rows += [
        {
            "store_id": r.store_id,
            "path": r.store_path,
            "kind": r.kind,
            "status": "failed",
            "error_class": r.error_class,
            "message": r.message,
            "seconds": float("nan"),
        }
        for r in f.itertuples(index=False)
    ]
    return FleetResult(
        out=root,
        run_date=date,
        stores=_frame(rows),
        seconds=float("nan"),
        workers="none (read back from the lake)",
        notes=notes,
    )


def _is_date(text: Any) -> bool:
    """Whether ``text`` is a run date: ``YYYY-MM-DD`` (ASCII digits) naming a real day."""
    if not isinstance(text, str) or not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return False
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


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

    stores, skipped = _scan(roots, manifest=manifest, max_depth=STORE_WALK_DEPTH)
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
            used = _run_dask(args, staging, date, as_of_text, scheduler, workers, rows, bar, sizes)
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
        stores=_frame(rows),
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


def _run_dask(
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
