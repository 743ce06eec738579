"""`memlab report all`: every report for a list of stores, plus an index with trends.

A small YAML file names the stores::

    as_of: 2026-08-04            # optional; default: the run date
    simulation: true             # optional; run the simulation report once (default true)
    stores:
      demo: data/demo/elfmem-demo.db
      alv: ~/.elfmem/databases/alv.db
      ezra-memory: ~/.letta/agents/agent-123/memory

Each store gets the reports that fit its kind (elfmem databases and agent files: audit and
review; memory repos: memfs audit and review). Output goes to ``<out>/<store>/<kind>/``; a
cron job points ``--out`` at ``reports/<date>/`` so dated runs sit side by side, and
``index.html`` shows each headline metric's trend across those dated runs.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import io
import json
import os
import re
from pathlib import Path
from typing import Any

from memlab.errors import MemlabError, ReportError, StoreNotFound
from memlab.formats._yaml import read_yaml

__all__ = ["report_all", "load_config", "REPORTS_BY_KIND"]

REPORTS_BY_KIND = {
    "elfmem_db": ("audit", "review"),
    "agent_file": ("audit", "review"),
    "letta_blocks": ("audit", "review"),
    "letta_memfs": ("memfs", "review"),
    "souveraine": ("memfs", "review"),
    "elfmem_substrate": ("memfs", "review"),
}
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_DATE_DIR = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# Trend lines are drawn for at most this many headline metrics per store, so the page stays short.
_TREND_METRICS = 6


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and check the stores YAML; store paths are resolved against the file's folder."""
    config_path = Path(path).expanduser()
    if not config_path.exists():
        raise StoreNotFound("no such reports config", path=config_path,
                            hint="write a YAML file with a `stores:` mapping of name: path")
    read = read_yaml(config_path.read_text())
    if not read.ok:
        where = f" (line {read.line + 1})" if read.line is not None else ""
        what = "not valid YAML" if read.failure == "syntax" else "cannot be read"
        raise ReportError(f"{what}: {read.problem}{where}", path=config_path)
    config = read.value or {}
    if not isinstance(config, dict):
        raise ReportError("needs a mapping with a `stores:` key", path=config_path)
    stores = config.get("stores")
    if not isinstance(stores, dict) or not stores:
        raise ReportError("needs a non-empty `stores:` mapping of name: path", path=config_path)
    resolved = {}
    for name, store_path in stores.items():
        if not _SAFE_NAME.match(str(name)):
            # The name becomes a folder under --out: keep it from escaping.
            raise ReportError(f"store name {name!r} must be letters, digits, '.', '_' or '-'",
                              path=config_path)
        p = Path(str(store_path)).expanduser()
        # Relative paths are relative to the config file, so the file can move with its data.
        resolved[str(name)] = p if p.is_absolute() else (config_path.parent / p).resolve()
    config["stores"] = resolved
    return config


def report_all(config_path: str | Path, *, out: str | Path | None = None,
               jobs: int | None = None) -> Path:
    """Run every report the config asks for; write ``index.html``; return its path.

    Reports run concurrently, ``jobs`` at a time (default: the CPU cores this process may use,
    at most one per report): each runs in its own kernel process, so kernel start-ups, cells
    and HTML rendering of different reports overlap. Results and the index keep the config's
    order. A failing report does not stop the others: its error is shown in the index (and the
    run raises :class:`ReportError` at the end, so a cron job still sees a non-zero exit).
    """
    from concurrent.futures import ThreadPoolExecutor

    from memlab.progress import bar, note
    from memlab.report import report
    from memlab.sources import load

    config = load_config(config_path)
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    folder = Path(out) if out else Path("reports") / today
    folder.mkdir(parents=True, exist_ok=True)
    as_of = str(config["as_of"]) if config.get("as_of") else None

    runs: list[dict[str, Any]] = []
    todo: list[tuple[str, str, list[Path], Path, str | None]] = []  # kind, store, paths, sub, as_of
    first_elfmem: Path | None = None
    for name, store_path in bar(config["stores"].items(), total=len(config["stores"]),
                                desc="loading stores", unit="store"):
        try:
            kind = load(store_path).kind
        except MemlabError as exc:
            runs.append({"store": name, "kind": "?", "report": "load", "error": str(exc)})
            continue
        if kind == "elfmem_db" and first_elfmem is None:
            first_elfmem = store_path
        for report_kind in REPORTS_BY_KIND.get(kind, ()):
            todo.append((report_kind, name, [store_path], Path(name) / report_kind, as_of))
    if config.get("simulation", True):
        todo.append(("simulation", "all", [first_elfmem] if first_elfmem else [],
                     Path("simulation"), None))
    note(f"{len(todo)} report(s) to render ({len(config['stores'])} store(s) x their notebooks"
         + (", plus the simulation" if config.get("simulation", True) else "") + "); the ETA "
         "settles after the first few: on a cold embedding cache the review and simulation "
         "reports embed each text once, which can take minutes; later runs reuse the cache")
    workers = max(1, min(jobs or _cores(), len(todo) or 1))
    with bar(total=len(todo), desc="reports", unit="report") as reports, \
            ThreadPoolExecutor(max_workers=workers) as pool:
        # The simulation takes several times as long as any one store's report: started first,
        # it runs beside the others instead of after them (longest job first).
        started = {i: pool.submit(_run_one, report, kind, name, paths, folder, sub, when)
                   for i, (kind, name, paths, sub, when) in
                   sorted(enumerate(todo), key=lambda t: t[1][0] != "simulation")}
        futures = [(f"{name}/{kind}", started[i]) for i, (kind, name, *_) in enumerate(todo)]
        for label, future in futures:  # in the config's order, whatever finishes first
            runs.append(future.result())
            reports.set_postfix_str(label)
            reports.update(1)

    (folder / "runs.json").write_text(json.dumps(runs, indent=2, default=str) + "\n")
    index = folder / "index.html"
    index.write_text(_index_html(folder, runs), encoding="utf-8")
    failed = [r for r in runs if r.get("error")]
    if failed:
        raise ReportError(f"{len(failed)} of {len(runs)} report(s) failed; see the index",
                          path=index, failures=failed)
    return index


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _run_one(report, kind: str, name: str, paths: list[Path], folder: Path, sub: Path,
             as_of: str | None) -> dict[str, Any]:
    from memlab.report._params import declared_parameters

    params = {"as_of": as_of} if as_of and "as_of" in declared_parameters(kind) else {}
    entry: dict[str, Any] = {"store": name, "kind": kind, "report": kind}
    try:
        result = report(kind, paths, out=folder / sub, **params)
    except MemlabError as exc:
        entry["error"] = str(exc)
        return entry
    entry["html"] = str(sub / result.html.name)
    entry["metrics"] = result.metrics
    return entry


