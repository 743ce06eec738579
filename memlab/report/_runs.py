"""Dated runs of `memlab report all`, read back: the headline metrics each store kind is
watched on, what changed since a store's previous run, alert rules, and retention.

A run folder is ``<runs>/<YYYY-MM-DD>/`` holding ``runs.json`` (:data:`RUN_FORMAT`): when it
ran, how long it took, the memlab version, and per store its kind, a digest of its bytes, the
identities of its load problems, audit findings and review choices, and each report's metrics.
Everything here reads those files; nothing here runs a report.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from memlab import kinds
from memlab._metrics import FINDINGS, RETIRED, definitions, derive, is_number

__all__ = [
    "RUN_FORMAT",
    "DATE_DIR",
    "HEADLINE_METRICS",
    "METRIC_DEFINITIONS",
    "FINDING_KEYS",
    "AUDIT_REPORTS",
    "Alert",
    "AlertRule",
    "parse_alerts",
    "store_digest",
    "store_metrics",
    "finding_keys",
    "problem_keys",
    "read_run",
    "read_runs",
    "previous_record",
    "delta_rows",
    "changed_sets",
    "evaluate_alerts",
    "prune_runs",
    "is_number",
    "headline_metrics",
    "run_ok",
    "last_good",
    "as_of_warnings",
    "reports_of",
]

#: The ``format`` of a run folder's ``runs.json``; a folder is memlab's own only with it.
RUN_FORMAT = "memlab-report-run/1"
#: A dated run folder's name.
DATE_DIR = re.compile(r"^\d{4}-\d{2}-\d{2}$")

#: The reports whose metrics a store's plain metric names come from; every other report's
#: metrics are named ``<report>.<name>`` (``review.choices``).
AUDIT_REPORTS = ("audit", "memfs")

#: Store kind -> the headline metrics its trends chart and its "since the last run" lists
#: (in this order): each kind's ``headline`` in :mod:`memlab.kinds`, a live view of the
#: registry. ``metrics:`` in the config overrides a kind's list.
HEADLINE_METRICS: Mapping[str, tuple[str, ...]] = kinds.by_kind("headline")

#: metric -> what it is, shown beside it in the index: the definitions of the metric records
#: (:data:`memlab._metrics.METRICS`), read-only.
METRIC_DEFINITIONS: Mapping[str, str] = MappingProxyType(definitions())

#: Audit table -> the columns that identify one finding in it (across runs): the audits' one
#: list of finding kinds (:data:`memlab._metrics.FINDINGS`), read-only.
FINDING_KEYS: Mapping[str, tuple[str, ...]] = MappingProxyType(FINDINGS)


def headline_metrics(
    kind: str | None, overrides: Mapping[str, list[str]] | None = None
) -> list[str]:
    """The headline metrics of a store ``kind``: the config's ``metrics:`` list for it when
    there is one, else :data:`HEADLINE_METRICS`'s (none for a kind without defaults)."""
    if overrides and kind is not None and kind in overrides:
        return list(overrides[kind])
    return list(HEADLINE_METRICS.get(kind or "", ()))


# --------------------------------------------------------------------------- a store's state


