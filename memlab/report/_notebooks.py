"""The report notebooks: which notebook each report kind runs (:data:`NOTEBOOKS`) and where
the notebooks are (:func:`notebook_folder`, :func:`notebook_path`)."""

from __future__ import annotations

from pathlib import Path

from memlab.errors import ReportError

__all__ = ["NOTEBOOKS", "notebook_folder", "notebook_path"]

#: report kind -> notebook file; the kind is what `memlab report KIND` takes.
NOTEBOOKS = {
    "audit": "01-audit.ipynb",
    "memfs": "02-memfs-audit.ipynb",
    "migration": "03-migration.ipynb",
    "simulation": "04-simulation.ipynb",
    "review": "05-review.ipynb",
    "fleet": "06-fleet.ipynb",
}


def notebook_folder() -> Path:
    """Where the report notebooks are: ``memlab/notebooks/`` inside an installed wheel (the
    build copies them there), else the checkout's ``notebooks/`` (an editable install)."""
    packaged = Path(__file__).resolve().parents[1] / "notebooks"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "notebooks"


def notebook_path(kind_or_name: str) -> Path:
    """The committed notebook for a report kind ('audit') or a file name ('01-audit.ipynb')."""
    if kind_or_name.endswith(".ipynb") and Path(kind_or_name).is_file():
        return Path(kind_or_name).resolve()  # a notebook of the user's own
    name = NOTEBOOKS.get(kind_or_name, kind_or_name)
    path = notebook_folder() / name
    if not path.exists():
        known = ", ".join(sorted(NOTEBOOKS))
        raise ReportError(f"no notebook {name!r}", path=path, hint=f"report kinds: {known}")
    return path
