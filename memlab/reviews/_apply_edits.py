"""Apply's file edits: the texts of the files at HEAD, edited in memory item by item
(``Edits``, ``apply_item``), frontmatter key and body changes, block archiving, and the guards
that refuse a pinned, constitutional, identity or read-only unit. Nothing here writes to disk
or to git; :mod:`memlab.reviews._apply` commits the result.

A step a kind's own removal or edit writes is made by that object (:func:`apply_item`); memlab's
(:func:`delete_file`, :func:`archive_block`, :func:`set_body`) are here for
:mod:`memlab.reviews._adapters`, as are the drift and rule steps of a memory repository."""

from __future__ import annotations

import difflib
import json
import re
from typing import Any, Mapping, cast

from memlab.errors import ProposalRejected, StaleProposal
from memlab.formats._yaml import read_yaml
from memlab.formats.letta_memfs import yaml_text
from memlab.reviews import _repo
from memlab.reviews._proposal import Item
from memlab.reviews._units import CONSTITUTIONAL_TAG, ROLE_TAG_PREFIX, is_identity_path

__all__ = ["Edits", "apply_item", "delete_file", "archive_block", "set_body", "blob_text"]

# ---- file edits ------------------------------------------------------------------------------


def _yaml_scalar(value: str) -> str:
    """``value`` as one YAML scalar that reads back as the text meant. A proposal's memfs v2
    name arrives JSON-quoted (as Letta writes names) and is kept so only when YAML reads it back
    as that string; anything else is the writer's one rule (:func:`letta_memfs.yaml_text`:
    plain when every reader agrees, JSON-quoted otherwise)."""
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        try:
            meant = json.loads(value)
        except ValueError:
            meant = None
        if isinstance(meant, str) and read_yaml(f"k: {value}").value == {"k": meant}:
            return value
    return yaml_text(value)


def _fm_bounds(lines: list[str], path: str, item: Item) -> tuple[int, int]:
    if not lines or lines[0].rstrip("\r") != "---":
        raise ProposalRejected(f"item {item.id}: {path} has no frontmatter at HEAD", path=path)
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") == "---":
            return 1, i
    raise ProposalRejected(f"item {item.id}: {path} frontmatter is never closed", path=path)


def _key_span(lines: list[str], start: int, end: int, key: str) -> tuple[int, int] | None:
    for i in range(start, end):
        if re.match(rf"^{re.escape(key)}[ \t]*:", lines[i]):
            j = i + 1
            while j < end and (lines[j][:1] in (" ", "\t")):
                j += 1
            return i, j
    return None


def _set_key(text: str, key: str, value: str, path: str, item: Item, *, raw: bool = False) -> str:
    lines = text.split("\n")
    start, end = _fm_bounds(lines, path, item)
    # raw: the value is YAML already (a limit must stay a bare integer, not a quoted string).
    new = f"{key}: {value if raw else _yaml_scalar(value)}"
    span = _key_span(lines, start, end, key)
    if span:
        lines[span[0] : span[1]] = [new]
    else:
        lines[end:end] = [new]
    return "\n".join(lines)


def _remove_key(text: str, key: str, path: str, item: Item) -> str:
    lines = text.split("\n")
    start, end = _fm_bounds(lines, path, item)
    span = _key_span(lines, start, end, key)
    if span is None:
        raise StaleProposal(
            f"item {item.id}: {path} has no frontmatter key {key!r} any more", path=path
        )
    del lines[span[0] : span[1]]
    return "\n".join(lines)


def _block_span(text: str, block_id: str, path: str, item: Item) -> tuple[list[str], int, int, Any]:
    from memlab.formats.blockfile import parse_blockfile

    blocks, _ = parse_blockfile(text, file=path)
    lines = text.split("\n")
    for n, b in enumerate(blocks):
        if b.id == block_id:
            start = cast(int, b.line) - 1  # parse_blockfile sets every block's line
            end = cast(int, blocks[n + 1].line) - 1 if n + 1 < len(blocks) else len(lines)
            return lines, start, end, b
    raise StaleProposal(f"item {item.id}: block {block_id} is not in {path} at HEAD", path=path)


