"""What a fleet run did (:class:`FleetResult`), made by a run or read back from its lake
(:func:`read_fleet`), and whether a folder is a lake a run wrote (:func:`is_lake`).

Example::

    run = memlab.lake.read_fleet("reports/fleet")
    print(run.summary())
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from memlab._escape import terminal_line
from memlab.errors import FleetError
from memlab.lake._lake import read_lake
from memlab.lake._paths import check_lake, regular_files
from memlab.lake._run import MESSAGE_CHARS

__all__ = ["FleetResult", "stores_frame", "is_lake", "read_fleet"]


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


def stores_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
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
        stores=stores_frame(rows),
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
