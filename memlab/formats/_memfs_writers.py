"""Letta Code memfs writers: v1 and v2 memory files (:func:`render_memfs_file`,
:func:`render_memfs_v2_file`) and the scalar quoting they share (:func:`yaml_text`,
:func:`quoted_line`). Part of :mod:`memlab.formats.letta_memfs`, which re-exports them.
"""

from __future__ import annotations

import json
import re

from memlab.formats._yaml import read_yaml

__all__ = [
    "yaml_text",
    "render_memfs_file",
    "quoted_line",
    "render_memfs_v2_file",
    "initial_description",
    "frontmatter_value",
    "render_initial_memory_file",
]

# --------------------------------------------------------------------------- writers


def _one_line(description: str) -> str:
    # The client memory tool reads frontmatter line by line and keeps only the first line of a
    # wrapped value, so a description must stay on one line to survive the next tool edit.
    return " ".join(str(description).split())


def _json_quoted(value: str) -> str:
    """``value`` JSON-quoted, with each character YAML refuses raw even inside double quotes
    (DEL, C1 controls; JSON leaves them raw) and every other non-printable one escaped."""
    return "".join(
        c if c.isprintable() else (f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        for c in json.dumps(value, ensure_ascii=False)
    )


def yaml_text(value: str) -> str:
    """``value`` as one YAML scalar: plain when every YAML reader gets the same text back,
    JSON-quoted (:func:`_json_quoted`) otherwise."""
    plain_ok = read_yaml(f"k: {value}").value == {"k": value} and read_yaml(
        f"k: {value}", base=True
    ).value == {"k": value}
    return value if plain_ok else _json_quoted(value)


def render_memfs_file(
    description: str, body: str, *, read_only: bool = False, limit: int | None = None
) -> str:
    """A v1 memory file (``system/…`` or ``reference/…``) the current hook accepts.

    The description is flattened to one non-empty line, written plain when YAML reads it back
    unchanged and JSON-quoted otherwise (:func:`yaml_text`), so ``no``, ``0123``, a leading
    ``#`` or a DEL character survive. ``read_only`` is
    written only when true (as the server does); ``limit`` only when given (a positive integer,
    which also satisfies the February 2026 hook).
    """
    desc = _one_line(description)
    if not desc:
        raise ValueError("a memfs file needs a non-empty description (the hook requires one)")
    lines = ["---", f"description: {yaml_text(desc)}"]
    if limit is not None:
        if isinstance(limit, bool) or int(limit) != limit or int(limit) <= 0:
            raise ValueError(f"limit must be a positive integer, not {limit!r}")
        lines.append(f"limit: {int(limit)}")
    if read_only:
        lines.append("read_only: true")
    lines.append("---")
    return "\n".join(lines) + "\n\n" + body


def quoted_line(text: str) -> str:
    """``text`` on one line, JSON-quoted as Letta's v2 writer quotes values
    (:func:`_json_quoted`: DEL and C1 controls escaped, which YAML refuses raw)."""
    return _json_quoted(_one_line(text))


def render_memfs_v2_file(name: str, description: str, body: str) -> str:
    """A memfs v2 file: exactly ``name`` and ``description``, values :func:`quoted_line`."""
    name_line, desc = _one_line(name), _one_line(description)
    if not name_line or not desc:
        raise ValueError("memfs v2 files need a non-empty name and description")
    return f"---\nname: {quoted_line(name_line)}\ndescription: {quoted_line(desc)}\n---\n\n{body}"


def initial_description(description: str | None, label: str) -> str:
    """Letta Code's ``renderInitialMemoryFile`` description: ``sanitizeFrontmatterValue`` (each
    ``\\n`` or ``\\r\\n`` a space, then trimmed) of a non-blank description, else
    ``Memory block {label}``."""
    if isinstance(description, str) and description.strip():
        return re.sub(r"\r?\n", " ", description).strip()
    return f"Memory block {label}"


_BLOCK_SCALAR = re.compile(r"^[|>][+-]?$")


def frontmatter_value(value: str) -> str:
    """``value`` as Letta Code writes it, unquoted: its readers take the text after the first
    ``:`` of the line, trimmed, literally (``parseFrontmatter``, ``validateMemoryFileFrontmatter``),
    so ``a: b`` or ``no`` read back as written. JSON-quoted only where they would not: a block
    scalar indicator (``|``, ``>-``…, which ``parseFrontmatter`` reads as the lines below) and
    ``""`` / ``''``, which the validator counts as empty."""
    return quoted_line(value) if _BLOCK_SCALAR.match(value) or value in ('""', "''") else value


def render_initial_memory_file(name: str, description: str, body: str) -> str:
    """A memfs v2 file as Letta Code 0.34.12 creates it (``renderInitialMemoryFile``):
    ``---``, ``name: …``, ``description: …``, ``---`` and the body, joined by newlines (no
    blank line before the body). Values are written unquoted, as Letta does, unless Letta's
    reader would get a different value back (:func:`frontmatter_value`); each must be one line.
    Strict YAML may refuse such a frontmatter (``a: b: c``); Letta Code never parses it as YAML."""
    for key, value in (("name", name), ("description", description)):
        if not value.strip() or "\n" in value or "\r" in value:
            raise ValueError(f"a memfs v2 {key} must be one non-empty line, not {value!r}")
    return "\n".join(
        [
            "---",
            f"name: {frontmatter_value(name)}",
            f"description: {frontmatter_value(description)}",
            "---",
            body,
        ]
    )
