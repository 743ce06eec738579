"""Render an executed notebook to one HTML page that loads nothing from the network.

Three things in nbconvert's stock page reach out when opened: require.js, MathJax and mermaid
from a CDN, and the widget loader, which pulls an unpinned ``@jupyter-widgets/html-manager``
from unpkg. memlab's template (``templates/memlab_offline``) drops all four, and widget
outputs are rendered here to static HTML from the widget state papermill saved: a control
shows its label and the value it was run with, an ``Output`` widget shows what it displayed.
The interactive version stays one click away, in the notebook itself.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from memlab._escape import controls_visible
from memlab._escape import html as esc

__all__ = ["render_html", "remote_references", "static_widgets", "visible_outputs"]

TEMPLATE = "memlab_offline"
_TEMPLATES = Path(__file__).resolve().parent / "templates"
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# What makes a browser fetch: script/img/iframe src, link href, CSS @import/url(), JS import.
_REMOTE = re.compile(  # possessive spaces: "url(" and 400 KB of spaces was quadratic
    r"""<(?:script|img|iframe|audio|video|source|embed)\b[^>]*\bsrc\s*+=\s*+["']?\s*+(?:https?:)?//"""
    r"""|<link\b[^>]*\bhref\s*+=\s*+["']?\s*+(?:https?:)?//"""
    r"""|@import\s++(?:url\()?\s*+["']?\s*+(?:https?:)?//"""
    r"""|url\(\s*+["']?\s*+(?:https?:)?//"""
    r"""|\bimport\s*+\(\s*+["'`]\s*+(?:https?:)?//"""
    r"""|\bfrom\s++["'`]\s*+(?:https?:)?//""",
    re.I,
)
_PROGRESS = ("FloatProgressModel", "IntProgressModel")
_CONTROL = 'class="memlab-control"'
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_STYLE = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.S | re.I)


def remote_references(page: str) -> list[str]:
    """Every place in ``page`` that would make a browser load something from the network."""
    return [page[max(0, m.start() - 40) : m.end() + 60] for m in _REMOTE.finditer(page)]


def _label(state: dict[str, Any]) -> str:
    value = state.get("value")
    if state.get("_model_name") in ("CheckboxModel", "ToggleButtonModel"):
        return f"{'☑' if value else '☐'} {state.get('description') or ''}".rstrip()
    labels = state.get("_options_labels")
    index = state.get("index")
    if labels and isinstance(index, int) and 0 <= index < len(labels):
        value = labels[index]
    if isinstance(value, float):
        value = f"{value:.3f}" if state.get("readout_format") == ".3f" else f"{value:g}"
    return f"{state.get('description') or state.get('_model_name', 'control')}: {value}"


def _output_html(output: dict[str, Any]) -> str:
    data = output.get("data", {}) if output.get("output_type") != "stream" else {}
    if "text/html" in data:
        text = data["text/html"]
        return text if isinstance(text, str) else "".join(text)
    if "image/png" in data:
        return f'<img alt="figure" src="data:image/png;base64,{data["image/png"]}">'
    text = data.get("text/plain") if data else output.get("text", "")
    text = text if isinstance(text, str) else "".join(text or [])
    return f"<pre>{esc(text)}</pre>" if text else ""


def _widget_html(model_id: str, state: dict[str, Any], depth: int = 0) -> str:
    model = state.get(model_id)
    if model is None or depth > 20:
        return ""
    s = model.get("state", {})
    name = s.get("_model_name", "")
    if name in ("VBoxModel", "HBoxModel", "BoxModel", "GridBoxModel", "AccordionModel", "TabModel"):
        children = [
            state.get(str(c).removeprefix("IPY_MODEL_"), {}).get("state", {})
            for c in s.get("children", [])
        ]
        if any(c.get("_model_name") in _PROGRESS for c in children):
            return ""  # a progress bar (tqdm's notebook bar): done by the time anyone reads
        kids = [
            _widget_html(str(c).removeprefix("IPY_MODEL_"), state, depth + 1)
            for c in s.get("children", [])
        ]
        if name == "HBoxModel":  # a row: controls keep their width, text takes the rest
            kids = [
                f'<div style="flex:{"0 0 auto" if _CONTROL in k[:40] else "1 1 0"};'
                f'min-width:0">{k}</div>'
                for k in kids
                if k
            ]
        direction = "row" if name == "HBoxModel" else "column"
        return (
            f'<div class="memlab-widget" style="display:flex;flex-direction:{direction};'
            f'gap:.5em;align-items:baseline">{"".join(kids)}</div>'
        )
    if name == "OutputModel":
        return "".join(_output_html(o) for o in s.get("outputs", []))
    if name in ("HTMLModel", "HTMLMathModel"):
        return str(s.get("value", ""))
    if name == "LabelModel":
        return f"<span>{esc(str(s.get('value', '')))}</span>"
    if name == "ButtonModel":
        return ""  # an action: nothing to show in a static page
    if "value" in s or "index" in s:
        return f'<span class="memlab-control"><b>{esc(_label(s))}</b></span>'
    return ""


