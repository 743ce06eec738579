"""`memlab report all`: every report for a list of stores, a run index, trends, alerts.

A small YAML file names the stores (see the README's "Scheduled runs" for every key)::

    as_of: 2026-08-04            # optional; default: each run's own date
    simulation: true             # optional; run the simulation report once (default true)
    keep: 30                     # optional; keep the 30 newest dated runs (default: keep all)
    metrics:                     # optional; headline metrics per kind (default HEADLINE_METRICS)
      elfmem_db: [input_per_corpus_token, blocks_active, review.choices]
    alerts:                      # optional
      - metric: input_per_corpus_token
        above: 40
      - metric: blocks_active
        change_above: 5
    stores:
      demo: data/demo/elfmem-demo.db
      ezra-memory: ~/.letta/agents/agent-123/memory

Each store gets the reports that fit its kind (elfmem databases and agent files: audit and
review; memory repos: memfs audit and review). Output goes to ``<out>/<store>/<kind>/``. When
``out`` is a dated folder (``reports/2026-08-04``, the default ``reports/<today>``), its parent
is the runs folder: ``reports/index.html`` and ``reports/runs.json`` list every dated run, with
what changed since each store's previous run, the alerts that fired, and each store's headline
metrics across runs (``memlab.report._runs``, ``memlab.report._index``).

A store or report that fails does not stop the run: it becomes an ``error.html`` where its
report would be, is listed as failed, and the runs folder's "latest" stays on the newest run in
which nothing failed. Run into the same dated folder again, an earlier run's pages there are
set aside, never left looking current (:mod:`memlab.report._stale`). ``notify:`` targets
(``memlab.report._notify``) are told of failures and fired alerts. `memlab report all` exits
:data:`EXIT_FAILED` when anything failed.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlab import kinds
from memlab.errors import MemlabError, ReportError, StoreNotFound
from memlab.formats._yaml import read_yaml
from memlab.report._notify import Sent, parse_notify
from memlab.report._paths import reports_root
from memlab.report._runs import (
    DATE_DIR,
    HEADLINE_METRICS,
    RUN_FORMAT,
    Alert,
    evaluate_alerts,
    finding_keys,
    headline_metrics,
    last_good,
    parse_alerts,
    previous_record,
    problem_keys,
    prune_runs,
    read_runs,
    reports_of,
    run_ok,
    store_digest,
    store_metrics,
)
from memlab.report._stale import (
    drop_error_page,
    earlier_report,
    executed_notebook,
    set_aside_reports,
)
from memlab.report._timer import install_crontab, install_systemd, make_schedule

__all__ = [
    "report_all",
    "run_all",
    "ScheduledRun",
    "load_config",
    "REPORTS_BY_KIND",
    "make_schedule",
    "install_crontab",
    "install_systemd",
    "EXIT_FAILED",
    "EXIT_ALERT",
]

#: `memlab report all`'s exit status when a store, a report or a notification failed (every
#: other page is written; the failed ones are on the index with their error). It wins over
#: :data:`EXIT_ALERT`. A config that cannot be read exits 2, as every error does.
EXIT_FAILED = 4
#: ... when an alert fired and ``--fail-on-alert`` was given (nothing failed).
EXIT_ALERT = 3

#: Store kind -> the report kinds a run renders for each of its stores: each kind's ``reports``
#: in :mod:`memlab.kinds`, a live view of the registry.
REPORTS_BY_KIND = kinds.by_kind("reports")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_KEYS = {"as_of", "simulation", "stores", "keep", "metrics", "alerts", "reports", "notify"}
#: The one-line error a failed report's page and the run index show is cut to this length.
_ERROR_CHARS = 500
#: Longest review-choice title kept in a run record (the index lists them).
_TITLE_CHARS = 160


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and check the stores YAML; store paths are resolved against the file's folder.

    Returns the mapping with ``stores`` as name -> Path, ``keep`` as an int or None,
    ``metrics`` as store kind -> list of names, ``alerts`` as a list of
    :class:`~memlab.report._runs.AlertRule`, ``notify`` as a list of
    :class:`~memlab.report._notify.NotifyTarget` and ``reports`` as the report kinds each store
    gets (None: every one that fits its kind). A key memlab does not know is refused by name
    (a misspelt ``alert:`` would otherwise watch nothing).
    """
    config_path = Path(path).expanduser()
    if not config_path.exists():
        raise StoreNotFound(
            "no such reports config",
            path=config_path,
            hint="write a YAML file with a `stores:` mapping of name: path",
        )
    read = read_yaml(config_path.read_text())
    if not read.ok:
        where = f" (line {read.line + 1})" if read.line is not None else ""
        what = "not valid YAML" if read.failure == "syntax" else "cannot be read"
        raise ReportError(f"{what}: {read.problem}{where}", path=config_path)
    config = read.value or {}
    if not isinstance(config, dict):
        raise ReportError("needs a mapping with a `stores:` key", path=config_path)

    def refuse(message: str) -> ReportError:
        return ReportError(
            message,
            path=config_path,
            hint='see the README, "Scheduled runs", for the config\'s keys',
        )

    unknown = sorted(map(str, set(config) - _KEYS))
    if unknown:
        raise refuse(
            f"unknown key(s) {', '.join(map(repr, unknown))}; known: {', '.join(sorted(_KEYS))}"
        )
    stores = config.get("stores")
    if not isinstance(stores, dict) or not stores:
        raise ReportError("needs a non-empty `stores:` mapping of name: path", path=config_path)
    resolved = {}
    for name, store_path in stores.items():
        if not _SAFE_NAME.match(str(name)):
            # The name becomes a folder under --out: keep it from escaping.
            raise ReportError(
                f"store name {name!r} must be letters, digits, '.', '_' or '-'", path=config_path
            )
        p = Path(str(store_path)).expanduser()
        # Relative paths are relative to the config file, so the file can move with its data.
        resolved[str(name)] = p if p.is_absolute() else (config_path.parent / p).resolve()
    config["stores"] = resolved
    keep = config.get("keep")
    if keep is not None and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
        raise refuse(f"`keep:` must be a whole number of runs, 1 or more (got {keep!r})")
    metrics = config.get("metrics") or {}
    if not isinstance(metrics, dict) or any(
        k not in HEADLINE_METRICS
        or not isinstance(v, list)
        or not all(isinstance(m, str) for m in v)
        for k, v in metrics.items()
    ):
        raise refuse(
            "`metrics:` must map a store kind ("
            + ", ".join(HEADLINE_METRICS)
            + ") to a list of metric names"
        )
    config["metrics"] = metrics
    rules = parse_alerts(config.get("alerts"))
    if isinstance(rules, str):
        raise refuse(rules)
    config["alerts"] = rules
    targets = parse_notify(config.get("notify"))
    if isinstance(targets, str):
        raise refuse(targets)
    config["notify"] = targets
    chosen = config.get("reports")
    known = sorted({r for kinds_ in REPORTS_BY_KIND.values() for r in kinds_})
    if chosen is not None and (
        not isinstance(chosen, list)
        or not chosen
        or not all(isinstance(r, str) and r in known for r in chosen)
    ):
        raise refuse(
            f"`reports:` must list report kinds a store gets ({', '.join(known)}); got {chosen!r}"
        )
    config["reports"] = chosen
    if config.get("as_of") is not None:  # refused here, not by every notebook of the run
        from memlab.store import parse_as_of

        try:
            parse_as_of(config["as_of"])
        except MemlabError as exc:
            raise refuse(f"`as_of:` {exc.message}") from exc
    return config


