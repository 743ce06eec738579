"""A report folder run again: an earlier run's outputs never pass for this run's.

A report folder holds one run of a notebook: the executed ``<stem>.ipynb``, the
``<stem>.html`` rendered from it and the ``metrics.json`` the notebook wrote. A run that fails
keeps its executed notebook (to see the failing cell) and renders no page, so the earlier run's
page and metrics would stay beside it looking like this run's. Before a notebook runs,
:func:`set_aside` renames the three to names that say whose they are (``01-audit.html`` ->
``01-audit.earlier-run.html``, ``metrics.json`` -> ``metrics.earlier-run.json``); a run that
succeeds removes those (:func:`drop_aside`: its own outputs replace them), one that fails or is
interrupted leaves them. So ``<stem>.html`` in a folder is the last run's or absent, and so is
``metrics.json``. `memlab report all` does the same for the reports of a store it could not
load (:func:`set_aside_reports`), and removes an earlier run's failure page from a folder whose
step now runs (:func:`drop_error_page`).

Only memlab's own outputs are moved or removed: the names above (which a successful run
overwrites anyway), the ``.earlier-run`` names made from them, and an ``error.html`` that is
memlab's failure page.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "EARLIER",
    "aside_name",
    "set_aside",
    "drop_aside",
    "earlier_page",
    "earlier_report",
    "executed_notebook",
    "set_aside_reports",
    "drop_error_page",
]

#: What an earlier run's page and metrics are renamed with: ``<name>.earlier-run.<suffix>``.
EARLIER = "earlier-run"
#: The start of every failure page's title (:func:`memlab.report._index.error_page`).
_ERROR_TITLE = "<title>memlab report failed:"


def _outputs(folder: Path, stem: str, notebook: bool = True) -> list[Path]:
    return [
        folder / f"{stem}.html",
        *([folder / f"{stem}.ipynb"] if notebook else []),
        folder / "metrics.json",
    ]


def aside_name(path: Path) -> Path:
    """``01-audit.html`` -> ``01-audit.earlier-run.html``."""
    return path.with_name(f"{path.stem}.{EARLIER}{path.suffix}")


def set_aside(folder: str | Path, stem: str, *, notebook: bool = True) -> list[Path]:
    """Rename an earlier run's ``<stem>.html``, ``<stem>.ipynb`` (not with ``notebook=False``:
    the notebook run is that file itself) and ``metrics.json`` in ``folder`` to their
    :func:`aside_name` (replacing an older set-aside copy); returns the new names."""
    moved = []
    for path in _outputs(Path(folder), stem, notebook):
        if path.is_file():
            os.replace(path, aside_name(path))
            moved.append(aside_name(path))
    return moved


def drop_aside(folder: str | Path, stem: str) -> None:
    """Remove what :func:`set_aside` kept in ``folder``: a run that succeeded replaced it."""
    for path in _outputs(Path(folder), stem):
        aside = aside_name(path)
        if aside.is_file() and not aside.is_symlink():
            aside.unlink()


def earlier_page(folder: str | Path, stem: str) -> Path | None:
    """The set-aside page of an earlier run in ``folder``, or None."""
    page = aside_name(Path(folder) / f"{stem}.html")
    return page if page.is_file() else None


def drop_error_page(page: Path) -> None:
    """Remove ``page`` when it is memlab's failure page (an earlier run's, in a folder run again);
    any other file of that name is left."""
    if not page.is_file() or page.is_symlink():
        return
    try:
        with open(page, encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return
    if head.startswith("<!doctype html>") and _ERROR_TITLE in head:
        page.unlink()


def set_aside_reports(store_folder: str | Path) -> None:
    """:func:`set_aside` in each report folder (``<store_folder>/<kind>/``) of a store that
    `memlab report all` could not load this time: none of its reports runs."""
    from memlab.report._notebooks import NOTEBOOKS

    for kind, notebook in NOTEBOOKS.items():
        sub = Path(store_folder) / kind
        if sub.is_dir() and not sub.is_symlink():
            set_aside(sub, Path(notebook).stem)


def earlier_report(folder: str | Path, kind: str) -> Path | None:
    """The set-aside page of an earlier run of report ``kind`` in its report folder ``folder``."""
    from memlab.report._notebooks import NOTEBOOKS

    return earlier_page(folder, Path(NOTEBOOKS[kind]).stem) if kind in NOTEBOOKS else None


def executed_notebook(folder: str | Path, kind: str) -> Path | None:
    """The executed notebook of report ``kind`` in its report folder ``folder`` (the last
    run's, never one set aside), or None."""
    from memlab.report._notebooks import NOTEBOOKS

    if kind not in NOTEBOOKS:
        return None
    path = Path(folder) / NOTEBOOKS[kind]
    return path if path.is_file() else None
