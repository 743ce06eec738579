"""What turns an executed notebook into a report a person reads, before it is rendered.

:func:`present` runs on the executed notebook (the ``.ipynb`` stays as it ran, code and all):

* code is hidden (``show_code=True`` keeps it): each code cell's source is marked
  ``transient.remove_source``, which nbconvert honours, so only outputs and prose remain;
* the parameters it ran with go first, after the title
  (:func:`memlab.report._params.parameters_panel`), then a headline panel
  (:func:`headline_panel`): the figures the report exists for, each with its value per store, the
  doc's value where the doc gives one, and its definition;
* no machine paths (:func:`relative_paths`): an absolute path under the report's folder becomes
  relative to it, any other becomes its last component (the store's name);
* a bare ``PosixPath('...')`` result, a notebook's leftover last expression, is dropped;
* glyphs a Debian Chromium has no font for (the colour-circle emoji) become shapes DejaVu Sans
  draws (:data:`GLYPHS`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Mapping

from memlab import kinds
from memlab._escape import html as esc
from memlab._metrics import definition, derive
from memlab.constants import MISSING_TEXT
from memlab.report._runs import HEADLINE_METRICS
from memlab.report._tables import human

__all__ = [
    "present",
    "name_empty_tables",
    "headline_panel",
    "relative_paths",
    "safe_glyphs",
    "GLYPHS",
    "REPORT_HEADLINES",
    "machine_paths",
]

#: Emoji (no font for them in a stock Debian Chromium: they draw as empty boxes) -> a shape
#: DejaVu Sans has, coloured in HTML.
GLYPHS: dict[str, tuple[str, str]] = {
    "🟢": ("●", "#2e7d32"),
    "🟡": ("●", "#f9a825"),
    "🔴": ("●", "#c62828"),
    "🟠": ("●", "#ef6c00"),
    "⚪": ("○", "#757575"),
    "⚫": ("●", "#212121"),
    "✅": ("✔", "#2e7d32"),
    "❌": ("✘", "#c62828"),
    "⚠️": ("⚠", "#ef6c00"),
}

#: Report kind -> (metric, definition) of its headline panel, for reports whose metrics.json
#: is one flat record (the audits take theirs from the store kind: :data:`HEADLINE_METRICS`).
REPORT_HEADLINES: dict[str, tuple[tuple[str, str], ...]] = {
    "migration": (
        ("blocks_moved", "blocks written to the destination"),
        ("files_written", "files the migration wrote"),
        ("commits", "commits it made"),
        ("parity_checks", "source/destination comparisons made after writing"),
        ("parity_differences", "comparisons that differed (0: a faithful copy)"),
        ("flags", "items flagged for a look, each a row of the flags table"),
    ),
    "review": (
        ("choices", definition("review.choices")),  # the metric record's, as the run index
        ("units", "memory units reviewed"),
        ("duplicate_clusters", "groups of near-duplicate units"),
        ("contradictions_choices", "contradiction choices"),
        ("stale_choices", "stale-unit choices"),
        ("drift_choices", "constitutional drift choices"),
        (
            "protected_units",
            "units never proposed for removal (a guard applies: the units table's protected_why)",
        ),
    ),
    "fleet": (
        ("stores", "stores found"),
        ("ok", "stores audited"),
        ("failed", "stores that could not be audited"),
        ("atypical_figures", "figures far from the fleet's typical value"),
    ),
    "simulation": (
        ("incumbent", "the iteration the run keeps as incumbent (its journey table)"),
        ("findings", "places where the run disagrees with the doc (the findings table)"),
        ("instance", "the store whose audit parameterised the run"),
    ),
}
_ITERATION = re.compile(r"^iteration_(.+)_(pass|partial|fail)$")

_STORE_REPORTS = ("audit", "memfs")
_PATH = re.compile(r"(?<![\w.:/~<-])(/(?:[\w.@+*~-]++/)++[\w.@+*~-]*+)")
_PATH_REPR = re.compile(r"^\s*(?:Posix|Windows)?Path\((['\"]).*\1\)\s*$", re.S)


def present(
    nb: Any,
    *,
    kind: str | None,
    metrics: Mapping[str, Any] | None,
    folder: Path,
    show_code: bool = False,
) -> None:
    """Make ``nb`` (executed, in memory) read as a report; see the module docstring."""
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        if not show_code:
            cell.setdefault("metadata", {}).setdefault("transient", {})["remove_source"] = True
        cell["outputs"] = [o for o in cell.get("outputs", []) if not _path_repr(o)]
    from memlab.report._params import parameters_panel

    # After the title: the parameters the report ran with, then its headline figures.
    at = 1 if nb.cells and nb.cells[0].get("cell_type") == "markdown" else 0
    for panel in (headline_panel(kind, metrics or {}), parameters_panel(nb, kind)):
        if panel:
            import nbformat

            cell = nbformat.v4.new_code_cell("")
            cell.metadata["transient"] = {"remove_source": True}
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": panel})]
            nb.cells.insert(at, cell)
    relative_paths(nb, folder)
    safe_glyphs(nb)
    name_empty_tables(nb)


def _path_repr(output: Mapping[str, Any]) -> bool:
    if output.get("output_type") != "execute_result":
        return False
    data = output.get("data", {})
    text = data.get("text/plain", "")
    text = text if isinstance(text, str) else "".join(text)
    return set(data) <= {"text/plain"} and bool(_PATH_REPR.match(text))


# --------------------------------------------------------------------------- headline panel


def _rows(
    kind: str | None, metrics: Mapping[str, Any]
) -> tuple[list[str], list[tuple[str, str, list[Any], Any]]]:
    """(column names, [(metric, definition, values per column, the doc's value)])."""
    if kind in _STORE_REPORTS:
        nested = {k: v for k, v in metrics.items() if isinstance(v, dict)}
        stores = nested or {"": dict(metrics)}
        stores = {name: derive(m) for name, m in stores.items()}
        names: list[str] = []
        for m in stores.values():
            for name in HEADLINE_METRICS.get(str(m.get("kind")), ()):
                if name not in names and any(name in s for s in stores.values()):
                    names.append(name)
        documented = [k for s in stores.values() if (k := kinds.lookup(s.get("kind")))]
        rows = [
            (
                n,
                definition(n),
                [s.get(n) if n in s else None for s in stores.values()],
                next((v for k in documented if (v := k.doc_value(n)) is not None), None),
            )
            for n in names
        ]
        return list(stores), rows
    spec = REPORT_HEADLINES.get(kind or "", ())
    rows = [(n, d, [metrics.get(n)], None) for n, d in spec if n in metrics]
    if kind == "simulation":  # iteration_<n>_<verdict> counts: one row per iteration
        counts: dict[str, dict[str, Any]] = {}
        for key, value in metrics.items():
            hit = _ITERATION.match(str(key))
            if hit:
                counts.setdefault(hit.group(1), {})[hit.group(2)] = value
        for it, c in counts.items():
            rows.append(
                (
                    f"iteration {it}",
                    "scenarios passed / partly passed / failed",
                    [" / ".join(human(c.get(v)) for v in ("pass", "partial", "fail"))],
                    None,
                )
            )
    return [""], rows


def headline_panel(kind: str | None, metrics: Mapping[str, Any]) -> str:
    """The report's key figures as an HTML panel (empty when the kind has none): one row per
    figure with its value for each store, the doc's value where it gives one, and what the
    figure is. Every string goes through :func:`memlab._escape.html`."""
    columns, rows = _rows(kind, metrics)
    if not rows:
        return ""
    with_doc = any(doc is not None for *_, doc in rows)
    head = "".join(f"<th>{esc(c) if c else 'value'}</th>" for c in columns)
    head = (
        f"<th>figure</th>{head}" + ("<th>the doc</th>" if with_doc else "") + "<th>what it is</th>"
    )
    body = []
    for name, meaning, values, doc in rows:
        cells = "".join(f'<td class="num">{human(v)}</td>' for v in values)
        if with_doc:
            cells += f'<td class="num">{human(doc) if doc is not None else ""}</td>'
        body.append(f"<tr><th>{esc(name)}</th>{cells}<td>{esc(meaning)}</td></tr>")
    notes = []
    if any(v is None for _, _, values, _ in rows for v in values):
        notes.append(
            f"{MISSING_TEXT}: not checked or not recorded"
            + (" for that store (its summary below says why)" if kind in _STORE_REPORTS else "")
        )
    if with_doc:
        notes.append(
            "the doc: the v2 re-evaluation's §2 figure for the one instance it "
            "measured (the demo database)"
        )
    return (
        '<div class="memlab-headline"><h2>Headline</h2>'
        f'<div class="memlab-table"><table class="memlab-headline-table"><thead><tr>{head}'
        f"</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        + (f'<p class="memlab-dimensions">{esc("; ".join(notes))}</p>' if notes else "")
        + "</div>"
    )


# --------------------------------------------------------------------------- empty tables

_UNNAMED = re.compile(r'<p class="memlab-empty" data-named="no">none found</p>')
_HEADING = re.compile(r"^#{1,6}[ \t]+([^ \t\n][^\n]*)$", re.M)  # closing #s stripped below


def _heading_name(source: str) -> str | None:
    found = _HEADING.findall(source)
    if not found:
        return None
    return re.sub(r"[`*_]", "", found[-1].rstrip().rstrip("#")).strip()


def name_empty_tables(nb: Any) -> None:
    """Name each unnamed empty table's line (:func:`memlab.report._tables.empty_line`; a
    notebook names its tables with :func:`memlab.report.titled`) after the heading above it:
    "Parity: none found", never a bare header row."""
    heading = None
    for cell in nb.cells:
        if cell.get("cell_type") == "markdown":
            source = cell.get("source", "")
            heading = (
                _heading_name(source if isinstance(source, str) else "".join(source)) or heading
            )
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/html" not in data:
                continue
            text = (
                data["text/html"]
                if isinstance(data["text/html"], str)
                else "".join(data["text/html"])
            )
            line = f"{esc(heading)}: none found" if heading else "none found"
            data["text/html"] = _UNNAMED.sub(
                f'<p class="memlab-empty" data-named="heading">{line}</p>', text
            )


# --------------------------------------------------------------------------- paths and glyphs


def _roots() -> set[str]:
    try:
        found = set(os.listdir("/"))
    except OSError:  # pragma: no cover
        found = set()
    return found | {"home", "Users", "private", "tmp", "var", "root", "work", "mnt", "opt"}


def machine_paths(text: str) -> list[str]:
    """The absolute machine paths in ``text`` (under a top-level folder of this machine)."""
    roots = _roots()
    return [m.group(1) for m in _PATH.finditer(text) if m.group(1).split("/")[1] in roots]


def _rewrite(text: str, folder: Path, roots: set[str]) -> str:
    base = str(folder.resolve())

    def one(m: re.Match) -> str:
        path = m.group(1)
        if path.split("/")[1] not in roots:
            return path
        if path == base:
            return "."
        if path.startswith(base + "/"):
            return path[len(base) + 1 :]
        name = path.rstrip("/").rsplit("/", 1)[-1]
        return name or path

    return _PATH.sub(one, text)


def _texts(nb: Any):
    """(container, key) of every text a page shows: sources and text outputs."""
    for cell in nb.cells:
        yield cell, "source"
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                yield output, "text"
            for mime in ("text/plain", "text/html", "text/markdown"):
                if mime in output.get("data", {}):
                    yield output["data"], mime


def relative_paths(nb: Any, folder: Path) -> None:
    """Rewrite every absolute machine path in ``nb``'s sources and text outputs: relative to
    ``folder`` (the report's) when under it, else its last component (a store's name)."""
    roots = _roots()
    for holder, key in _texts(nb):
        value = holder[key]
        text = value if isinstance(value, str) else "".join(value)
        holder[key] = _rewrite(text, folder, roots)


def safe_glyphs(nb: Any) -> None:
    """Replace :data:`GLYPHS` emoji: in HTML by the coloured shape, elsewhere by the shape.
    Any other pictograph (U+1F000-U+1FAFF, store text included) is shown as its code point,
    ``[U+1F52E]``, rather than as the empty box a browser without an emoji font draws."""
    for holder, key in _texts(nb):
        value = holder[key]
        text = value if isinstance(value, str) else "".join(value)
        if not _PICTOGRAPH.search(text) and not any(e in text for e in GLYPHS):
            continue
        for emoji, (shape, colour) in GLYPHS.items():
            text = text.replace(
                emoji,
                f'<span style="color:{colour}">{shape}</span>' if key == "text/html" else shape,
            )
        holder[key] = _PICTOGRAPH.sub(lambda m: f"[U+{ord(m.group(1)):04X}]", text)


#: Pictographs no stock Debian font draws, with an emoji presentation selector after them.
_PICTOGRAPH = re.compile("([\U0001f000-\U0001faff])\ufe0f?")