@dataclass
class ScheduledRun:
    """What one `report all` run wrote: its folder and record, the page to open (the runs
    folder's ``index.html`` for a dated run, else the run's own), and its alerts."""

    folder: Path
    index: Path
    record: dict[str, Any]
    alerts: list[Alert] = field(default_factory=list)
    notified: list[Sent] = field(default_factory=list)

    @property
    def fired(self) -> list[Alert]:
        return [a for a in self.alerts if a.fired]

    @property
    def failures(self) -> list[dict[str, Any]]:
        return [r for r in self.record["reports"] if r.get("error")]

    @property
    def notify_failures(self) -> list[Sent]:
        return [n for n in self.notified if not n.ok]


def report_all(
    config_path: str | Path, *, out: str | Path | None = None, jobs: int | None = None
) -> Path:
    """:func:`run_all`, returning the page to open; a failed report raises
    :class:`ReportError` after every page is written (a cron job sees a non-zero exit)."""
    run = run_all(config_path, out=out, jobs=jobs)
    if run.failures:
        raise ReportError(
            f"{len(run.failures)} of {len(run.record['reports'])} report(s) failed; see the index",
            path=run.index,
            failures=run.failures,
        )
    return run.index


def run_all(
    config_path: str | Path,
    *,
    out: str | Path | None = None,
    jobs: int | None = None,
    as_of: str | None = None,
) -> ScheduledRun:
    """Run every report the config asks for; write the run's ``runs.json`` and ``index.html``
    and, for a dated run, the runs folder's; check the config's alerts; apply ``keep:``.

    ``out`` is this run's folder (default ``<reports_root()>/<today UTC>``); its name, when a date,
    is the run's date. ``as_of`` replaces the config's ``as_of:``. Reports run concurrently,
    ``jobs`` at a time (default: the CPU cores this process may use, at most one per report):
    each runs in its own kernel process. Results keep the config's order. A failing report
    does not stop the others: its error is in the record and on the index (see
    :attr:`ScheduledRun.failures`).
    """
    from concurrent.futures import ThreadPoolExecutor

    import memlab
    from memlab.progress import bar, note
    from memlab.report import report

    config = load_config(config_path)
    started = time.time()
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    # Absolute now: papermill changes the process's working folder while a notebook runs.
    folder = (Path(out).expanduser() if out else reports_root() / today).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    dated = bool(DATE_DIR.match(folder.name))
    as_of = as_of or (str(config["as_of"]) if config.get("as_of") else None)

    reports: list[dict[str, Any]] = []
    stores: dict[str, dict[str, Any]] = {}
    todo: list[tuple[str, str, list[Path], Path, str | None]] = []  # kind, store, paths, sub, as_of
    first_elfmem: Path | None = None
    for name, store_path in bar(
        config["stores"].items(), total=len(config["stores"]), desc="loading stores", unit="store"
    ):
        try:
            state = _store_state(store_path, as_of)
        except Exception as exc:  # a store that cannot be read fails alone; the run goes on
            error = _one_line(exc, store_path.parent)
            set_aside_reports(folder / name)  # an earlier run's pages into this folder
            reports.append(
                {
                    "store": name,
                    "kind": "?",
                    "report": "load",
                    "step": "load",
                    "error": error,
                    "error_page": f"{name}/error.html",
                    "store_file": store_path.name,
                }
            )
            stores[name] = {"kind": None, "error": error}
            continue
        drop_error_page(folder / name / "error.html")  # an earlier run's, into this folder
        kind = state["kind"]
        state["headline"] = headline_metrics(kind, config["metrics"])
        stores[name] = state
        found = kinds.lookup(kind)
        if found is not None and found.simulates() and first_elfmem is None:
            first_elfmem = store_path
        for report_kind in REPORTS_BY_KIND.get(kind, ()):
            if config["reports"] is None or report_kind in config["reports"]:
                todo.append((report_kind, name, [store_path], Path(name) / report_kind, as_of))
    if config.get("simulation", True):
        todo.append(
            ("simulation", "all", [first_elfmem] if first_elfmem else [], Path("simulation"), None)
        )
    note(
        f"{len(todo)} report(s) to render ({len(config['stores'])} store(s) x their notebooks"
        + (", plus the simulation" if config.get("simulation", True) else "")
        + "); the ETA "
        "settles after the first few: on a cold embedding cache the review and simulation "
        "reports embed each text once, which can take minutes; later runs reuse the cache"
    )
    workers = max(1, min(jobs or _cores(), len(todo) or 1))
    with (
        bar(total=len(todo), desc="reports", unit="report") as shown,
        ThreadPoolExecutor(max_workers=workers) as pool,
    ):
        # The simulation takes several times as long as any one store's report: started first,
        # it runs beside the others instead of after them (longest job first).
        futures = {
            i: pool.submit(_run_one, report, kind, name, paths, folder, sub, when)
            for i, (kind, name, paths, sub, when) in sorted(
                enumerate(todo), key=lambda t: t[1][0] != "simulation"
            )
        }
        for i, (kind, name, *_) in enumerate(todo):  # in the config's order
            reports.append(futures[i].result())
            shown.set_postfix_str(f"{name}/{kind}")
            shown.update(1)
    reviewed = {r["store"] for r in reports if r["report"] == "review" and not r.get("error")}
    for name, state in stores.items():
        if state.get("kind"):  # a failed review's folder may hold an earlier run's proposal
            state["choices"] = (
                _review_choices(folder / name / "review") if name in reviewed else None
            )

    failed = [r for r in reports if r.get("error")]
    record: dict[str, Any] = {
        "format": RUN_FORMAT,
        "date": folder.name if dated else today,
        "started": dt.datetime.fromtimestamp(started, dt.timezone.utc).isoformat(
            timespec="seconds"
        ),
        "duration_s": None,
        "memlab_version": memlab.__version__,
        "as_of": as_of,
        "status": "ok" if not failed else f"{len(failed)} of {len(reports)} report(s) failed",
        "stores": stores,
        "reports": reports,
        "alert_rules": [
            {"metric": r.metric, "test": r.test, "threshold": r.threshold, "store": r.store}
            for r in config["alerts"]
        ],
    }
    root = folder.parent if dated else None
    history = [(f, r) for f, r in read_runs(root) if f.name != folder.name] if root else []
    history.append((folder, record))
    history.sort(key=lambda run: run[0].name)  # a back-dated run compares with the one before it
    at = next(i for i, (f, _) in enumerate(history) if f == folder)
    now = {n: store_metrics(reports_of(record, n)) for n in stores}
    before = {}
    for n in stores:
        prev = previous_record(history, at, n)
        before[n] = store_metrics(reports_of(prev[1], n)) if prev else None
    alerts = evaluate_alerts(config["alerts"], now, before)
    record["alerts"] = [a.to_dict() for a in alerts]
    for entry in failed:  # each failure is a page of its own, its error on top
        _error_page(folder, entry, record, history, at)
    record["written"] = sorted(
        {
            "index.html",
            "runs.json",
            *(Path(r["html"]).parts[0] for r in reports if r.get("html")),
            *(p.name for p in folder.iterdir() if p.name in stores or p.name == "simulation"),
        }
    )
    record["duration_s"] = round(time.time() - started, 3)
    run = _write(folder, record, history, at, root, config.get("keep"), alerts)
    if config["notify"] and (run.failures or run.fired):
        run.notified = _notify(config["notify"], run)
        record["notified"] = [n.to_dict() for n in run.notified]
        (folder / "runs.json").write_text(
            json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8"
        )
    return run


