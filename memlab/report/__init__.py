"""Run memlab's notebooks with papermill and render self-contained HTML reports.

One path serves tests, the CLI and the scheduled job: :func:`execute_notebook`. A notebook gets
its parameters injected after its ``parameters`` cell (papermill's convention), writes its own
``metrics.json`` into ``output_dir``, and is rendered to HTML with every image embedded, widgets
drawn as static HTML and nothing loaded from the network (``memlab.report._offline``), so a
report opens offline.

Example::

    from memlab.report import report
    report("audit", ["data/demo/elfmem-demo.db"], out="reports/demo", as_of="2026-08-04")
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from memlab.errors import MemlabError, ReportError, require
from memlab.report._notebooks import NOTEBOOKS, notebook_folder, notebook_path
from memlab.report._paths import find_input, output_folder, report_folder, reports_root
from memlab.report._sections import section
from memlab.report._tables import escape_tables, frame_html, titled

__all__ = [
    "NOTEBOOKS",
    "find_input",
    "output_folder",
    "report_folder",
    "reports_root",
    "escape_tables",
    "frame_html",
    "titled",
    "section",
    "notebook_folder",
    "ExecutedReport",
    "execute_notebook",
    "report",
    "notebook_path",
    "write_metrics",
]


@dataclass(frozen=True)
class ExecutedReport:
    kind: str
    notebook: Path  # the executed .ipynb, outputs included
    html: Path
    metrics: dict[str, Any]

    @property
    def folder(self) -> Path:
        return self.html.parent

    def __repr__(self) -> str:
        return f"<ExecutedReport {self.kind}: {self.html} ({len(self.metrics)} metrics)>"


def _absolute(value: Any) -> Any:
    """Resolve path-like parameters so the notebook's working directory does not matter."""
    if isinstance(value, Path):
        return str(value.expanduser().resolve())
    if isinstance(value, (list, tuple)):
        return [_absolute(v) for v in value]
    return value


def _kernel_manager_class():
    """A kernel manager talking over local IPC sockets instead of TCP.

    The kernel is ours and on this machine; TCP would open loopback ports and makes ipykernel
    warn on every report that its traffic is unencrypted.
    """
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import CaselessStrEnum

    class IPCKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc")

        def _ip_default(self) -> str:
            # jupyter_client's default is "kernel-ipc" in the current folder for every kernel
            # without a connection file yet: two reports running at once (report all) would
            # race for the same socket names and read each other's messages. One private
            # name per kernel, in the temp folder (jupyter_client removes the sockets).
            import tempfile
            import uuid

            return os.path.join(tempfile.gettempdir(), f"memlab-kernel-{uuid.uuid4().hex}-ipc")

        async def _async_pre_start_kernel(self, **kw):
            # No progress bars inside a report's kernel: the HTML would keep them as output.
            kw["env"] = {
                **(kw.get("env") or os.environ),
                "MEMLAB_QUIET": "1",
                "TQDM_DISABLE": "1",
                "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                "TRANSFORMERS_VERBOSITY": "error",
            }
            # Every table a report shows goes through memlab's escaper, complete and
            # formatted for people (escape_tables), whatever the notebook itself calls.
            kw["extra_arguments"] = [
                *(kw.get("extra_arguments") or []),
                "--IPKernelApp.exec_lines=from memlab.report import "
                "escape_tables as _memlab_tables; _memlab_tables()",
            ]
            return await super()._async_pre_start_kernel(**kw)

    return IPCKernelManager