def _guard_block(block: Any, path: str, item: Item) -> None:
    tags = list(block.tags or [])
    why = []
    if block.pinned:
        why.append("pinned")
    if CONSTITUTIONAL_TAG in tags or any(t.startswith(ROLE_TAG_PREFIX) for t in tags):
        why.append("constitutional")
    if block.cls == "identity":
        why.append("an identity block")
    if why:
        raise ProposalRejected(
            f"item {item.id} would remove block {block.id} ({block.title[:60]!r}), which is "
            f"{' and '.join(why)}",
            path=path,
            hint="untick it: pinned and constitutional blocks are never removed by apply",
        )


def _guard_file(text: str | None, path: str, item: Item, *, removes: bool) -> None:
    if text is None:
        return
    from memlab.formats.letta_memfs import read_frontmatter

    fm = read_frontmatter(text)
    if fm.read_only is True or fm.fields.get("read_only", "").strip().lower() == "true":
        raise ProposalRejected(
            f"item {item.id} would change {path}, which is read_only",
            path=path,
            hint="untick it: read-only memory files are edited only by their owner, never by apply",
        )
    if removes and is_identity_path(path):
        raise ProposalRejected(
            f"item {item.id} would delete the identity file {path}",
            path=path,
            hint="untick it: identity files are never removed by apply",
        )


def blob_text(repo: Any, sha: str, path: str) -> str:
    """A blob as text, or a clear refusal: apply edits memory files as UTF-8 text only."""
    try:
        data = _repo.read_blob(repo, sha)
    except ValueError as exc:  # the blob is not in the object store
        raise StaleProposal(
            f"the proposal needs {path} at blob {sha[:12]}, which this repo no "
            f"longer has ({type(exc).__name__})",
            path=path,
        ) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProposalRejected(
            f"{path} is not UTF-8 text, so apply cannot edit it",
            path=path,
            hint="untick the items that touch it and edit it by hand",
        ) from exc


class Edits:
    """File texts at HEAD, edited in memory item by item."""

    def __init__(self, repo: Any, head: str) -> None:
        self.repo, self.head = repo, head
        self.text: dict[str, str | None] = {}
        self.original: dict[str, str | None] = {}
        self.owner: dict[str, str] = {}  # path -> first item that changed it

    def get(self, path: str) -> str | None:
        if path not in self.text:
            sha = _repo.blob_at(self.repo, self.head, path)
            value = None if sha is None else blob_text(self.repo, sha, path)
            self.text[path] = self.original[path] = value
        return self.text[path]

    def put(self, path: str, value: str | None, item: Item) -> None:
        self.get(path)
        self.text[path] = value
        self.owner.setdefault(path, item.id)

    def need(self, path: str, item: Item) -> str:
        value = self.get(path)
        if value is None:
            other = self.owner.get(path)
            if other:
                raise ProposalRejected(
                    f"items {other} and {item.id} both change {path}, and {other} removes it",
                    path=path,
                    hint="tick only one of them",
                )
            raise StaleProposal(f"item {item.id}: {path} is not in the commit", path=path)
        return value

    def changes(self) -> dict[str, bytes | None]:
        return {
            p: (None if t is None else t.encode("utf-8"))
            for p, t in self.text.items()
            if t != self.original[p]
        }

    def diff(self) -> str:
        out: list[str] = []
        for path in sorted(self.text):
            old, new = self.original[path], self.text[path]
            if old == new:
                continue
            out.extend(
                difflib.unified_diff(
                    (old or "").splitlines(keepends=True),
                    (new or "").splitlines(keepends=True),
                    fromfile="/dev/null" if old is None else f"a/{path}",
                    tofile="/dev/null" if new is None else f"b/{path}",
                )
            )
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n\\ No newline at end of file\n"
        return "".join(out)


def _steps(item: Item) -> list[dict[str, Any]]:
    """The file changes of an item: its ``steps`` (none for a keep-as-is option)."""
    if "steps" in item.change:
        return list(item.change["steps"])
    return [item.change]