def _notify(targets: list, run: ScheduledRun) -> list[Sent]:
    from memlab.report._notify import payload, send

    record = run.record
    body = payload(
        run=str(record["date"]),
        status=str(record["status"]),
        index=str(run.index),
        memlab_version=str(record["memlab_version"]),
        failures=[
            {
                "store": f["store"],
                "report": f["report"],
                "step": f.get("step"),
                "error": f["error"],
                "page": str(run.folder / f["error_page"]) if f.get("error_page") else None,
            }
            for f in run.failures
        ],
        alerts=[
            {"store": a.store, "metric": a.rule.metric, "value": a.value, "text": a.line()}
            for a in run.fired
        ],
    )
    return send(targets, body)


def _error_page(
    folder: Path, entry: dict[str, Any], record: dict[str, Any], history: list, at: int
) -> None:
    """``entry``'s failure as a page where its report would be: the store, the step, the
    one-line error first; then the run's parameters, the store's last good report of this
    kind in the runs folder, and the executed notebook up to the failing cell when there is one."""
    from memlab.report._index import error_page

    page = folder / entry["error_page"]
    page.parent.mkdir(parents=True, exist_ok=True)
    good_report = None
    earlier = earlier_report(page.parent, entry["report"])  # this folder run before, the same day
    if earlier is not None:
        good_report = (f"{folder.name}, an earlier run into this folder", earlier.name)
    for prev_folder, prev in reversed(history[:at] if good_report is None else []):
        good = [
            r
            for r in reports_of(prev, entry["store"])
            if r.get("html")
            and not r.get("error")
            and (entry["report"] == "load" or r.get("report") == entry["report"])
        ]
        if good:
            target = prev_folder / good[0]["html"]
            if target.is_file():
                good_report = (prev_folder.name, os.path.relpath(target, page.parent))
                break
    notebook = executed_notebook(page.parent, entry["report"])  # not an earlier run's
    page.write_text(
        error_page(
            entry, record, last_good=good_report, notebook=notebook.name if notebook else None
        ),
        encoding="utf-8",
    )


