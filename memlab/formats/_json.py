"""The one way memlab reads JSON an agent wrote: ``json.loads`` plus what it accepts silently.

``json.loads`` takes two things a loader must not pass on unremarked:

- an escaped lone surrogate (``"\\ud800"``): it becomes a ``str`` holding a code point that is
  not a character, which pandas' string dtype (pyarrow) refuses to store, so the frame build
  raised ``UnicodeEncodeError`` far from the file. Each one is replaced with U+FFFD, the text
  around it kept readable, and reported as ``bad_text`` naming where it was.
- a key repeated in one object (``{"label": "persona", "label": "human"}``): the last value
  wins, silently. That is the value Python's ``json`` (and so the Letta server and elfmem)
  reads, so memlab keeps it too and reports ``duplicate_key`` naming the key.

:func:`loads` returns the document and ``(kind, message)`` issues; the caller adds them as
problem rows with its own file and line. A document with neither costs a substring scan and
the ``object_pairs_hook`` call per object, nothing more. YAML's ``"\\ud800"`` escape makes the
same lone surrogate; :func:`clean` applies the same rule to a parsed YAML document.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["loads", "dumps", "clean", "clean_text", "MAX_ISSUES"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Issues named one by one per document; the rest are counted in one more issue.
MAX_ISSUES = 20


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)`` for a file memlab writes: each lone
    surrogate (a non-UTF-8 file name decodes to one) is written as its ``\\uDCxx`` escape, which
    ``json.dumps`` leaves raw and UTF-8 cannot encode; the text reads back as the same value,
    and text without one is exactly ``json.dumps``'s."""
    text = json.dumps(value, ensure_ascii=False, **kwargs)
    return (
        _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        if _SURROGATE.search(text)
        else text
    )


def clean_text(value: str) -> str:
    """``value`` with every lone surrogate replaced by U+FFFD (unchanged if it has none)."""
    return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value


def _may_hold_surrogates(text: str) -> bool:
    # A surrogate reaches a str only through a \uDxxx escape, or raw in text that itself came
    # out of a JSON string (a double-encoded file's inner text). Substring tests and one encode
    # run at C speed; a regex over a large file costs several times the parse.
    if "\\ud" in text or "\\uD" in text:
        return True
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _where(path: tuple[Any, ...], root: str) -> str:
    if not path:
        return root
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _IDENT.fullmatch(step):
            out += f".{step}" if out else step
        else:
            out += f"[{step[:40]!r}]"
    return out


def loads(
    text: str,
    *,
    reader: str = "Python's json module",
    root: str = "the top-level value",
    parse_constant: Any = None,
) -> tuple[Any, list[tuple[str, str]]]:
    """``json.loads(text)`` with lone surrogates replaced and repeated keys reported.

    Returns ``(document, issues)``; each issue is ``(kind, message)`` with kind ``bad_text`` or
    ``duplicate_key`` and the message naming the place (``blocks[0].label``). ``reader`` names
    who else reads the file, for the duplicate-key message ("the last value is read, as
    <reader> reads it"); ``root`` names the document itself ("the event"). A document that is
    itself a JSON string is returned as it is: callers
    parse its text again (a double-encoded file) or refuse it. ``parse_constant`` is
    ``json.loads``'s (raise from it to refuse ``NaN`` and ``Infinity``, as JavaScript's
    ``JSON.parse`` does). Raises what ``json.loads`` raises (``json.JSONDecodeError``,
    ``RecursionError``) and what ``parse_constant`` raises.
    """
    repeated: list[tuple[dict[str, Any], list[str]]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            seen: set[str] = set()
            keys: list[str] = []
            for key, _ in items:
                if key in seen and key not in keys:
                    keys.append(key)
                seen.add(key)
            repeated.append((obj, keys))
        return obj

    doc = json.loads(text, object_pairs_hook=pairs, parse_constant=parse_constant)
    if isinstance(doc, str) or (not repeated and not _may_hold_surrogates(text)):
        return doc, []
    return doc, _walk(doc, root, reader, {id(obj): keys for obj, keys in repeated})


def clean(doc: Any, *, root: str = "the top-level value") -> list[tuple[str, str]]:
    """Replace, in place, every lone surrogate in the strings and keys of a parsed document
    (YAML's ``"\\ud800"`` escape gives one too) with U+FFFD; ``bad_text`` issues as
    :func:`loads` gives them. A top-level string is left as it is (clean it with
    :func:`clean_text`)."""
    return _walk(doc, root, "", {})


def _walk(
    doc: Any, root: str, reader: str, dup_keys: dict[int, list[str]]
) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    extra: dict[str, int] = {}

    def add(kind: str, message: str) -> None:
        if len(issues) < MAX_ISSUES:
            issues.append((kind, message))
        else:
            extra[kind] = extra.get(kind, 0) + 1

    def bad(path: tuple[Any, ...], what: str, raw: str) -> None:
        found = _SURROGATE.findall(raw)
        first = f"\\u{ord(found[0]):04x}"
        said = (
            f"a lone surrogate ({first}), which is not a character; read with U+FFFD in its place"
            if len(found) == 1
            else f"{len(found)} lone surrogates (the first {first}), which are not characters; "
            "read with U+FFFD in their place"
        )
        add("bad_text", f"{_where(path, root)} {what} {said}")

    def twice(path: tuple[Any, ...], key: str, why: str) -> None:
        add(
            "duplicate_key",
            f"{_where(path, root)} has the key {clean_text(key)[:40]!r} {why}; the "
            f"last value is read, as {reader or 'Python'} reads it",
        )

    # Iterative, so a document json.loads accepted never exhausts the recursion limit here;
    # each container once, so a YAML alias (or a cycle through one) is not walked again.
    seen: set[int] = set()
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            for key in dup_keys.get(id(node), ()):
                twice(path, key, "more than once")
            if any(isinstance(k, str) and _SURROGATE.search(k) for k in node):
                items = list(node.items())
                node.clear()
                for key, value in items:
                    fixed = clean_text(key) if isinstance(key, str) else key
                    if fixed != key:
                        bad(path + (fixed,), "has a key holding", key)
                        if fixed in node:
                            twice(path, fixed, "more than once once its surrogates are replaced")
                    node[fixed] = value
            for key, value in node.items():
                where = path + (key if isinstance(key, (str, int)) else str(key),)
                if isinstance(value, str):
                    if _SURROGATE.search(value):
                        node[key] = clean_text(value)
                        bad(where, "holds", value)
                elif isinstance(value, (dict, list)):
                    stack.append((value, where))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                if isinstance(value, str):
                    if _SURROGATE.search(value):
                        node[i] = clean_text(value)
                        bad(path + (i,), "holds", value)
                elif isinstance(value, (dict, list)):
                    stack.append((value, path + (i,)))
    for kind, n in extra.items():
        what = "lone surrogate(s)" if kind == "bad_text" else "repeated key(s)"
        issues.append((kind, f"{n} more {what} after the {MAX_ISSUES} named; handled the same way"))
    return issues
