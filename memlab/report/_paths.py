"""Where a notebook's relative paths point, whatever directory it runs in.

A notebook's default parameters name files in the memlab checkout (``data/demo/...``). Run with
plain papermill from the repository root, from ``notebooks/`` or with ``--cwd`` elsewhere, a
relative path is looked for in the working directory first (what a user passing ``-p`` means)
and then in the checkout, so the defaults work from anywhere. Outputs default to
``reports/<kind>/`` in the checkout (``$MEMLAB_REPORTS_DIR/<kind>`` when that is set).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["REPORTS_ENV", "checkout_root", "find_input", "output_folder", "reports_root"]

REPORTS_ENV = "MEMLAB_REPORTS_DIR"


def checkout_root() -> Path | None:
    """The memlab source checkout this package runs from, or None for an installed copy."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "notebooks").is_dir() and (root / "data").is_dir() else None


def _one(value: Any) -> Any:
    if value is None or not isinstance(value, (str, os.PathLike)):
        return value
    path = Path(value).expanduser()
    if path.is_absolute() or path.exists():
        return str(path.resolve())
    root = checkout_root()
    if root is not None and (root / path).exists():
        return str(root / path)
    return str(path)  # let the loader say it is missing, naming the path as given


def find_input(value: Any) -> Any:
    """A path (or list of paths) made absolute: from the working directory if it exists there,
    else from the memlab checkout; anything else (None, numbers) is returned unchanged.

    Example::

        stores = find_input(["data/demo/elfmem-demo.db"])   # works from notebooks/ too
    """
    if isinstance(value, (list, tuple)):
        return [_one(v) for v in value]
    return _one(value)


def reports_root() -> Path:
    """The one rule for where output goes when no folder is named, shared by the CLI
    (``memlab report``, ``report all``) and the notebooks' defaults: ``$MEMLAB_REPORTS_DIR`` if
    set, else the checkout's ``reports/`` when memlab runs from a checkout, else ``./reports``
    in the working directory (an installed wheel)."""
    base = os.environ.get(REPORTS_ENV)
    if base:
        return Path(base).expanduser()
    root = checkout_root()
    return root / "reports" if root is not None else Path("reports")


def output_folder(value: Any, kind: str) -> str:
    """``value`` as given (relative to the working directory), or when None the default
    ``<reports_root()>/<kind>``. The folder is created."""
    if value is None or value == "":
        folder = reports_root() / kind
    else:
        folder = Path(value).expanduser()
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder)