def _write(
    folder: Path,
    record: dict[str, Any],
    history: list,
    at: int,
    root: Path | None,
    keep: int | None,
    alerts: list[Alert],
) -> ScheduledRun:
    from memlab.report._index import index_page, run_page

    (folder / "runs.json").write_text(
        json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8"
    )
    run_index = folder / "index.html"
    run_index.write_text(run_page(history, at, root_index=root is not None), encoding="utf-8")
    if root is None:
        return ScheduledRun(folder, run_index, record, alerts)
    pruned = prune_runs(root, keep, spare=folder.name)
    runs = read_runs(root)
    good = last_good(runs)
    # "latest" is the newest run with nothing failed: a failed night leaves it where it was
    # ("newest" names that night; its own page shows what failed).
    summary = {
        "format": RUN_FORMAT + "-index",
        "latest": runs[good][0].name if good is not None else None,
        "newest": runs[-1][0].name if runs else None,
        "kept_back_by_keep": pruned.kept_back,
        "deleted_by_keep": pruned.deleted,
        "runs": [
            {
                "date": f.name,
                "index": f"{f.name}/index.html",
                "status": r.get("status"),
                "ok": run_ok(r),
                "duration_s": r.get("duration_s"),
                "memlab_version": r.get("memlab_version"),
                "stores": {
                    n: {"kind": s.get("kind"), "digest": s.get("digest")}
                    for n, s in r.get("stores", {}).items()
                },
                "alerts_fired": None
                if r.get("alerts") is None
                else sum(1 for a in r["alerts"] if a.get("fired")),
            }
            for f, r in runs
        ],
    }
    (root / "runs.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    index = root / "index.html"
    index.write_text(index_page(runs), encoding="utf-8")
    return ScheduledRun(folder, index, record, alerts)


def _store_state(path: Path, as_of: str | None) -> dict[str, Any]:
    """A store's kind, digest, load problems and audit findings, read in this process."""
    from memlab.audits import audit
    from memlab.sources import load

    store = load(path)
    state: dict[str, Any] = {
        "kind": store.kind,
        "digest": store_digest(path),
        "problems": problem_keys(store.problems, path),
    }
    try:
        result = audit(store, as_of=as_of)
    except MemlabError as exc:  # the audit report will show it; the run goes on
        state["findings"] = None
        state["audit_error"] = str(exc)
    else:
        state["findings"] = finding_keys(result.tables, kinds.get(store.kind).findings())
    files = kinds.get(store.kind).state(store)  # a store with no history of its own
    if files is not None:
        state["files"] = dict(files)
    return state


def _review_choices(folder: Path) -> dict[str, str] | None:
    """choice id -> title from the review report's proposal (None: no review was written)."""
    files = sorted(p for p in folder.glob("review-*.json") if not p.stem.endswith("-all"))
    if not files:
        return None
    try:
        data = json.loads(files[-1].read_text(encoding="utf-8"))
        return {str(c["id"]): str(c.get("title", ""))[:_TITLE_CHARS] for c in data["choices"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _run_one(
    report, kind: str, name: str, paths: list[Path], folder: Path, sub: Path, as_of: str | None
) -> dict[str, Any]:
    from memlab.report._params import declared_parameters

    entry: dict[str, Any] = {"store": name, "kind": kind, "report": kind}
    drop_error_page(folder / sub / "error.html")  # an earlier run's, into this folder
    try:
        params = {"as_of": as_of} if as_of and "as_of" in declared_parameters(kind) else {}
        result = report(kind, paths, out=folder / sub, **params)
    except Exception as exc:  # one report failing (even by a bug) must not stop the others
        context = getattr(exc, "context", None) or {}
        cell = context.get("cell_index")
        entry["step"] = f"{kind} report, cell {cell}" if cell is not None else f"{kind} report"
        entry["error"] = _one_line(exc, folder, *(p.parent for p in paths))
        entry["error_page"] = str(sub / "error.html")
        if paths:
            entry["store_file"] = paths[0].name
        return entry
    entry["html"] = str(sub / result.html.name)
    entry["metrics"] = result.metrics
    return entry


def _one_line(exc: BaseException, *folders: Path) -> str:
    """An exception as the one line a failed report shows: memlab's own message as it is (it
    names the file), anything else as its type and first line; no machine paths; cut."""
    from memlab._escape import terminal_line

    text = (
        str(exc)
        if isinstance(exc, MemlabError)
        else f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
    )
    text = terminal_line(_unrooted(text, *folders))
    return text if len(text) <= _ERROR_CHARS else text[: _ERROR_CHARS - 1] + "…"


def _unrooted(text: str, *folders: Path) -> str:
    """An error's text with these folders' absolute paths left out (the index shows no
    machine paths: a file is named relative to its store's folder or to the run)."""
    for folder in sorted({str(f) for f in folders}, key=len, reverse=True):
        text = text.replace(folder + os.sep, "")
    return text
