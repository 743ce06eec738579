"""Reading an Agent File's JSON for :mod:`memlab.kinds.agent_file._load`: once, double-encoded or
not, with what ``json.loads`` accepts silently reported (:mod:`memlab.formats._json`), and every
JSON string past :data:`~memlab.constants.MAX_VALUE_BYTES` cut out of the bytes before the parse
(:class:`Unread`).
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

from memlab.constants import MAX_VALUE_BYTES
from memlab.errors import CorruptStore, SourceError, StoreNotFound, UnrecognizedStore
from memlab.formats import _json

__all__ = ["Unread", "read_json"]


def _decode(text: str, p: Path, what: str, issues: list[tuple[str, str]]) -> Any:
    try:
        doc, found = _json.loads(
            text, reader="the Letta server (Python's json)", root="the top-level object"
        )
    except json.JSONDecodeError as exc:
        raise CorruptStore(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            path=p,
            hint="the file may be truncated; export it again",
        ) from exc
    except RecursionError as exc:
        raise CorruptStore(f"{what} nests too deeply to read", path=p) from exc
    issues.extend(found)
    return doc


#: A document whose top level is an object or a list (after a BOM and white space).
_CONTAINER = re.compile(rb"\A(?:\xef\xbb\xbf)?[ \t\r\n]*[\[{]")


class Unread:
    """The JSON strings of a file past :data:`~memlab.constants.MAX_VALUE_BYTES`, cut out of
    its bytes before the parse: each is replaced by a placeholder string made of a random token
    of this read (store text cannot forge it), so the document parses without them and
    the loader's ``_Ctx.text`` reads a placeholder as null with an ``oversized`` problem row."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(16)
        self.sizes: dict[str, int] = {}  # placeholder -> bytes of the JSON string it replaced
        self.hits: list[dict[str, Any]] = []  # what met one: where, and the size

    def cut(self, raw: bytes) -> bytes:
        """``raw`` without its strings past the cap (unchanged when it has none). Outside a
        string JSON has no quote, so each quote found from the start opens a string that runs
        to the next quote not escaped by an odd number of backslashes."""
        pieces, done, at, n = [], 0, 0, len(raw)
        while True:
            start = raw.find(b'"', at)
            if start < 0:
                break
            end = start + 1
            while True:
                end = raw.find(b'"', end)
                if end < 0:
                    end = n  # unterminated: the parse says so
                    break
                slashes = 0
                while raw[end - 1 - slashes] == 0x5C:  # backslash
                    slashes += 1
                if slashes % 2 == 0:
                    break
                end += 1
            size = end - start - 1
            if size > MAX_VALUE_BYTES and end < n:
                mark = f"memlab-oversized-{self.token}-{len(self.sizes)}"
                self.sizes[mark] = size
                pieces += [raw[done:start], b'"', mark.encode(), b'"']
                done = end + 1
            at = end + 1
        if not pieces:
            return raw
        pieces.append(raw[done:])
        return b"".join(pieces)


def read_json(p: Path, issues: list[tuple[str, str]], unread: Unread) -> tuple[Any, bool]:
    """The document and whether it was double-encoded; lone surrogates (replaced with U+FFFD)
    and repeated keys (the last kept) go to ``issues`` as ``(kind, message)``. In a file larger
    than :data:`~memlab.constants.MAX_VALUE_BYTES` whose top level is not a string, every JSON
    string past it is cut out before the text is decoded (``unread``), so the parse holds the
    rest of the file only (a double-encoded file is one string: it is read whole)."""
    from memlab._files import NotRegularFile, read_regular

    try:
        raw = read_regular(p)
    except NotRegularFile as exc:
        raise SourceError(exc.reason, path=p) from exc
    except OSError as exc:
        raise StoreNotFound(f"cannot read: {exc.strerror}", path=p) from exc
    if len(raw) > MAX_VALUE_BYTES and _CONTAINER.match(raw):
        raw = unread.cut(raw)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorruptStore(
            f"is not UTF-8 text (byte {exc.start})",
            path=p,
            hint="agent files are JSON; this looks like a binary file",
        ) from exc
    if not text.strip():
        raise CorruptStore("is empty", path=p, hint="export the agent again")
    del raw
    doc = _decode(text, p, "the file", issues)
    del text
    if not isinstance(doc, str):
        return doc, False
    inner = doc.strip()
    if inner[:1] not in ("{", "[", '"'):
        raise UnrecognizedStore("is a JSON string that does not hold a JSON document", path=p)
    doc = _decode(inner, p, "the JSON string inside the file", issues)
    if isinstance(doc, str):
        raise CorruptStore(
            "is encoded as a JSON string more than twice",
            path=p,
            hint="decode it once with json.loads and save the result",
        )
    return doc, True
