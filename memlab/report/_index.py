"""The HTML pages over dated runs: ``<runs>/index.html`` (every run, what changed since the
last one, alerts, trends) and each run's own ``<runs>/<date>/index.html`` (its reports).

Every text that came from a store or the config (store names, review titles, finding and
problem texts, metric names) reaches the page through :func:`memlab._escape.html`. Numbers a
run did not record are shown as "–" with the reason, never as 0 or as a change from 0.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any, Mapping

from memlab._escape import html as esc
from memlab._metrics import RETIRED
from memlab.report._runs import (
    METRIC_DEFINITIONS,
    changed_sets,
    delta_rows,
    is_number,
    last_good,
    previous_record,
    reports_of,
    run_ok,
    store_metrics,
)

__all__ = ["run_page", "index_page", "error_page", "fmt", "LISTED"]

#: At most this many appeared/resolved texts are listed per store and kind (the count says
#: how many there are in all).
LISTED = 12

_CSS = """body{font-family:"DejaVu Sans",sans-serif;margin:1.5em 2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;
font-size:92%;text-align:left;vertical-align:top}th{background:#f4f6f7}td.n{text-align:right;
font-variant-numeric:tabular-nums}.err{color:#b00}.alert{background:#fdecea;border-left:4px solid
#c0392b;padding:.4em .8em;margin:.3em 0}.quiet{color:#666}.up{color:#a04000}.down{color:#1a5276}
.why{color:#666;font-size:85%}section{margin-bottom:1.5em}.scroll{overflow-x:auto}
img{max-width:100%;height:auto}ul{margin:.2em 0}code{font-size:90%}"""


def fmt(value: Any) -> str:
    """A number for people: integers with thousands separators, others to 4 significant
    figures; anything else (null) is "–"."""
    if not is_number(value):
        return "–"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.4g}"


def _signed(value: float) -> str:
    return ("+" if value > 0 else "") + fmt(value) if value else "0"


def _page(title: str, body: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}'
        f"</title><style>{_CSS}</style></head><body>{body}</body></html>\n"
    )


def _alerts_section(record: Mapping[str, Any]) -> str:
    alerts = record.get("alerts")
    if alerts is None:
        return ""
    fired = [a for a in alerts if a.get("fired")]
    unchecked = [a for a in alerts if a.get("reason")]
    rules = record.get("alert_rules", [])
    if not rules:
        text = '<p class="quiet">No alert rules in the config (<code>alerts:</code>).</p>'
    elif not fired:
        text = (
            f"<p>No alert fired ({len(rules)} rule(s), {len(alerts) - len(unchecked)} "
            "check(s)).</p>"
        )
    else:
        text = "".join(f'<div class="alert">{esc(a["text"])}</div>' for a in fired)
    if unchecked:
        text += (
            '<ul class="quiet">'
            + "".join(f"<li>{esc(a['text'])}</li>" for a in unchecked)
            + "</ul>"
        )
    return f'<section id="alerts"><h2>Alerts · {esc(record.get("date", ""))}</h2>{text}</section>'


def _listing(title: str, texts: list[str], css: str = "") -> str:
    if not texts:
        return ""
    more = f" (and {len(texts) - LISTED} more)" if len(texts) > LISTED else ""
    items = "".join(f"<li>{esc(t)}</li>" for t in texts[:LISTED])
    return f'<p class="{css}">{esc(title)}: {len(texts)}{more}</p><ul>{items}</ul>'


def _since_store(
    name: str, record: Mapping[str, Any], prev: tuple[Path, Mapping[str, Any]] | None
) -> str:
    state = record["stores"][name]
    head = f'<h3>{esc(name)} <span class="quiet">({esc(state.get("kind") or "?")})</span></h3>'
    if state.get("error"):
        head += f'<p class="err">Not read in this run: {esc(state["error"])}</p>'
    if prev is None:
        return head + '<p class="quiet">First run of this store: nothing to compare with.</p>'
    prev_date, prev_record = prev[0].name, prev[1]
    before_state = prev_record["stores"].get(name, {})
    before = store_metrics(reports_of(prev_record, name))
    after = store_metrics(reports_of(record, name))
    metrics = list(state.get("headline") or sorted(set(before) | set(after)))
    # a name the previous run recorded that memlab no longer writes: its value under its own
    # name, and what it was (its replacement's row says "not recorded in the previous run")
    metrics += [m for m in before if m in RETIRED and m not in metrics]
    rows = []
    for d in delta_rows(before, after, metrics):
        if d.change is None:
            why = RETIRED[d.metric] if d.metric in RETIRED else d.reason
            change = f'– <span class="why">{esc(why)}</span>'
        else:
            css = "up" if d.change > 0 else "down" if d.change < 0 else "quiet"
            change = f'<span class="{css}">{esc(_signed(d.change))}</span>'
        rows.append(
            f'<tr><td title="{esc(METRIC_DEFINITIONS.get(d.metric, ""))}">'
            f'{esc(d.metric)}</td><td class="n">{fmt(d.before)}</td>'
            f'<td class="n">{fmt(d.after)}</td><td class="n">{change}</td></tr>'
        )
    digest_a, digest_b = before_state.get("digest"), state.get("digest")
    same = (
        "store unchanged (same digest)"
        if digest_a and digest_a == digest_b
        else "store changed (new digest)"
        if digest_a and digest_b
        else "digest not recorded"
    )
    out = [head, f"<p>Since {esc(prev_date)}: {esc(same)}.</p>"]
    if rows:
        out.append(
            f'<div class="scroll"><table><tr><th>metric</th><th>{esc(prev_date)}</th>'
            f"<th>{esc(record.get('date', 'now'))}</th><th>change</th></tr>"
            f"{''.join(rows)}</table></div>"
        )
    for key, what, gone in (
        ("choices", "review choices", "resolved"),
        ("findings", "audit findings", "gone"),
        ("problems", "load problems", "gone"),
    ):
        sets = changed_sets(before_state, state, key)
        if sets is None:
            out.append(f'<p class="quiet">{esc(what)}: – (not recorded in both runs)</p>')
            continue
        new, old = sets
        titles = state.get(key) if isinstance(state.get(key), dict) else {}
        old_titles = before_state.get(key) if isinstance(before_state.get(key), dict) else {}
        out.append(
            _listing(f"{what} appeared", [_titled(k, titles) for k in new], "up" if new else "")
        )
        out.append(_listing(f"{what} {gone}", [_titled(k, old_titles) for k in old]))
        if not new and not old:
            out.append(
                f'<p class="quiet">{esc(what)}: no change ({len(state.get(key) or ())} now)</p>'
            )
    out.append(_files_since(before_state.get("files"), state.get("files")))
    return "".join(out)


def _files_since(before: Any, after: Any) -> str:
    """Files added, changed (another digest) and removed, for a store whose kind records its
    contents (``KindBase.state``: it keeps no history of its own); nothing for other kinds."""
    if not isinstance(after, dict):
        return ""
    if not isinstance(before, dict):
        return '<p class="quiet">memory files: – (not recorded in the previous run)</p>'
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(after) & set(before) if after[k] != before[k])
    if not (added or removed or changed):
        return f'<p class="quiet">memory files: no change ({len(after)} now)</p>'
    return (
        _listing("memory files added", added, "up")
        + _listing("memory files changed", changed, "up")
        + _listing("memory files removed", removed)
    )


def _titled(key: str, titles: Mapping[str, Any]) -> str:
    title = titles.get(key)
    return f"{key}: {title}" if title else key


def _since_section(runs: list[tuple[Path, dict[str, Any]]], at: int) -> str:
    folder, record = runs[at]
    parts = [
        _since_store(name, record, previous_record(runs, at, name))
        for name in record.get("stores", {})
    ]
    return (
        f'<section id="since"><h2>Since the last run · {esc(folder.name)}</h2>'
        f"{''.join(parts) or '<p>No stores.</p>'}</section>"
    )


def _reports_table(record: Mapping[str, Any]) -> str:
    rows = []
    for r in record.get("reports", []):
        page = r.get("html") or r.get("error_page")
        link = f'<a href="{esc(page)}">{esc(r["report"])}</a>' if page else esc(r.get("report", ""))
        status = (
            f'<span class="err"><strong>failed</strong> ({esc(r.get("step") or r["report"])})'
            f": {esc(r['error'])}</span>"
            if r.get("error")
            else "ok"
        )
        rows.append(
            f"<tr><td>{esc(r.get('store', ''))}</td><td>{esc(r.get('kind', ''))}</td>"
            f"<td>{link}</td><td>{status}</td></tr>"
        )
    return (
        '<section id="reports"><h2>Reports</h2><div class="scroll"><table><tr><th>store</th>'
        f"<th>kind</th><th>report</th><th>status</th></tr>{''.join(rows)}</table></div>"
        "</section>"
    )


def run_page(runs: list[tuple[Path, dict[str, Any]]], at: int, *, root_index: bool) -> str:
    """One run's page: its alerts, its reports, what changed since each store's previous run."""
    folder, record = runs[at]
    up = '<p><a href="../index.html">All runs and trends</a></p>' if root_index else ""
    body = (
        f"<h1>memlab reports · {esc(folder.name)}</h1>{up}{_alerts_section(record)}"
        f"{_reports_table(record)}{_since_section(runs, at)}"
    )
    return _page(f"memlab reports {folder.name}", body)


def _runs_table(runs: list[tuple[Path, dict[str, Any]]]) -> str:
    rows = []
    good = last_good(runs)
    for n, (folder, record) in enumerate(reversed(runs)):
        latest = " <strong>latest</strong>" if len(runs) - 1 - n == good else ""
        stores = record.get("stores", {})
        digests = "<br>".join(
            f"{esc(s)}: <code>{esc((v.get('digest') or '–')[:12])}</code>"
            for s, v in stores.items()
        )
        duration = record.get("duration_s")
        fired = [a for a in record.get("alerts") or [] if a.get("fired")]
        status = record.get("status") or "–"
        css = "" if run_ok(record) else "err"
        link = (
            f'<a href="{esc(folder.name)}/index.html">{esc(folder.name)}</a>'
            if (folder / "index.html").is_file()
            else esc(folder.name)
        )
        rows.append(
            f"<tr><td>{link}{latest}</td><td>{esc(', '.join(stores)) or '–'}</td>"
            f'<td class="{css}">{esc(status)}</td>'
            f'<td class="n">{fmt(round(duration, 1)) + " s" if is_number(duration) else "–"}</td>'
            f"<td>{esc(record.get('memlab_version') or '–')}</td><td>{digests or '–'}</td>"
            f'<td class="n">{len(fired) if record.get("alerts") is not None else "–"}</td></tr>'
        )
    return (
        '<section id="runs"><h2>Runs</h2><div class="scroll"><table><tr><th>date</th>'
        "<th>stores</th><th>status</th><th>duration</th><th>memlab</th><th>store digest</th>"
        f"<th>alerts fired</th></tr>{''.join(rows)}</table></div>"
        '<p class="quiet">"–": not recorded (runs before memlab recorded it).</p></section>'
    )


def _trends_section(runs: list[tuple[Path, dict[str, Any]]]) -> str:
    from memlab import plots

    stores: dict[str, dict[str, dict[str, Any]]] = {}  # store -> date -> metrics
    headline: dict[str, list[str]] = {}
    for folder, record in runs:
        for name, state in record.get("stores", {}).items():
            metrics = store_metrics(reports_of(record, name))
            if metrics:
                stores.setdefault(name, {})[folder.name] = metrics
            if state.get("headline"):
                headline[name] = list(state["headline"])
    parts = []
    for name, series in stores.items():
        dates = sorted(series)
        chosen = [m for m in headline.get(name, []) if any(m in series[d] for d in dates)]
        absent = [m for m in headline.get(name, []) if m not in chosen]
        # A headline metric no run has (a misspelt `metrics:` name, or one this kind of store
        # lacks) is named, not dropped in silence.
        note = (
            f'<p class="quiet">No run has {esc(", ".join(absent))}: not charted.</p>'
            if absent
            else ""
        )
        if not chosen:
            parts.append(
                f'<h3>{esc(name)}</h3><p class="quiet">None of its headline metrics '
                f"was recorded.</p>{note}"
            )
            continue
        head = "".join(f"<th>{esc(d)}</th>" for d in dates)
        body = "".join(
            f'<tr><td><code>{esc(m)}</code></td><td class="why">'
            f"{esc(METRIC_DEFINITIONS.get(m, ''))}</td>"
            + "".join(f'<td class="n">{_cell(series[d], m)}</td>' for d in dates)
            + "</tr>"
            for m in chosen
        )
        if len(dates) > 1:
            fig = plots.trend_lines(series, chosen, title=f"{name}: headline metrics by run")
            img = (
                f'<img alt="{esc(name)}: trend of {esc(", ".join(chosen))}" '
                f'src="data:image/png;base64,{_png(fig)}">'
            )
        else:
            img = '<p class="quiet">One dated run so far: the chart appears from the second.</p>'
        parts.append(
            f'<h3>{esc(name)}</h3>{img}<div class="scroll"><table><tr><th>metric</th>'
            f"<th>what it is</th>{head}</tr>{body}</table></div>{note}"
        )
    return (
        f'<section id="trends"><h2>Trends</h2>{"".join(parts) or "<p>No metrics yet.</p>"}'
        "</section>"
    )


def _cell(metrics: Mapping[str, Any], m: str) -> str:
    if m not in metrics:
        return '– <span class="why">not in this run</span>'
    if not is_number(metrics[m]):
        return '– <span class="why">not recorded</span>'
    return fmt(metrics[m])


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96)
    return base64.b64encode(buf.getvalue()).decode()


def index_page(runs: list[tuple[Path, dict[str, Any]]]) -> str:
    """The runs folder's page: the latest run's alerts and changes first, then every run, then
    each store's headline metrics across runs."""
    if not runs:
        return _page("memlab report runs", "<h1>memlab report runs</h1><p>No runs yet.</p>")
    good = last_good(runs)
    newer = runs[0 if good is None else good + 1 :]  # runs after the latest good one
    failed = "".join(_failed_run(folder, record) for folder, record in reversed(newer))
    if good is None:
        head = f"<p>{len(runs)} run(s); none wrote every report: no good run yet.</p>{failed}"
        return _page(
            "memlab report runs",
            f"<h1>memlab report runs</h1>{head}{_runs_table(runs)}{_trends_section(runs)}",
        )
    latest_folder, latest = runs[good]
    body = (
        f"<h1>memlab report runs</h1>{failed}<p>{len(runs)} run(s); latest good run: "
        f'<a href="{esc(latest_folder.name)}/index.html">{esc(latest_folder.name)}</a>'
        f" ({esc(latest.get('status') or '–')}).</p>"
        f"{_alerts_section(latest)}{_since_section(runs, good)}"
        f"{_runs_table(runs)}{_trends_section(runs)}"
    )
    return _page("memlab report runs", body)


def _failed_run(folder: Path, record: Mapping[str, Any]) -> str:
    """A run newer than the latest good one, on top: what failed in it, each with its page."""
    items = "".join(
        f"<li>{esc(r.get('store', ''))} · {esc(r.get('step') or r.get('report', ''))}: "
        + (
            f'<a href="{esc(folder.name)}/{esc(r["error_page"])}">{esc(r["error"])}</a>'
            if r.get("error_page")
            else esc(r["error"])
        )
        + "</li>"
        for r in record.get("reports", [])
        if r.get("error")
    )
    return (
        f'<div class="alert failed-run"><strong>Run <a href="{esc(folder.name)}/index.html">'
        f"{esc(folder.name)}</a> failed</strong>: {esc(record.get('status') or '')}. "
        f"The reports below are from the latest good run.<ul>{items}</ul></div>"
    )


def error_page(
    entry: Mapping[str, Any],
    record: Mapping[str, Any],
    *,
    last_good: tuple[str, str] | None,
    notebook: str | None,
) -> str:
    """A failed report's page (``error.html`` where its report would be): the store, the step
    and the one-line error first, then the run's parameters, a link to the store's last good
    report (``(date, relative href)``) and to the executed notebook up to the failing cell."""
    store, step = entry.get("store", ""), entry.get("step") or entry.get("report", "")
    up = "../" * (len(Path(str(entry.get("error_page", ""))).parts) - 1)
    rows = [
        ("store", store),
        ("store file", entry.get("store_file") or "–"),
        ("report", entry.get("report", "")),
        ("step", step),
        ("run", record.get("date", "")),
        ("memlab", record.get("memlab_version", "")),
        ("as of", record.get("as_of") or "the day of the run (UTC)"),
    ]
    rules = record.get("alert_rules") or []
    if rules:
        rows.append(
            (
                "alert rules",
                "; ".join(
                    f"{r.get('metric')} {r.get('test')} {r.get('threshold')}"
                    + (f" (store {r.get('store')})" if r.get("store") else "")
                    for r in rules
                ),
            )
        )
    table = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    good = (
        f'<p>Last good report of this store: <a href="{esc(last_good[1])}">'
        f"{esc(last_good[0])}</a>.</p>"
        if last_good
        else '<p class="quiet">No earlier good report of this store in this runs folder.</p>'
    )
    nb = (
        f'<p>The executed notebook, up to the failing cell: <a href="{esc(notebook)}">'
        f"{esc(notebook)}</a>.</p>"
        if notebook
        else ""
    )
    body = (
        f'<h1>Failed: {esc(store)} · {esc(step)}</h1><p class="err error-line">'
        f"{esc(entry.get('error', ''))}</p>{good}{nb}"
        f'<section id="parameters"><h2>Parameters</h2><table>{table}</table></section>'
        f'<p><a href="{up}index.html">This run\'s reports</a></p>'
    )
    return _page(f"memlab report failed: {store} {step}", body)
