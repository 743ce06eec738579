"""Where a notebook's relative paths point, whatever directory it runs in.

A notebook's default parameters name files in the memlab checkout (``data/demo/...``). Run with
plain papermill from the repository root, from ``notebooks/`` or with ``--cwd`` elsewhere, a
relative path is looked for in the working directory first (what a user passing ``-p`` means)
and then in the checkout, so the defaults work from anywhere.

Outputs go under :func:`reports_root`: ``$MEMLAB_REPORTS_DIR`` when set, else the checkout's
``reports/`` when the working folder is inside the checkout, else ``./reports`` (never into a
checkout the user is not in, nor into an installed package). Under it a report rendered
without a folder named goes to ``<date>/<store>-<kind>/`` (:func:`report_folder`), so the
reports of two stores, or of two days, do not overwrite each other; a notebook run by itself
without ``output_dir`` writes ``<kind>/`` (:func:`output_folder`).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import urlsplit

__all__ = [
    "REPORTS_ENV",
    "checkout_root",
    "find_input",
    "output_folder",
    "reports_root",
    "report_folder",
    "store_label",
]

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
    set, else the checkout's ``reports/`` when memlab runs from a checkout and the working
    folder is inside it, else ``./reports`` in the working folder. A working folder inside the
    installed memlab package is refused (:class:`~memlab.errors.ReportError`): nothing is
    written into an installed package."""
    base = os.environ.get(REPORTS_ENV)
    if base:
        return Path(base).expanduser()
    here = Path.cwd().resolve()
    root = checkout_root()
    if root is not None and here.is_relative_to(root):
        return root / "reports"
    package = Path(__file__).resolve().parents[1]
    if root is None and here.is_relative_to(package):
        from memlab.errors import ReportError

        raise ReportError(
            "will not write reports inside the installed memlab package",
            path=here,
            hint=f"run from another folder, pass --out, or set {REPORTS_ENV}",
        )
    return Path("reports")


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: A folder name that says little on its own: the store is named by its parent too.
_GENERIC = {"memory", ".git", ".elfmem", ".letta", "data", "db"}
#: At most this many stores are named in a default folder; the rest are counted.
_NAMED = 3


def store_label(path: Any) -> str:
    """A store as a folder-name part: a file's stem (``elfmem-demo`` for ``elfmem-demo.db``),
    a folder's name (with its parent's when the name is generic: ``agent-123-memory``), a
    database URL's host and database (never its user or password); letters, digits, ``.``,
    ``_`` and ``-`` only, at most 48 characters."""
    text = str(path)
    if "://" in text:
        parts = urlsplit(text)
        label = "-".join(p for p in (parts.hostname, parts.path.strip("/")) if p)
    else:
        p = Path(text).expanduser()
        label = p.stem if p.suffix and not p.is_dir() else p.name
        if label in _GENERIC and p.parent.name:
            label = f"{p.parent.name}-{label.lstrip('.')}"
    label = _UNSAFE.sub("_", label).strip("._-")[:48].strip("._-")
    return label or "store"


def report_folder(kind: str, stores: Sequence[Any] = (), *, day: str | None = None) -> Path:
    """A report's default folder: ``<reports_root()>/<day>/<store>-<kind>`` (``day``: today,
    UTC), e.g. ``reports/2026-12-06/elfmem-demo-audit``; several stores are joined by ``+``
    (the first three named, the rest counted); no store, ``<day>/<kind>``."""
    day = day or dt.datetime.now(dt.timezone.utc).date().isoformat()
    labels = [store_label(s) for s in stores if s is not None and str(s)]
    if len(labels) > _NAMED:
        labels = labels[:_NAMED] + [f"{len(labels) - _NAMED}more"]
    name = "+".join(labels) + f"-{kind}" if labels else kind
    return reports_root() / day / name


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
