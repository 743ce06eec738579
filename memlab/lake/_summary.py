"""Fleet-level figures (one definition each) and the one-screen summary of a fleet run."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping

import numpy as np
import pandas as pd

from memlab._metrics import FLEET, METRICS
from memlab._metrics import column as metric_column

if TYPE_CHECKING:
    from memlab.lake._result import FleetResult

__all__ = ["FLEET_METRICS", "fleet_metrics", "typicality", "summarize"]

#: figure -> what it measures: the fleet's figures (:data:`memlab._metrics.FLEET`), each a
#: metric record (:data:`memlab._metrics.METRICS`) whose definition this shows. The notebook,
#: the summary and :func:`typicality` read them through :func:`fleet_metrics`.
FLEET_METRICS: Mapping[str, str] = MappingProxyType(
    {name: METRICS[name].definition for name in FLEET}
)


def fleet_metrics(headline: pd.DataFrame) -> pd.DataFrame:
    """One row per store, the fleet figures of :data:`FLEET_METRICS` as float columns (NaN where
    a store's kind does not have the figure), plus ``store``, ``store_kind`` and ``store_path``.
    A figure is the store's audit headline value of the same name where the audit records one
    (``supersession_share`` is the audit's), else its record's formula
    (:func:`memlab._metrics.column`).

    Example::

        fleet_metrics(memlab.read_lake("reports/fleet", "headline"))
    """
    if headline.empty:
        return pd.DataFrame(columns=["store", "store_kind", "store_path", *FLEET_METRICS])
    out = pd.DataFrame(
        {
            "store": headline.get("store"),
            "store_kind": headline.get("store_kind"),
            "store_path": headline.get("store_path"),
            **{name: metric_column(name, headline) for name in FLEET_METRICS},
        }
    )
    return out.reset_index(drop=True)


def typicality(metrics: pd.DataFrame, reference: pd.Series) -> pd.DataFrame:
    """Where one store (``reference``, a row of :func:`fleet_metrics`) sits in the fleet: per
    figure its value, the fleet's median and 10th-90th percentiles, and its percentile rank
    (share of fleet stores at or below it). A rank under 10 or over 90 is flagged atypical.

    Example::

        typicality(fleet, fleet_metrics(memlab.read_lake(...)).iloc[0])
    """
    rows = []
    for name in FLEET_METRICS:
        values = metrics[name].dropna()
        value = reference.get(name, np.nan)
        if values.empty or pd.isna(value):
            continue
        rank = float((values <= value).mean() * 100)
        rows.append(
            {
                "figure": name,
                "value": float(value),
                "fleet_median": values.median(),
                "fleet_p10": values.quantile(0.1),
                "fleet_p90": values.quantile(0.9),
                "percentile": rank,
                "stores": len(values),
                "atypical": bool(rank < 10 or rank > 90),
            }
        )
    return pd.DataFrame(rows)


def _fmt(value: float) -> str:
    if pd.isna(value):
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def summarize(result: "FleetResult", width: int = 100) -> str:
    from memlab._escape import terminal_line

    stores = result.stores
    c = result.counts
    took = (
        f"in {result.seconds:.1f} s (workers: {result.workers})"
        if result.seconds == result.seconds
        else "read back from the lake"
    )
    lines = [
        f"fleet run {result.run_date}: {len(stores)} stores {took}; lake: {result.out}",
        f"  {c['ok']} audited, {c['reused']} reused (unchanged since the last run), "
        f"{c['failed']} failed",
        "",
    ]
    by_kind = (
        stores.assign(kind=stores["kind"].fillna("(not loaded)"))
        .groupby(["kind", "status"], observed=True)
        .size()
        .unstack(fill_value=0)
    )
    lines.append(f"  {'kind':<20}" + "".join(f"{s:>9}" for s in by_kind.columns))
    for kind, row in by_kind.iterrows():
        lines.append(f"  {str(kind):<20}" + "".join(f"{int(v):>9}" for v in row))
    metrics = fleet_metrics(result.headline())
    if len(metrics):
        lines += ["", f"  {'figure':<26}{'stores':>7}{'median':>10}{'p90':>10}{'max':>10}  highest"]
        for name in FLEET_METRICS:
            values = metrics[name].dropna()
            if values.empty:
                continue
            top = metrics.loc[values.idxmax(), "store"]
            label = terminal_line(top, max(10, width - 75))
            lines.append(
                f"  {name:<26}{len(values):>7}{_fmt(values.median()):>10}"
                f"{_fmt(values.quantile(0.9)):>10}{_fmt(values.max()):>10}  {label}"
            )
    failures = result.failures
    if len(failures):
        lines += ["", "  failed:"]
        for rec in failures.head(5).itertuples():
            lines.append(
                "  " + terminal_line(f"{rec.path}: {rec.error_class}: {rec.message}", width - 2)
            )
        if len(failures) > 5:
            lines.append(f"  ... and {len(failures) - 5} more (the lake's failures table)")
    skipped = result.skipped
    if len(skipped):
        lines += [
            "",
            f"  skipped (not opened; rows in the lake's failures table, error_class "
            f"'Skipped'): {len(skipped)}",
        ]
        for rec in skipped.head(5).itertuples():
            lines.append("  " + terminal_line(f"{rec.path}: {rec.reason}", width - 2))
        if len(skipped) > 5:
            lines.append(f"  ... and {len(skipped) - 5} more (FleetResult.skipped)")
    gone = result.superseded
    if len(gone):
        lines += [
            "",
            f"  removed from run date {result.run_date}: {len(gone)} store(s) an earlier "
            f"run that day wrote",
            f"  and this run does not list (their rows in {int(gone['tables'].sum())} tables):",
        ]
        for rec in gone.head(5).itertuples():
            where = rec.store_path if isinstance(rec.store_path, str) else rec.store_id
            lines.append("  " + terminal_line(where, width - 2))
        if len(gone) > 5:
            lines.append(f"  ... and {len(gone) - 5} more (FleetResult.superseded)")
    lines += [
        "",
        f"  read it: memlab.read_lake({str(result.out)!r}, 'headline')",
        f"  or DuckDB: read_parquet('{result.out}/headline/**/*.parquet',",
        "             hive_partitioning=true, union_by_name=true)",
    ]
    return "\n".join(lines)
