"""Map `memlab report KIND PATH...` onto a notebook's own parameters cell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memlab.errors import ReportError, require
from memlab.report._notebooks import notebook_path

# Parameter names that take store paths, in the order the notebook declares them.
_PATH_PARAMS = ("stores", "store", "repo", "source", "destination", "instance", "instance_path")


def declared_parameters(kind: str) -> dict[str, Any]:
    """The names (and papermill's inferred types/defaults) of a notebook's parameters cell."""
    pm = require("papermill", "notebooks", feature="rendering reports")
    return pm.inspect_notebook(str(notebook_path(kind)))


def parameters_for(kind: str, paths: list[str | Path], params: dict[str, Any]) -> dict[str, Any]:
    declared = declared_parameters(kind)
    unknown = sorted(set(params) - set(declared))
    if unknown:
        raise ReportError(f"the {kind} notebook has no parameter(s) {', '.join(unknown)}",
                          hint=f"its parameters: {', '.join(declared)}")
    slots = [name for name in declared if name in _PATH_PARAMS]
    out = dict(params)
    if not paths:
        return out
    if slots and slots[0] == "stores":
        out["stores"] = [Path(p) for p in paths]
        return out
    if len(paths) > len(slots):
        raise ReportError(f"the {kind} report takes {len(slots)} path(s) ({', '.join(slots) or 'none'}), "
                          f"got {len(paths)}")
    for name, value in zip(slots, paths):
        out[name] = Path(value)
    return out
