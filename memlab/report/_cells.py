"""Progress of a notebook run, cell by cell, for :func:`memlab.report.execute_notebook`.

A :mod:`memlab.progress` bar counts the notebook's code cells and names the one running (its
first line of code); a cell still running after
:data:`~memlab.constants.LONG_CELL_SECONDS` gets one :func:`memlab.progress.note` saying so,
and the bar is cleared when the run ends (``leave=False``). The hooks are nbclient's
``on_cell_execute`` / ``on_cell_executed``, which papermill passes through.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from memlab._escape import terminal_line
from memlab.constants import LONG_CELL_SECONDS

__all__ = ["CellProgress", "cell_label"]


def cell_label(source: str, width: int = 48) -> str:
    """A cell as one short line: its first line that is not blank (a comment's text without
    its ``#``: the notebooks open a cell by saying what it does)."""
    for line in source.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            text = terminal_line(text)
            return text if len(text) <= width else text[: width - 1] + "…"
    return "(empty)"


class CellProgress:
    """nbclient hooks that drive one bar over ``total`` code cells (see the module docstring)."""

    def __init__(self, desc: str, total: int, *, long_after: float = LONG_CELL_SECONDS) -> None:
        from memlab.progress import bar

        self.desc = desc
        self.long_after = long_after
        self.bar = bar(total=total, desc=desc, unit="cell", leave=False)
        self.done = 0
        self._timer: threading.Timer | None = None
        self._started = 0.0

    def hooks(self) -> dict[str, Any]:
        return {"on_cell_execute": self.started, "on_cell_executed": self.finished}

    def started(self, cell: Any, cell_index: int, **_: Any) -> None:
        tags = (cell.get("metadata") or {}).get("tags") or []
        label = (
            "the report's parameters"
            if "injected-parameters" in tags
            else cell_label(str(cell.get("source", "")))
        )
        self.bar.set_postfix_str(f"cell {self.done + 1}: {label}", refresh=True)
        self._started = time.monotonic()
        self._cancel()
        self._timer = threading.Timer(self.long_after, self._long, args=(self.done + 1, label))
        self._timer.daemon = True
        self._timer.start()

    def finished(self, cell: Any, cell_index: int, **_: Any) -> None:
        self._cancel()
        self.done += 1
        self.bar.update(1)

    def close(self) -> None:
        self._cancel()
        self.bar.close()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _long(self, number: int, label: str) -> None:
        from memlab.progress import duration, note

        took = duration(time.monotonic() - self._started)
        total = self.bar.total
        note(
            f"{self.desc}: cell {number}{f'/{total}' if total else ''} has been running for "
            f"{took} ({label}); a long step (a simulation, a model load): the bar moves on "
            "when it ends"
        )