def _set_body(text: str, body: str, path: str, item: Item) -> str:
    lines = text.split("\n")
    if lines and lines[0].rstrip("\r") == "---":
        _, end = _fm_bounds(lines, path, item)
        return "\n".join(lines[: end + 1]) + "\n\n" + body.rstrip("\n") + "\n"
    return body.rstrip("\n") + "\n"


def apply_item(edits: Edits, item: Item, own: Mapping[str, Any]) -> None:
    """Make ``item``'s steps in ``edits``: a step whose ``op`` is in ``own`` by that behaviour
    object (the kind's :class:`~memlab.kinds.Removal` or :class:`~memlab.kinds.Edit`), the
    drift and rule steps of a memory repository here."""
    for step in _steps(item):
        behaviour = own.get(str(step.get("op")))
        if behaviour is not None:
            behaviour.apply(edits, step, item)
        else:
            _apply_step(edits, item, step)


def delete_file(edits: Edits, step: Mapping[str, Any], item: Item) -> None:
    """Delete the step's ``file`` (never an identity or read-only file)."""
    path = step["file"]
    text = edits.need(path, item)
    _guard_file(text, path, item, removes=True)
    edits.put(path, None, item)


def archive_block(edits: Edits, step: Mapping[str, Any], item: Item) -> None:
    """Move the block ``block_id`` of the step's ``file`` to the end of its archive file
    ``to`` (never a pinned, constitutional or identity block)."""
    path = step["file"]
    text = edits.need(path, item)
    lines, start, end, block = _block_span(text, step["block_id"], path, item)
    _guard_block(block, path, item)
    chunk = lines[start:end]
    while chunk and chunk[-1].strip() == "":
        chunk.pop()
    rest = lines[:start] + lines[end:]
    while len(rest) > 1 and rest[-1] == "" and rest[-2].strip() == "":
        rest.pop()  # removing the last block leaves its separator blank line at the end
    edits.put(path, "\n".join(rest), item)
    dest = step["to"]
    archive = edits.get(dest) or ""
    if archive and not archive.endswith("\n"):
        archive += "\n"
    if archive.strip():
        archive += "\n"
    edits.put(dest, archive + "\n".join(chunk) + "\n", item)


def set_body(edits: Edits, step: Mapping[str, Any], item: Item) -> None:
    """Replace the body of the step's ``file`` with ``body``, its frontmatter kept."""
    path = step["file"]
    text = edits.need(path, item)
    _guard_file(text, path, item, removes=False)
    edits.put(path, _set_body(text, step["body"], path, item), item)


def _apply_step(edits: Edits, item: Item, ch: dict[str, Any]) -> None:
    op = ch.get("op")
    path: Any = ch.get("file")
    if op == "restore_file":
        current = edits.get(path)
        _guard_file(current, path, item, removes=False)
        edits.put(path, blob_text(edits.repo, ch["blob"], path), item)
    elif op == "set_key":
        text = edits.need(path, item)
        _guard_file(text, path, item, removes=False)
        edits.put(
            path, _set_key(text, ch["key"], ch["value"], path, item, raw=bool(ch.get("raw"))), item
        )
    elif op == "remove_key":
        text = edits.need(path, item)
        _guard_file(text, path, item, removes=False)
        edits.put(path, _remove_key(text, ch["key"], path, item), item)
    elif op == "add_frontmatter":
        text = edits.need(path, item)
        if text.startswith("---"):
            raise StaleProposal(
                f"item {item.id}: {path} already starts with frontmatter", path=path
            )
        head = ["---"]
        if ch.get("name"):
            head.append(f"name: {_yaml_scalar(ch['name'])}")
        head.append(f"description: {_yaml_scalar(ch['description'])}")
        head.append("---")
        edits.put(path, "\n".join(head) + "\n\n" + text, item)
    elif op == "move_file":
        text = edits.need(path, item)
        _guard_file(text, path, item, removes=True)
        if edits.get(ch["to"]) is not None:
            raise StaleProposal(f"item {item.id}: {ch['to']} already exists", path=ch["to"])
        edits.put(ch["to"], text, item)
        edits.put(path, None, item)
    else:
        raise ProposalRejected(
            f"item {item.id} ({item.action}) has no file change memlab can make", path=path
        )
