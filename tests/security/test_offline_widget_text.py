"""Widget text saved in a notebook (a label, an output area's plain text: store names reach
both) goes into the static page through the one HTML rule: tags escaped, controls and bidi
characters made visible, never raw (issue 23, item 3)."""

from __future__ import annotations

import nbformat

from memlab.report._offline import static_widgets

HOSTILE = "agent\x1b[2J<script>alert(1)</script>\u2028\u202eevil\x00"


def _notebook(models: dict) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    view = "application/vnd.jupyter.widget-view+json"
    nb.cells = [nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output(
        "display_data", data={view: {"model_id": mid, "version_major": 2, "version_minor": 0}})])
        for mid in models]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": {mid: {"model_name": s["_model_name"], "state": s} for mid, s in models.items()},
        "version_major": 2, "version_minor": 0}}
    return nb


def test_label_and_output_text_reach_the_page_escaped():
    nb = _notebook({
        "label": {"_model_name": "LabelModel", "value": HOSTILE},
        "out": {"_model_name": "OutputModel", "outputs": [
            {"output_type": "display_data", "data": {"text/plain": HOSTILE}}]},
    })
    assert static_widgets(nb) == 2
    pages = [c.outputs[0]["data"]["text/html"] for c in nb.cells]
    for page in pages:
        assert "<script>" not in page and "&lt;script&gt;" in page
        for raw in ("\x1b", "\u2028", "\u202e", "\x00"):
            assert raw not in page, repr(raw)
        assert "\\x1b" in page or "\\u001b" in page.lower() or "␛" in page