def store_digest(path: Path) -> str:
    """sha256 over a store's bytes: a file (and SQLite's ``-wal`` beside it), or every regular
    file under a folder (``.git`` included) with its relative path. Same bytes, same digest."""
    from memlab._files import walk

    h = hashlib.sha256()

    def add(file: Path, label: str) -> None:
        h.update(label.encode("utf-8", "surrogateescape") + b"\0")
        with open(file, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        h.update(b"\0")

    if path.is_dir():
        for dirpath, dirnames, filenames in walk(path):
            dirnames.sort()
            for name in sorted(filenames):
                full = Path(dirpath) / name
                if full.is_file() and not full.is_symlink():
                    add(full, os.path.relpath(full, path))
    else:
        add(path, "")
        wal = path.with_name(path.name + "-wal")
        if wal.is_file():
            add(wal, "-wal")
    return h.hexdigest()


def finding_keys(
    tables: Mapping[str, Any], identities: Mapping[str, tuple[str, ...]] | None = None
) -> list[str]:
    """One stable text per row of each audit table named in ``identities`` (a kind's
    ``findings()``; default :data:`FINDING_KEYS`, every one). A table whose rows lack an
    identifying column is keyed by the columns it has, never dropped."""
    keys = []
    for table, columns in (FINDING_KEYS if identities is None else identities).items():
        df = tables.get(table)
        if df is None or not len(df):
            continue
        columns = tuple(c for c in columns if c in df.columns) or tuple(df.columns)
        for row in df[list(columns)].astype(str).itertuples(index=False):
            keys.append(f"{table}: " + " · ".join(row))
    return sorted(set(keys))


def problem_keys(problems: Any, root: Path) -> list[str]:
    """One text per load problem: its kind, file and message, paths relative to the store's
    folder (the index shows no machine paths)."""
    keys: list[str] = []
    if problems is None or not len(problems):
        return keys
    base = str(root if root.is_dir() else root.parent) + os.sep
    for row in problems.to_dict("records"):
        file = row.get("file")
        where = ""
        if isinstance(file, str) and file:
            try:
                where = os.path.relpath(file, root) if os.path.isabs(file) else file
            except ValueError:
                where = Path(file).name
            where = f" {Path(root).name if where == '.' else where}"
        keys.append(f"{row.get('kind')}{where}: {str(row.get('message')).replace(base, '')}")
    return sorted(set(keys))


def store_metrics(reports: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """A store's metrics from its reports' entries: the audit report's under their own names,
    others as ``<report>.<name>``, plus a ratio an older audit did not record
    (:func:`memlab._metrics.derive`, the audit's own formula). Values are numbers or None (null in
    metrics.json: not recorded); a metric no report has is absent."""
    out: dict[str, Any] = {}
    for entry in reports:
        flat = _flat(entry.get("metrics") or {})
        prefix = "" if entry.get("report") in AUDIT_REPORTS else f"{entry.get('report')}."
        for name, value in flat.items():
            out[prefix + name] = value
    return derive(out)


def _flat(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Numbers and nulls of a metrics.json (flat, or ``{store file: {...}}`` for the audit)."""
    flat: dict[str, Any] = {}
    nested = [v for v in metrics.values() if isinstance(v, dict)]
    for key, value in metrics.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                if v is None or is_number(v):
                    flat[sub if len(nested) == 1 else f"{key}.{sub}"] = v
        elif value is None or is_number(value):
            flat[key] = value
    return flat


def as_of_warnings(metrics: Mapping[str, Any], as_of: str | None) -> list[str]:
    """One line per store of a report's ``metrics.json`` whose data ``as_of`` comes before:
    a store whose last activity is after that day (its later events get negative ages), a
    memory repo with no commit by then (0 commits read). The HTML says so in its notes; a
    command line says it with these."""
    if not as_of:
        return []
    day = str(as_of)[:10]
    nested: Mapping[str, Any] = {k: v for k, v in metrics.items() if isinstance(v, dict)}
    out = []
    for name, m in (nested or {"the store": metrics}).items():
        last = m.get("last_activity_at")
        if isinstance(last, str) and last[:10] > day:
            out.append(
                f"{name}: --as-of {day} is before the store's last activity "
                f"({last[:10]}); its later events have negative ages"
            )
        elif m.get("commits") == 0 and m.get("as_of"):
            out.append(
                f"{name}: --as-of {day} is before the repo's first commit; "
                "no commit was read (0 commits)"
            )
    return out


# --------------------------------------------------------------------------- reading runs


def read_run(folder: Path) -> dict[str, Any] | None:
    """A run folder's record, or None when it has no readable ``runs.json``. An older run's
    list of report entries is read as a record without store state."""
    try:
        data = json.loads((folder / "runs.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(data, list):  # before RUN_FORMAT: the report entries only
        reports = [e for e in data if isinstance(e, dict) and "store" in e]
        stores: dict[str, Any] = {}
        for e in reports:
            stores.setdefault(str(e["store"]), {"kind": e.get("kind")})
        return {"date": folder.name, "reports": reports, "stores": stores, "legacy": True}
    if not isinstance(data, dict) or data.get("format") != RUN_FORMAT:
        return None
    return data


def read_runs(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every dated run under ``root`` that has a record, oldest first."""
    if not root.is_dir():
        return []
    out = []
    for folder in sorted(
        p for p in root.iterdir() if DATE_DIR.match(p.name) and p.is_dir() and not p.is_symlink()
    ):
        record = read_run(folder)
        if record is not None:
            out.append((folder, record))
    return out


def run_ok(record: Mapping[str, Any]) -> bool:
    """Whether a run wrote every report it was asked for (no store, report or step failed)."""
    return not any(e.get("error") for e in record.get("reports", []))


def last_good(runs: list[tuple[Path, dict[str, Any]]]) -> int | None:
    """The index in ``runs`` (oldest first) of the newest run with nothing failed, or None."""
    for i in range(len(runs) - 1, -1, -1):
        if run_ok(runs[i][1]):
            return i
    return None


def reports_of(record: Mapping[str, Any], store: str) -> list[Mapping[str, Any]]:
    return [e for e in record.get("reports", []) if e.get("store") == store]


def previous_record(
    runs: list[tuple[Path, dict[str, Any]]], index: int, store: str
) -> tuple[Path, dict[str, Any]] | None:
    """The latest run before ``runs[index]`` that reported on ``store``."""
    for folder, record in reversed(runs[:index]):
        if store in record.get("stores", {}) and reports_of(record, store):
            return folder, record
    return None


# --------------------------------------------------------------------------- since the last run


@dataclass(frozen=True)
class Delta:
    metric: str
    before: Any  # a number, or None (not recorded)
    after: Any
    change: float | None  # None when either side is not a number

    @property
    def reason(self) -> str | None:
        """Why there is no change to show, or None when there is one."""
        if self.change is not None:
            return None
        if self.before is None and self.after is None:
            return "not recorded in either run"
        return (
            "not recorded in the previous run"
            if not is_number(self.before)
            else "not recorded in this run"
        )


def delta_rows(
    before: Mapping[str, Any], after: Mapping[str, Any], metrics: Iterable[str]
) -> list[Delta]:
    """One :class:`Delta` per metric either run has (a metric neither has is left out)."""
    rows = []
    for m in metrics:
        if m not in before and m not in after:
            continue
        a, b = before.get(m), after.get(m)
        change = b - a if is_number(a) and is_number(b) else None
        rows.append(Delta(m, a, b, change))
    return rows


def changed_sets(
    before: Mapping[str, Any], after: Mapping[str, Any], key: str
) -> tuple[list[str], list[str]] | None:
    """(appeared, gone) between two store states' ``key`` lists, or None when either run did
    not record them (not the same as "none appeared")."""
    a, b = before.get(key), after.get(key)
    if not isinstance(a, (list, dict)) or not isinstance(b, (list, dict)):
        return None
    return sorted(set(b) - set(a)), sorted(set(a) - set(b))


# --------------------------------------------------------------------------- alerts


@dataclass(frozen=True)
class AlertRule:
    """``metric`` with one of ``above``, ``below`` (the value now) or ``change_above`` (the
    absolute change since the store's previous run); ``store`` limits it to one store."""

    metric: str
    test: str  # above | below | change_above
    threshold: float
    store: str | None = None

    def describe(self) -> str:
        what = {"above": "above", "below": "below", "change_above": "changed by more than"}[
            self.test
        ]
        return f"{self.metric} {what} {self.threshold:g}" + (
            f" (store {self.store})" if self.store else ""
        )


@dataclass(frozen=True)
class Alert:
    rule: AlertRule
    store: str
    value: Any
    previous: Any = None
    fired: bool = False
    reason: str | None = None  # why the rule could not be checked (fired is then False)

    def line(self) -> str:
        if self.reason:
            return f"not checked: {self.store}: {self.rule.describe()}: {self.reason}"
        head = "ALERT" if self.fired else "ok"
        if self.rule.test == "change_above":
            return (
                f"{head} {self.store}: {self.rule.describe()}: {_num(self.previous)} -> "
                f"{_num(self.value)} ({self.value - self.previous:+.4g})"
            )
        return f"{head} {self.store}: {self.rule.describe()}: {_num(self.value)}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.rule.metric,
            "test": self.rule.test,
            "threshold": self.rule.threshold,
            "store": self.store,
            "value": self.value,
            "previous": self.previous,
            "fired": self.fired,
            "reason": self.reason,
            "text": self.line(),
        }


def _num(v: Any) -> str:
    return f"{v:.4g}" if is_number(v) else "–"


_TESTS = ("above", "below", "change_above")


def parse_alerts(value: Any) -> list[AlertRule] | str:
    """The config's ``alerts:`` list as rules, or the text of what is wrong with it."""
    if value is None:
        return []
    if not isinstance(value, list):
        return "`alerts:` must be a list of {metric: NAME, above|below|change_above: NUMBER}"
    rules = []
    for n, item in enumerate(value, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("metric"), str):
            return f"alert {n} needs `metric: NAME`"
        tests = [t for t in _TESTS if t in item]
        if len(tests) != 1:
            return f"alert {n} ({item['metric']}) needs exactly one of above, below, change_above"
        unknown = set(item) - {"metric", "store", *_TESTS}
        if unknown:
            return (
                f"alert {n} ({item['metric']}) has unknown key(s) "
                f"{', '.join(sorted(map(str, unknown)))}"
            )
        threshold = item[tests[0]]
        if not is_number(threshold):
            return f"alert {n} ({item['metric']}): {tests[0]} must be a number"
        store = item.get("store")
        rules.append(
            AlertRule(
                item["metric"], tests[0], float(threshold), None if store is None else str(store)
            )
        )
    return rules


def evaluate_alerts(
    rules: Iterable[AlertRule],
    now: Mapping[str, Mapping[str, Any]],
    before: Mapping[str, Mapping[str, Any] | None],
) -> list[Alert]:
    """Each rule against each store it covers that has the metric: ``now`` and ``before`` are
    store -> metrics of this run and of the store's previous run (None when there is none).
    A null value is not checked (listed with its reason), never read as 0; a rule no store
    could be checked on (a misspelt metric) is listed as not checked too."""
    out: list[Any] = []
    for rule in rules:
        checked = len(out)
        for store, metrics in now.items():
            if rule.store is not None and store != rule.store:
                continue
            if rule.metric not in metrics:
                continue
            value = metrics[rule.metric]
            if not is_number(value):
                out.append(Alert(rule, store, value, reason="not recorded in this run"))
                continue
            if rule.test == "change_above":
                prev_metrics = before.get(store)
                if prev_metrics is None:
                    out.append(Alert(rule, store, value, reason="no previous run of this store"))
                    continue
                prev = prev_metrics.get(rule.metric)
                if not is_number(prev):
                    out.append(
                        Alert(rule, store, value, prev, reason="not recorded in the previous run")
                    )
                    continue
                out.append(
                    Alert(rule, store, value, prev, fired=abs(value - prev) > rule.threshold)
                )
            else:
                fired = value > rule.threshold if rule.test == "above" else value < rule.threshold
                out.append(Alert(rule, store, value, fired=fired))
        if len(out) == checked:  # a misspelt metric or store must not watch nothing in silence
            where = (
                f"{rule.metric} is {RETIRED[rule.metric]}"
                if rule.metric in RETIRED
                else f"store {rule.store!r} is not in this run or lacks it"
                if rule.store
                else "no store in this run has this metric"
            )
            out.append(Alert(rule, rule.store or "every store", None, reason=where))
    return out


# --------------------------------------------------------------------------- retention


@dataclass
class Pruned:
    deleted: list[str] = field(default_factory=list)
    kept_back: list[str] = field(default_factory=list)  # over the limit but not memlab's own


def prune_runs(root: Path, keep: int | None, *, spare: str | None = None) -> Pruned:
    """Delete all but the ``keep`` newest dated runs under ``root`` (None: delete nothing);
    the run named ``spare`` (the one just written, even when back-dated) is never deleted, nor
    is the newest run in which nothing failed (the index's "latest": a week of failed nights
    with ``keep: 3`` must not delete the last good report).

    Only a run folder memlab wrote is deleted: a real folder (not a link) named YYYY-MM-DD,
    whose ``runs.json`` is a :data:`RUN_FORMAT` record and holds nothing at the top but the
    entries that record says the run wrote. Anything else is left and listed in ``kept_back``.
    """
    result = Pruned()
    if keep is None:
        return result
    runs = read_runs(root)
    good = last_good(runs)
    spared = {spare, runs[good][0].name if good is not None else None}
    for folder, record in runs[: max(0, len(runs) - keep)]:
        if folder.name in spared:
            continue
        written = set(record.get("written") or ())
        present = {p.name for p in folder.iterdir()}
        if record.get("format") != RUN_FORMAT or not present <= written | {"runs.json"}:
            result.kept_back.append(folder.name)
            continue
        shutil.rmtree(folder)
        result.deleted.append(folder.name)
    return result