def static_widgets(nb: Any) -> int:
    """Replace widget outputs by static HTML from the saved widget state; drop that state.

    Returns how many widget outputs were rendered. A widget without saved state becomes a
    one-line note, never a script.
    """
    saved = nb.metadata.get("widgets", {}).get(_WIDGET_STATE, {}).get("state", {})
    done = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if _WIDGET_VIEW not in data:
                continue
            model_id = data[_WIDGET_VIEW].get("model_id", "")
            model = saved.get(model_id, {}).get("state", {})
            body = _widget_html(model_id, saved)
            if not body and model_id in saved:  # a finished progress bar: nothing to show
                output["data"] = {"text/plain": ""}
                continue
            body = body or (
                "<p><i>An interactive control: open the notebook in JupyterLab to use it.</i></p>"
            )
            note = (
                ""
                if model.get("_model_name") == "OutputModel"
                else "<p><i>Interactive in JupyterLab; shown here with the values it ran "
                "with.</i></p>"
            )
            output["data"] = {"text/html": f'<div class="memlab-static-widget">{note}{body}</div>'}
            done += 1
    nb.metadata.pop("widgets", None)
    return done


def visible_outputs(nb: Any) -> None:
    """Make every control character of the notebook's outputs visible before export: stream
    text, plain text and HTML alike (:func:`memlab._escape.controls_visible`, which leaves markup
    as it is; nbconvert HTML-escapes the text kinds itself). Tables are escaped cell by cell in
    the kernel (:func:`memlab.report.escape_tables`); this is the floor under every other output
    (a printed diff of block text, a repr). Error tracebacks keep their colours."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                text = output.get("text", "")
                output["text"] = controls_visible(text if isinstance(text, str) else "".join(text))
                continue
            data = output.get("data", {})
            for mime in ("text/plain", "text/html", "text/markdown"):
                if mime in data:
                    text = data[mime]
                    data[mime] = controls_visible(text if isinstance(text, str) else "".join(text))


_EXPORTERS = threading.local()


def _exporter() -> Any:
    """One HTMLExporter per thread, reused: building one compiles the Jinja templates, which
    costs more than rendering a report with them (the page is the same either way)."""
    exporter = getattr(_EXPORTERS, "html", None)
    if exporter is None:
        import nbconvert

        exporter = nbconvert.HTMLExporter(
            template_name=TEMPLATE, extra_template_basedirs=[str(_TEMPLATES)], embed_images=True
        )
        exporter.exclude_input_prompt = True
        exporter.exclude_output_prompt = True
        _EXPORTERS.html = exporter
    return exporter


def render_html(
    executed: Path,
    *,
    kind: str | None = None,
    metrics: dict[str, Any] | None = None,
    show_code: bool = False,
) -> Path:
    """``executed`` (.ipynb) -> the .html beside it: images embedded, no network load, read as a
    report (:func:`memlab.report._present.present`: code hidden unless ``show_code``, the
    headline panel of ``kind`` from ``metrics`` first, no machine paths, glyphs that render)."""
    import nbformat

    from memlab.report._present import present

    nb = nbformat.read(str(executed), as_version=4)
    static_widgets(nb)
    present(nb, kind=kind, metrics=metrics, folder=executed.parent, show_code=show_code)
    visible_outputs(nb)
    exporter = _exporter()
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": executed.stem}})
    # The stylesheet's comments cite their sources by URL; nothing loads them, but a page
    # that says "no remote URL" should hold none.
    body = _STYLE.sub(lambda m: m.group(1) + _CSS_COMMENT.sub("", m.group(2)) + m.group(3), body)
    page = executed.with_suffix(".html")
    page.write_text(body, encoding="utf-8")
    return page
