"""The notebook runner: parameters in, HTML and metrics.json out, failures with context."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from memlab.errors import ReportError
from memlab.report import execute_notebook, report


def _notebook(path, code):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("value = 1\nfail = False\noutput_dir = '.'")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# A test report"), params, nbformat.v4.new_code_cell(code)]
    nbformat.write(nb, path)
    return path


BODY = """
import json, pathlib
import matplotlib.pyplot as plt
if fail:
    raise ValueError("asked to fail")
plt.plot([1, 2, 3]); plt.show()
pathlib.Path(output_dir, "metrics.json").write_text(json.dumps({"value": value * 2}))
"""


@pytest.mark.slow
def test_parameters_reach_the_notebook_and_metrics_come_back(tmp_path):
    nb = _notebook(tmp_path / "t.ipynb", BODY)
    result = execute_notebook(str(nb), {"value": 21}, tmp_path / "out")
    assert result.metrics == {"value": 42}
    html = result.html.read_text()
    assert "data:image/png;base64" in html  # the figure is embedded
    assert not re.search(r'<script[^>]*src="https?://', html)  # no network at view time
    executed = nbformat.read(result.notebook, as_version=4)
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in executed.cells)


@pytest.mark.slow
def test_failing_cell_raises_report_error_with_context(tmp_path):
    nb = _notebook(tmp_path / "t.ipynb", BODY)
    with pytest.raises(ReportError) as info:
        execute_notebook(str(nb), {"fail": True}, tmp_path / "out")
    err = info.value
    assert err.context["ename"] == "ValueError" and "asked to fail" in err.context["evalue"]
    assert err.context["cell_index"] == 3  # markdown, parameters, injected parameters, body
    assert (tmp_path / "out" / "t.ipynb").exists()  # kept for inspection


def test_unknown_parameter_is_refused_before_running(tmp_path):
    with pytest.raises(ReportError, match="no parameter"):
        report("audit", [], out=tmp_path, not_a_parameter=1)


@pytest.mark.slow
def test_memlab_report_fleet_audits_the_given_stores(tmp_path, data_dir):
    import subprocess
    import sys

    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "memlab", "report", "fleet",
                          str(data_dir / "demo/elfmem-demo.db"), "--out", str(out),
                          "-p", "workers=0"], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["stores"], metrics["ok"], metrics["failed"]) == (1, 1, 0)
    assert (out / "06-fleet.html").is_file()
