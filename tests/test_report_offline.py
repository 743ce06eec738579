"""Widget outputs become static HTML from the state papermill saved; nothing is left to fetch."""

from __future__ import annotations

import nbformat

from memlab.report._offline import remote_references, static_widgets

VIEW = "application/vnd.jupyter.widget-view+json"


def _model(name: str, **state):
    return {"model_name": name, "model_module": "@jupyter-widgets/controls",
            "model_module_version": "2.0.0", "state": {"_model_name": name, **state}}


def _notebook():
    nb = nbformat.v4.new_notebook()
    state = {
        "box": _model("VBoxModel", children=["IPY_MODEL_row", "IPY_MODEL_out"]),
        "row": _model("HBoxModel", children=["IPY_MODEL_pick", "IPY_MODEL_slider", "IPY_MODEL_tick"]),
        "pick": _model("DropdownModel", description="iteration", index=1,
                       _options_labels=["1: baseline", "4: files as truth"]),
        "slider": _model("FloatSliderModel", description="near-dup", value=0.9,
                         readout_format=".3f"),
        "tick": _model("CheckboxModel", description="keep-09e1 keep", value=False),
        "out": {"model_name": "OutputModel", "model_module": "@jupyter-widgets/output",
                "model_module_version": "1.0.0",
                "state": {"_model_name": "OutputModel", "outputs": [
                    {"output_type": "display_data",
                     "data": {"text/html": "<table><tr><td>S1</td><td>pass</td></tr></table>",
                              "text/plain": "S1 pass"}, "metadata": {}}]}},
        "bar": _model("HBoxModel", children=["IPY_MODEL_label", "IPY_MODEL_progress"]),
        "label": _model("HTMLModel", value="Loading weights: 100%"),
        "progress": _model("FloatProgressModel", value=103, max=103),
    }
    cell = nbformat.v4.new_code_cell("explorer")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={VIEW: {"model_id": "bar", "version_major": 2},
                                                     "text/plain": "HBox()"}),
        nbformat.v4.new_output("display_data", data={VIEW: {"model_id": "box", "version_major": 2},
                                                     "text/plain": "VBox()"}),
        nbformat.v4.new_output("display_data", data={VIEW: {"model_id": "gone", "version_major": 2},
                                                     "text/plain": "VBox()"}),
    ]
    nb.cells = [cell]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": state, "version_major": 2, "version_minor": 0}}
    return nb


def test_widgets_render_static_at_the_values_they_ran_with():
    nb = _notebook()
    assert static_widgets(nb) == 2
    bar, explorer, missing = nb.cells[0].outputs
    assert bar["data"] == {"text/plain": ""}  # a finished progress bar shows nothing
    page = explorer["data"]["text/html"]
    assert "iteration: 4: files as truth" in page and "near-dup: 0.900" in page
    assert "☐ keep-09e1 keep" in page
    assert "<table><tr><td>S1</td><td>pass</td></tr></table>" in page  # the Output's content
    assert "open the notebook in JupyterLab" in missing["data"]["text/html"]
    assert "widgets" not in nb.metadata  # nbconvert then emits no widget loader
    assert all(VIEW not in o["data"] for o in nb.cells[0].outputs)


def test_remote_references_finds_every_kind_of_network_load():
    page = """<script src="https://unpkg.com/x.js"></script><link rel=stylesheet href='//cdn/x.css'>
    <style>@import url("https://f/x.css"); .a{background:url(http://i/x.png)}</style>
    <script type=module>import m from "https://cdnjs/m.mjs"; await import('https://cdnjs/e.mjs')</script>
    <img src="https://i/x.png"><a href="https://example.org/">a link loads nothing</a>
    <img src="data:image/png;base64,AAAA">"""
    found = remote_references(page)
    assert len(found) == 7  # the <a> link and the data: image are not loads from the network
