"""Map `memlab report KIND PATH...` onto a notebook's own parameters cell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memlab.errors import ReportError, require
from memlab.report._notebooks import NOTEBOOKS, notebook_path

__all__ = ["declared_parameters", "parameters_for", "parameters_panel"]

#: Parameters a report's parameters panel leaves out: where its own files go.
_NOT_SHOWN = ("output_dir",)

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
        raise ReportError(
            f"the {kind} notebook has no parameter(s) {', '.join(unknown)}",
            hint=f"its parameters: {', '.join(declared)}",
        )
    slots = [name for name in declared if name in _PATH_PARAMS]
    out = dict(params)
    if not paths:
        return out
    if slots and slots[0] == "stores":
        out["stores"] = [Path(p) for p in paths]
        return out
    if len(paths) > len(slots):
        raise ReportError(
            f"the {kind} report takes {len(slots)} path(s) ({', '.join(slots) or 'none'}), "
            f"got {len(paths)}"
        )
    for name, value in zip(slots, paths):
        out[name] = Path(value)
    return out


def _shown(value: Any) -> str:
    """A parameter's value for the panel: a path as its last component (the report shows no
    machine paths), a list item by item, anything else as Python writes it."""
    if isinstance(value, (list, tuple)):
        return ", ".join(_shown(v) for v in value) or "(none)"
    if isinstance(value, str) and ("/" in value or value.endswith((".db", ".af", ".json"))):
        return Path(value).name or value
    if value is None:  # a parameter left unset: one word, never Python's "None"
        return "none"
    return repr(value) if isinstance(value, str) else str(value)


def parameters_panel(nb: Any, kind: str | None) -> str:
    """The parameters an executed report ran with, as an HTML panel for its top: each
    parameter of the notebook's parameters cell with the value used (``(default)`` when the
    run did not pass it), the memlab version and when it ran. Empty for a notebook papermill
    did not run. Every text goes through :func:`memlab._escape.html`."""
    import memlab
    from memlab._escape import html as esc

    meta = (nb.get("metadata") or {}).get("papermill")
    if not isinstance(meta, dict):
        return ""
    passed = meta.get("parameters") or {}
    declared: dict[str, Any] = {}
    if kind in NOTEBOOKS:
        try:
            declared = declared_parameters(str(kind))
        except Exception:  # an unreadable parameters cell: show what was passed
            declared = {}
    rows = []
    for name in [*declared, *(n for n in passed if n not in declared)]:
        if name in _NOT_SHOWN:
            continue
        if name in passed:
            value = _shown(passed[name])
        else:
            value = f"{declared[name].get('default')} (default)"
        rows.append((name, value))
    rows.append(("memlab", memlab.__version__))
    if meta.get("end_time"):
        rows.append(("ran", str(meta["end_time"])[:19].replace("T", " ") + " UTC"))
    cells = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    return (
        '<div class="memlab-parameters"><h2>Parameters</h2><div class="memlab-table">'
        f'<table class="memlab-parameters-table"><tbody>{cells}</tbody></table></div></div>'
    )
