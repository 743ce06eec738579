"""Writing block files as elfmem 0.20 writes them (:func:`format_block`,
:func:`format_blockfile`): every block validated, rendered, and read back with
:func:`~memlab.formats._blockfile_read.parse_blockfile` before the text is returned, so a round
trip cannot drift; and the path of a category's file (:func:`substrate_path`). Part of
:mod:`memlab.formats.blockfile`, which re-exports the public names.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Iterable

from memlab.errors import MigrationError, UnsafePath
from memlab.formats._blockfile_model import (
    CUE_FIELD,
    KNOWN_FIELDS,
    MEMORY_DIR,
    SECTIONS,
    Block,
    content_id,
)
from memlab.formats._blockfile_read import parse_blockfile
from memlab.formats.letta_memfs import is_git_name

__all__ = ["format_block", "format_blockfile", "substrate_path"]


# What the writer accepts, so that every value it emits parses back to itself.
_FIELD_KEY_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_RELATION_KEY_RE = re.compile(r"[a-zA-Z][a-zA-Z0-9_-]*")
_SCALAR_VALUE_RE = re.compile(r"[^\s\[\]]+")
_LIST_VALUE_RE = re.compile(r"\[[^\]\n\r]*\]")


def _has_line_break(text: str) -> bool:
    # str.splitlines() breaks on more than "\n" (\r, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029),
    # and elfmem's parser uses splitlines(), so any of them would cut a one-line field.
    return len((text + "x").splitlines()) > 1


def _check_scalar(block: Block, key: str, value: str) -> None:
    if (
        not isinstance(value, str)
        or not (_SCALAR_VALUE_RE.fullmatch(value) or _LIST_VALUE_RE.fullmatch(value))
        or "-->" in value
    ):
        raise MigrationError(
            f"block {block.id!r} ({block.title[:60]!r}): field {key}={value!r} cannot be written "
            "in an elfmem <!-- --> comment",
            hint="field values must be one word with no spaces, brackets or '-->' (or a [list])",
        )


def _normalised(block: Block) -> Block:
    """The block as it will read back: validated, stripped, id filled in; raises if impossible."""
    if not isinstance(block, Block):
        raise MigrationError(f"expected a memlab Block, got {type(block).__name__}")
    title = block.title.strip() if isinstance(block.title, str) else ""
    if not title or _has_line_break(title):
        raise MigrationError(
            f"block {block.id!r}: title {block.title!r} cannot be a '## ' heading",
            hint="titles must be non-empty and on one line",
        )
    body = block.body.strip() if isinstance(block.body, str) else None
    if body is None:
        raise MigrationError(f"block {block.id!r} ({title[:60]!r}): body is not text")
    block_id = content_id(body) if block.id is None else block.id
    probe = Block(title=title, id=block_id)
    _check_scalar(probe, "id", block_id)
    for key, value in (("created", block.created), ("cls", block.cls)):
        if value is not None:
            _check_scalar(probe, key, value)
    for key, value in block.extra.items():
        if (
            not isinstance(key, str)
            or not _FIELD_KEY_RE.fullmatch(key)
            or key in KNOWN_FIELDS
            or key == CUE_FIELD
        ):
            raise MigrationError(
                f"block {block_id!r} ({title[:60]!r}): extra field name {key!r} cannot be written",
                hint="extra field names are identifiers ([A-Za-z_][A-Za-z0-9_]*) other than "
                "id, tags, pinned, created, cls",
            )
        _check_scalar(probe, key, value)
    for tag in block.tags:
        if (
            not isinstance(tag, str)
            or not tag
            or tag != tag.strip()
            or _has_line_break(tag)
            or any(c in tag for c in ",[]")
            or "-->" in tag
        ):
            raise MigrationError(
                f"block {block_id!r} ({title[:60]!r}): tag {tag!r} cannot be written",
                hint="tags must be non-empty, without surrounding spaces, commas, brackets, "
                "line breaks or '-->'",
            )
    cue = block.cue.strip() if isinstance(block.cue, str) else None
    if cue is not None and _has_line_break(cue):
        raise MigrationError(
            f"block {block_id!r} ({title[:60]!r}): cue must be one line",
            hint="join the cue onto one line",
        )
    for rel, target in block.relations:
        if not _RELATION_KEY_RE.fullmatch(rel) or rel == CUE_FIELD:
            raise MigrationError(
                f"block {block_id!r} ({title[:60]!r}): relation name {rel!r} cannot be written",
                hint="relation names are [A-Za-z][A-Za-z0-9_-]* and not 'cue'",
            )
        if (
            not target
            or target != target.strip()
            or _has_line_break(target)
            or "[" in target
            or "]" in target
        ):
            raise MigrationError(
                f"block {block_id!r} ({title[:60]!r}): {rel} target {target!r} cannot be "
                "written as a [[wikilink]]",
                hint="link targets are block ids: non-empty, one line, no brackets",
            )
    return Block(
        title=title,
        body=body,
        id=block_id,
        tags=list(block.tags),
        pinned=bool(block.pinned),
        created=block.created,
        cls=block.cls,
        cue=cue or None,
        relations=block.relations,
        extra=dict(block.extra),
    )


def _render(b: Block) -> str:
    parts = [f"id: {b.id}"]
    if b.cls:
        parts.append(f"cls: {b.cls}")
    if b.tags:
        parts.append(f"tags: [{', '.join(b.tags)}]")
    parts.append(f"pinned: {'true' if b.pinned else 'false'}")
    if b.created:
        parts.append(f"created: {b.created}")
    parts.extend(f"{k}: {v}" for k, v in b.extra.items())
    head = [f"## {b.title}", f"<!-- {'  '.join(parts)} -->"]
    if b.cue:
        head.append(f"{CUE_FIELD}:: {b.cue}")
    grouped: dict[str, list[str]] = {}
    for rel, target in b.relations:  # already canonical, so dict order is the file order
        grouped.setdefault(rel, []).append(target)
    head.extend(
        f"{rel}:: {', '.join(f'[[{t}]]' for t in targets)}" for rel, targets in grouped.items()
    )
    return "\n".join(head) + f"\n\n{b.body}\n"


_COMPARED = [f.name for f in fields(Block) if f.compare]


def _verify(expected: list[Block], text: str) -> None:
    got, _ = parse_blockfile(text)
    if len(got) != len(expected):
        for want, have in zip(expected, got):
            if want.body != have.body:
                break
        else:
            want = expected[-1]
        raise MigrationError(
            f"block {want.id!r} ({want.title[:60]!r}) would read back as {len(got)} blocks "
            f"instead of {len(expected)}",
            hint="its body has a '## ' line followed by an HTML comment, which elfmem reads as "
            "a new block; change that heading level or the comment",
        )
    for want, have in zip(expected, got):
        for name in _COMPARED:
            if getattr(want, name) != getattr(have, name):
                raise MigrationError(
                    f"block {want.id!r} ({want.title[:60]!r}) would not read back unchanged: "
                    f"{name} {getattr(want, name)!r} -> {getattr(have, name)!r}",
                    hint="a body that starts with a 'key:: value' line is read as a field "
                    "unless the block has a cue or relation line before it",
                )


def format_block(block: Block) -> str:
    """One block as elfmem 0.20 writes it; raises MigrationError if it would not read back.

    Byte-identical to elfmem's ``write_blocks`` for blocks elfmem can express; relations
    outside its vocabulary are written as ``<rel>:: [[id]]`` lines after the known ones. Title,
    body and cue are stripped (elfmem's reader strips them); a block without an id gets
    elfmem's content-hash id.
    """
    b = _normalised(block)
    text = _render(b)
    _verify([b], text)
    return text


def format_blockfile(blocks: Iterable[Block]) -> str:
    """A whole block file (blocks separated by a blank line), checked to read back unchanged.

    Raises MigrationError for a block that cannot be written faithfully, or for an id used
    twice (elfmem refuses such a file).
    """
    normal = [_normalised(b) for b in blocks]
    seen: dict[str, Block] = {}
    for b in normal:
        if b.id in seen:
            raise MigrationError(
                f"id {b.id!r} is used by two blocks ({seen[b.id].title[:60]!r} and "
                f"{b.title[:60]!r}); elfmem refuses a file with a duplicate id",
                hint="give one of them a new id or merge them",
            )
        seen[b.id] = b  # type: ignore[index]
    text = "\n".join(_render(b) for b in normal)
    _verify(normal, text)
    return text


def substrate_path(section: str, category: str) -> str:
    """``.elfmem/memory/<section>/<category>.md``; UnsafePath for a category that escapes it
    (or has a ``.git`` segment, :func:`memlab.formats.letta_memfs.is_git_name`).

    Categories may nest (``pattern/strategy``), as elfmem's export writes them.
    """
    if section not in SECTIONS:
        raise MigrationError(
            f"unknown substrate section {section!r}", hint=f"use one of {', '.join(SECTIONS)}"
        )
    parts = category.split("/") if isinstance(category, str) else [""]
    bad = (
        not category
        or "\\" in category
        or "\x00" in category
        or category.startswith("/")
        or any(
            p in ("", ".", "..") or p != p.strip() or _has_line_break(p) or is_git_name(p)
            for p in parts
        )
        or re.match(r"^[A-Za-z]:", category)
    )
    if bad:
        raise UnsafePath(
            f"category {category!r} cannot be a file under .elfmem/memory/{section}/",
            path=f"{MEMORY_DIR}/{section}",
        )
    return f"{MEMORY_DIR}/{section}/{category}.md"
