"""One Letta memory file of a migration: :class:`MemFile`, the label made safe
(:func:`sanitise_label`) and its path (:func:`path_for`), the file's bytes in a layout
(:func:`render`) and Letta Code's pre-commit hook run on them (:func:`check_hook`), and the
helpers the side file's records use (:func:`json_safe`, :func:`sha256`). Part of
:mod:`memlab.migrations._letta`, which re-exports the public names.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from memlab.errors import MigrationError
from memlab.formats import letta_memfs as fmt
from memlab.migrations import _elfmem, _letta_v2
from memlab.migrations._plan import fit_name, refuse_nul, safe_relpath

__all__ = [
    "MemFile",
    "value_or_none",
    "sanitise_label",
    "path_for",
    "json_safe",
    "sha256",
    "render",
    "check_hook",
]

_WS_RE = re.compile(r"\s+")
_CTRL_RE = re.compile(r"[\x00-\x1f\x7f]")


@dataclass
class MemFile:
    """One memory file to write, and what the side file and tables say about it."""

    path: str
    description: str
    body: str
    read_only: bool = False
    limit: int | None = None
    item: str = ""
    label: str = ""
    side: dict[str, Any] = field(default_factory=dict)


def value_or_none(value: Any) -> Any:
    return _elfmem.value_or_none(value)


def sanitise_label(label: Any, block_id: str) -> tuple[str, list[str]]:
    """``(label to use, reasons it differs from the original)``; the label never escapes."""
    reasons: list[str] = []
    text = "" if value_or_none(label) is None else str(label)
    clean = text.replace("\\", "/")
    if clean != text:
        reasons.append("backslashes turned into '/'")
    stripped = _CTRL_RE.sub("", clean)
    if stripped != clean:
        reasons.append("control characters removed")
    parts_in = stripped.split("/")
    parts = [p for p in parts_in if p.strip() not in ("", ".", "..")]
    if len(parts) != len(parts_in):
        if stripped.startswith("/"):
            reasons.append("absolute path made relative")
        if any(p.strip() == ".." for p in parts_in):
            reasons.append("'..' segments dropped")
        rest = parts_in[1:] if stripped.startswith("/") else parts_in  # "/x": said above
        if any(p.strip() in ("", ".") for p in rest):
            reasons.append("empty or '.' segments dropped")
    fixed = []
    for p in parts:
        q = _WS_RE.sub("-", p.strip()).lstrip(".")
        if q != p:
            reasons.append(f"segment {p!r} became {q or '_'!r} (no whitespace, no leading dot)")
        q = q or "_"
        short = fit_name(q, reserve=len(".md"))
        if short != q:
            reasons.append(
                f"segment of {len(q.encode('utf-8'))} bytes shortened to {short!r} "
                "(file names are limited to 255 bytes; the suffix is a hash of the "
                "whole segment, so it is stable and distinct)"
            )
        fixed.append(short)
    if not fixed:
        reasons.append("nothing usable left of the label")
        fixed = [f"block-{block_id}"]
    return "/".join(fixed), reasons


def path_for(label: str) -> str:
    """``system/{label}.md`` for a plain label; a label with a path keeps it."""
    full = label if "/" in label else f"system/{label}"
    return safe_relpath(fmt.path_for_label(full))


def json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return json_safe(value.tolist())
    return value_or_none(value)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def render(f: MemFile, layout: str = "v1") -> bytes:
    """The bytes of a memory file in ``layout`` (v2: :func:`memlab.migrations._letta_v2.render`)."""
    if layout == "v2":
        return _letta_v2.render(f)
    refuse_nul(f.path, f.body, f.item)
    return fmt.render_memfs_file(
        f.description, f.body, read_only=f.read_only, limit=f.limit
    ).encode("utf-8")


def check_hook(files: list[MemFile], rendered: dict[str, bytes]) -> list[dict]:
    """Flags for files Letta's hook would reject; MigrationError for anything but read_only.

    ``rendered`` is ``{path: render(file)}``, the bytes that will be committed.
    """
    flags: list[dict] = []
    for f in files:
        violations = fmt.check_precommit(f.path, rendered[f.path].decode("utf-8"), None, change="A")
        unexpected = [v for v in violations if not (f.read_only and v.rule == "protected_set")]
        if unexpected:
            shown = "; ".join(f"{v.rule}: {v.message}" for v in unexpected)
            raise MigrationError(
                f"{f.path} would fail Letta Code's pre-commit hook: {shown}",
                path=f.path,
                hint="report this as a memlab bug",
            )
        if f.read_only:
            flags.append(
                {
                    "kind": "read_only_by_migration",
                    "item": f.item,
                    "path": f.path,
                    "severity": "info",
                    "message": "read_only: true is set by the migration, as Letta's server "
                    "does when it creates a memfs repo; Letta Code's hook forbids "
                    "agents to set it, and from now on protects the file",
                }
            )
    return flags
