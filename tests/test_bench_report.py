"""benchmarks/bench_report.py times `report all` by wrapping papermill's execute_notebook and
memlab's HTML render; the wrappers must pass every argument through (``_render_html`` takes
``kind``, ``metrics``, ``show_code``), or the benchmark dies before it measures anything."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def bench():
    """The benchmark module. It sets MEMLAB_QUIET (and the offline flags) in os.environ for its
    own process when imported; the environment is put back so no later test runs quiet."""
    pytest.importorskip("papermill")
    saved = dict(os.environ)
    spec = importlib.util.spec_from_file_location("bench_report",
                                                  ROOT / "benchmarks" / "bench_report.py")
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_bench_report_timers_pass_every_argument_through(bench, monkeypatch):
    import papermill

    import memlab.report as report_module

    seen: dict = {}

    def render(executed, **how):
        seen["render"] = (executed, how)
        return "page.html"

    def execute(source, output, *args, **kwargs):
        seen["execute"] = (source, output, args, kwargs)
        return "nb"

    monkeypatch.setattr(report_module, "_render_html", render)
    monkeypatch.setattr(papermill, "execute_notebook", execute)
    bench._instrument()
    assert report_module._render_html("x.ipynb", kind="simulation", metrics={"a": 1},
                                      show_code=False) == "page.html"
    assert seen["render"] == ("x.ipynb", {"kind": "simulation", "metrics": {"a": 1},
                                          "show_code": False})
    assert papermill.execute_notebook("s.ipynb", "x.ipynb", parameters={"seed": 0},
                                      cwd="/tmp") == "nb"
    assert seen["execute"] == ("s.ipynb", "x.ipynb", (), {"parameters": {"seed": 0},
                                                          "cwd": "/tmp"})
    assert set(bench._timings["x.ipynb"]) == {"execute", "render"}
