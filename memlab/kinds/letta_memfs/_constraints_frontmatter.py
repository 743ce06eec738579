"""Letta Code's memory-file frontmatter check (``validateMemoryFileFrontmatter``), the files the v2
pre-commit hook runs it on, and the rule name of each of its lines.

Part of :mod:`memlab.kinds.letta_memfs._constraints`, which re-exports the public names. Pure:
text in, error lines out.
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["frontmatter_errors", "frontmatter_paths", "frontmatter_rule"]


def _spaces(text: str) -> str:
    return text.strip(" ")


def _legacy_value(text: str | None, key: str) -> str:
    lines = (text or "").split("\n") if text is not None else []
    try:
        end = lines.index("---", 1)
    except ValueError:
        return ""
    return "\n".join(
        _spaces(line[len(key) + 1 :]) for line in lines[1:end] if line.startswith(f"{key}:")
    )


def frontmatter_errors(path: str, content: str, previous: str | None, *, fmt: str) -> list[str]:
    """``validateMemoryFileFrontmatter`` for one file; ``fmt`` is ``"memfs-v2"`` or
    ``"legacy"``; ``previous`` the accepted (HEAD) text or None for a new file."""
    v2 = fmt == "memfs-v2"
    lines = content.split("\n")
    if v2 and path.split("/")[-1] == "MEMORY.md":
        return [f"{path}: MEMORY.md must not have frontmatter"] if lines[0] == "---" else []
    if lines[0] != "---":
        return [f"{path}: missing frontmatter (must start with ---)"]
    try:
        closing = lines.index("---", 1)
    except ValueError:
        return [f"{path}: frontmatter opened but never closed (missing closing ---)"]
    if not v2 and previous and _legacy_value(previous, "read_only") == "true":
        return [f"{path}: file is read_only and cannot be modified"]
    errors: list[str] = []
    seen: set[str] = set()
    allowed = ["name", "description"] if v2 else ["description", "read_only", "limit"]
    for line in lines[1:closing]:
        if not line:
            continue
        if not v2 and line[0] in " \t":
            continue
        separator = line.find(":")
        raw_key = line if separator < 0 else line[:separator]
        key = _spaces(raw_key) if v2 else raw_key.replace(" ", "")
        value = _spaces(line if separator < 0 else line[separator + 1 :])
        if key not in allowed:
            errors.append(f"{path}: unknown frontmatter key '{key}' (allowed: {' '.join(allowed)})")
            continue
        if v2 and key in seen:
            errors.append(f"{path}: duplicate frontmatter key '{key}'")
        seen.add(key)
        if key == "read_only":
            if not previous:
                errors.append(
                    f"{path}: 'read_only' is a protected field and cannot be set by the agent"
                )
            elif value != _legacy_value(previous, key):
                errors.append(
                    f"{path}: 'read_only' is a protected field and cannot be changed by the agent"
                )
        if (v2 or key == "description") and (not value or (v2 and value in ('""', "''"))):
            errors.append(f"{path}: '{key}' must not be empty")
    for key in ["name", "description"] if v2 else ["description"]:
        if key not in seen:
            errors.append(f"{path}: missing required field '{key}'")
    if not v2 and _legacy_value(previous, "read_only") and not _legacy_value(content, "read_only"):
        errors.append(
            f"{path}: 'read_only' is a protected field and cannot be removed by the agent"
        )
    return errors


def frontmatter_paths(paths: Iterable[str], policy: str) -> list[str]:
    """The files the v2 pre-commit hook checks with :func:`frontmatter_errors` on every commit
    (``git ls-files '*.md'``: the whole tree): not under ``skills/``, and under ``root-marker``
    only projected ones (every folder above holds a ``MEMORY.md``)."""
    md = sorted(p for p in paths if p.endswith(".md"))
    present = set(md)
    out = []
    for path in md:
        if path.startswith("skills/"):
            continue
        if policy == "root-marker":
            parts = path.split("/")[:-1]
            if any(
                "/".join(parts[: i + 1]) + "/MEMORY.md" not in present for i in range(len(parts))
            ):
                continue
        out.append(path)
    return out


_FM_RULES = (
    ("MEMORY.md must not have frontmatter", "index_frontmatter"),
    ("missing frontmatter (must start with ---)", "missing_frontmatter"),
    ("frontmatter opened but never closed", "unclosed_frontmatter"),
    ("file is read_only and cannot be modified", "read_only_modified"),
    ("is a protected field and cannot be set", "protected_set"),
    ("is a protected field and cannot be changed", "protected_changed"),
    ("is a protected field and cannot be removed", "protected_removed"),
    ("unknown frontmatter key", "unknown_key"),
    ("duplicate frontmatter key", "duplicate_key"),
    ("must not be empty", "empty_value"),
    ("missing required field 'name'", "missing_name"),
    ("missing required field 'description'", "missing_description"),
)


def frontmatter_rule(message: str, path: str | None = None) -> str:
    """The rule name of one :func:`frontmatter_errors` line for ``path`` (the hook port's
    names); the path's own text is not searched."""
    tail = message[len(path) + 2 :] if path and message.startswith(f"{path}: ") else message
    for text, rule in _FM_RULES:
        if text in tail:
            return rule
    return "other"