def execute_notebook(
    kind_or_name: str,
    params: dict[str, Any],
    out_dir: str | Path,
    *,
    timeout: int = 1800,
    show_code: bool = False,
    long_cell: float | None = None,
) -> ExecutedReport:
    """Execute one notebook with ``params`` into ``out_dir``; render HTML; read metrics.json.

    ``params`` values that are :class:`pathlib.Path` are made absolute. ``output_dir`` is always
    passed as ``out_dir``. A failing cell raises :class:`ReportError` whose ``context`` names
    the cell, the exception and its message; the executed notebook is kept for inspection.
    Where :mod:`memlab.progress` shows bars, a bar counts the notebook's code cells and names
    the one running; a cell running past ``long_cell`` seconds (default
    :data:`~memlab.constants.LONG_CELL_SECONDS`) gets a note saying so, and the bar is cleared
    at the end. The kernel itself runs with ``MEMLAB_QUIET=1`` (and third-party bars off) so
    the report holds no bars. The HTML hides the code
    cells (``show_code=True`` keeps them) and opens with the headline panel of the kind's
    metrics; the executed ``.ipynb`` keeps everything.

    An earlier run's page, executed notebook and ``metrics.json`` in ``out_dir`` are renamed
    ``*.earlier-run.*`` before the notebook runs (:mod:`memlab.report._stale`) and removed when
    it succeeds: after a failed run the folder holds no page or metrics that look like its own.
    """

    pm = require("papermill", "notebooks", feature="rendering reports")
    source = notebook_path(kind_or_name)
    out = Path(out_dir).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    executed = out / source.name
    parameters = {k: _absolute(v) for k, v in params.items()}
    parameters["output_dir"] = str(out)
    from memlab.constants import LONG_CELL_SECONDS
    from memlab.report._cells import CellProgress

    cells = CellProgress(
        source.stem,
        _code_cells(source) + 1,  # + papermill's parameters
        long_after=LONG_CELL_SECONDS if long_cell is None else long_cell,
    )
    from memlab.report._stale import drop_aside, set_aside

    set_aside(out, executed.stem, notebook=executed != source.resolve())
    try:
        pm.execute_notebook(
            str(source),
            str(executed),
            parameters=parameters,
            kernel_name="python3",
            language="python",
            cwd=str(out),
            log_output=False,
            execution_timeout=timeout,
            progress_bar=False,
            kernel_manager_class=_kernel_manager_class(),
            **cells.hooks(),
        )
    except pm.PapermillExecutionError as exc:
        raise ReportError(
            f"cell {exc.cell_index} failed with {exc.ename}: {exc.evalue}",
            path=executed,
            hint="open the executed notebook to see the failing cell" + _kept(out, executed),
            cell_index=exc.cell_index,
            ename=exc.ename,
            evalue=exc.evalue,
        ) from exc
    except MemlabError:
        raise
    except Exception as exc:  # kernel death, missing kernel spec, unreadable notebook...
        raise ReportError(
            f"could not execute {source.name}: {exc}",
            path=executed,
            hint=_kept(out, executed).removeprefix("; ") or None,
        ) from exc
    finally:
        cells.close()
    metrics_file = out / "metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
    html = _render_html(
        executed,
        kind=kind_or_name if kind_or_name in NOTEBOOKS else None,
        metrics=metrics,
        show_code=show_code,
    )
    drop_aside(out, executed.stem)  # this run's page and metrics replace the earlier run's
    return ExecutedReport(kind_or_name, executed, html, metrics)


def _kept(out: Path, executed: Path) -> str:
    """A failed run's hint: the earlier run's page, when the folder keeps one set aside."""
    from memlab.report._stale import earlier_page

    page = earlier_page(out, executed.stem)
    return f"; the earlier run's report is kept as {page.name}" if page else ""


def _code_cells(notebook: Path) -> int:
    """The code cells with code in them (what nbclient runs) of a notebook file."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return 0
    return sum(
        1
        for c in cells
        if isinstance(c, dict)
        and c.get("cell_type") == "code"
        and "".join(c.get("source") or "").strip()
    )


def _render_html(executed: Path, **how: Any) -> Path:
    require("nbconvert", "notebooks", feature="rendering reports")
    from memlab.report._offline import render_html

    return render_html(executed, **how)


def write_metrics(output_dir: str | Path, metrics: dict[str, Any]) -> Path:
    """Write ``metrics.json`` (JSON-safe) where :func:`execute_notebook` will read it."""
    from memlab.audits._base import json_safe

    path = Path(output_dir) / "metrics.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(json_safe(metrics), indent=2, sort_keys=True) + "\n")
    return path


def report(
    kind: str,
    paths: Sequence[str | Path] = (),
    *,
    out: str | Path | None = None,
    show_code: bool = False,
    **params: Any,
) -> ExecutedReport:
    """Render the ``kind`` report for ``paths`` into ``out`` (default
    ``<reports_root()>/<today UTC>/<store>-<kind>``, :func:`memlab.report._paths.report_folder`;
    the root is ``$MEMLAB_REPORTS_DIR``, else the checkout's ``reports/`` when the working
    folder is inside it, else ``./reports``).

    ``paths`` becomes the notebook's ``stores`` parameter (or ``store`` / ``repo`` / ``source``
    when the notebook takes one path); other keyword arguments are passed through as parameters.
    ``show_code=True`` keeps the code cells in the HTML (hidden by default).
    """
    from memlab.report._params import parameters_for

    if out is not None:
        folder = Path(out)
    else:  # reports/<date>/<store>-<kind>: two stores, or two days, never share a folder
        named = (
            list(paths)
            or [
                params[k]
                for k in ("stores", "store", "repo", "source")
                if params.get(k) is not None
            ][:1]
        )
        if len(named) == 1 and isinstance(named[0], (list, tuple)):
            named = list(named[0])
        folder = report_folder(kind, named)
    return execute_notebook(
        kind, parameters_for(kind, list(paths), params), folder, show_code=show_code
    )