def _headline(metrics: dict[str, Any]) -> dict[str, float]:
    """Flatten numeric headline metrics ({store: {...}} or flat) for the trend table."""
    flat: dict[str, float] = {}
    for key, value in metrics.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            flat[key] = float(value)
        elif isinstance(value, dict):
            for sub, v in value.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    flat[f"{key}.{sub}" if len(metrics) > 1 else sub] = float(v)
    return flat


def _history(folder: Path) -> dict[tuple[str, str], dict[str, dict[str, float]]]:
    """(store, report) -> date -> metrics, from every dated sibling run of ``folder``."""
    history: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    siblings = [p for p in folder.parent.iterdir() if p.is_dir() and _DATE_DIR.match(p.name)]
    if folder not in siblings:
        siblings.append(folder)
    for run_dir in sorted(siblings):
        runs_file = run_dir / "runs.json"
        if not runs_file.exists():
            continue
        for entry in json.loads(runs_file.read_text()):
            if entry.get("metrics"):
                key = (entry["store"], entry["report"])
                history.setdefault(key, {})[run_dir.name] = _headline(entry["metrics"])
    return history


def _trend_png(series: dict[str, dict[str, float]], metrics: list[str]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dates = sorted(series)
    fig, axes = plt.subplots(1, len(metrics), figsize=(2.6 * len(metrics), 1.9), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        ax.plot(dates, [series[d].get(metric, float("nan")) for d in dates], marker="o")
        ax.set_title(metric, fontsize=8)
        ax.tick_params(labelsize=6, labelrotation=45)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _index_html(folder: Path, runs: list[dict[str, Any]]) -> str:
    esc = html.escape
    rows = []
    for r in runs:
        link = (f'<a href="{esc(r["html"])}">{esc(r["report"])}</a>' if r.get("html")
                else esc(r["report"]))
        status = f'<span class="err">{esc(r["error"])}</span>' if r.get("error") else "ok"
        rows.append(f"<tr><td>{esc(r['store'])}</td><td>{esc(r['kind'])}</td>"
                    f"<td>{link}</td><td>{status}</td></tr>")
    trends = []
    for (store, report_kind), series in sorted(_history(folder).items()):
        dates = sorted(series)
        metrics = sorted({m for d in dates for m in series[d]})[:_TREND_METRICS]
        if not metrics:
            continue
        head = "".join(f"<th>{esc(m)}</th>" for m in metrics)
        body = "".join(
            "<tr><td>" + esc(d) + "</td>" + "".join(
                f"<td>{series[d].get(m, float('nan')):.4g}</td>" for m in metrics) + "</tr>"
            for d in dates)
        img = (f'<img alt="trend" src="data:image/png;base64,{_trend_png(series, metrics)}">'
               if len(dates) > 1 else "<p>One dated run so far: trends appear from the second.</p>")
        trends.append(f"<h3>{esc(store)} · {esc(report_kind)}</h3><table><tr><th>run</th>{head}</tr>"
                      f"{body}</table>{img}")
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>memlab reports {esc(folder.name)}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin:.5em 0}}
td,th{{border:1px solid #ccc;padding:.2em .6em;font-size:90%}}.err{{color:#b00}}</style></head><body>
<h1>memlab reports · {esc(folder.name)}</h1>
<table><tr><th>store</th><th>kind</th><th>report</th><th>status</th></tr>{''.join(rows)}</table>
<h2>Headline metrics across dated runs</h2>{''.join(trends) or '<p>No metrics yet.</p>'}
</body></html>"""
