"""One escaping rule per output kind, for text memlab did not write.

Store content, names, labels, file names and frontmatter are untrusted: an agent (or whoever fed
it text) wrote them. Wherever such text crosses into something a human or a program reads later,
it goes through exactly one function here:

=====================  =====================================================================
output kind            function
=====================  =====================================================================
Python source          :func:`py_literal` (data only ever as a literal; never in a comment
                       or a code position) and :func:`comment` for a human-readable echo
markdown, one line     :func:`md_line` (proposal titles, items, evidence)
HTML                   :func:`html` (widgets, reports, every cell and label of a report's
                       tables: ``memlab.report.escape_tables``); its control half,
                       :func:`controls_visible`, for text another layer HTML-escapes
                       (a report's stream and plain-text outputs, which nbconvert escapes)
figure text            :func:`plot_text` (matplotlib labels, ticks, titles, legends)
terminal, one line     :func:`terminal_line` (error messages, table cells)
terminal, lines        :func:`terminal_lines` (summaries: each line memlab built goes
                       through :func:`terminal_line`, so a line break inside store text
                       cannot start a line of its own)
commit message line    :func:`commit_line`
=====================  =====================================================================

The shared rule for every one-line kind: no line break of any kind Python, a terminal or a
markdown reader honours survives (``\\n \\r \\x0b \\x0c \\x1c \\x1d \\x1e \\x85 U+2028 U+2029``),
and no other control or format character does either (C0, DEL, C1, bidirectional overrides):
they are shown as visible ``\\xNN`` / ``\\uNNNN`` escapes. Ordinary whitespace runs collapse to
one space where the kind is prose (markdown, commit lines).

:func:`split_lines` is the one line-splitting rule for files memlab writes and reads back (the
proposal markdown): only ``\\n`` ends a line, a ``\\r`` before it is dropped.
"""

from __future__ import annotations

import html as _html
import re
from typing import Any, Iterable

__all__ = [
    "LINE_BREAKS",
    "visible",
    "terminal_line",
    "terminal_lines",
    "md_line",
    "plot_text",
    "commit_line",
    "html",
    "controls_visible",
    "py_literal",
    "comment",
    "split_lines",
    "quote",
]

#: Every character Python's ``str.splitlines``, a terminal or a markdown renderer treats as
#: the end of a line.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

_WS = re.compile(r"[ \t" + re.escape(LINE_BREAKS) + r"\x1f\xa0]+")


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: Any) -> str:
    """``text`` with every non-printable character (line breaks, controls, format characters
    such as bidi overrides, separators other than the space) written as a visible escape."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(ch if ch.isprintable() else _escape_char(ch) for ch in s)


def _cut(s: str, width: int | None) -> str:
    return s if width is None or len(s) <= width else s[: width - 1] + "…"


def terminal_line(text: Any, width: int | None = None) -> str:
    """One terminal line: nothing that moves the cursor, rings, recolours or reorders."""
    return _cut(visible(text), width)


def terminal_lines(lines: Iterable[Any]) -> str:
    """Several terminal lines joined by ``\\n``: each one is :func:`terminal_line` (a summary's
    line is built by memlab and holds store text; that text cannot end it or recolour it)."""
    return "\n".join(terminal_line(line) for line in lines)


def _prose(text: Any) -> str:
    return visible(_WS.sub(" ", str(text)).strip())


def md_line(text: Any, width: int | None = None, *, code: bool = False) -> str:
    """One markdown line: whitespace and line breaks collapse to a space, controls are made
    visible, ``<`` cannot open a tag, and backticks become ``'`` unless ``code`` (the caller's
    own code spans)."""
    s = _prose(text).replace("<", "&lt;")
    if not code:
        s = s.replace("`", "'")
    return _cut(s, width)


def commit_line(text: Any, width: int | None = None) -> str:
    """One line of a commit message (a subject or a list entry)."""
    return _cut(_prose(text), width)


def controls_visible(text: Any) -> str:
    """``text`` with every non-printable character other than ``\\n`` and ``\\t`` (C0, DEL, C1,
    ``\\r``, U+2028/9, bidi and other format characters) written as a visible escape.
    Nothing else changes: markup stays markup."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(ch if ch.isprintable() or ch in "\n\t" else _escape_char(ch) for ch in s)


def html(text: Any) -> str:
    """Text for an HTML element or attribute: ``& < > " '`` escaped; controls other than
    ``\\n`` and ``\\t`` made visible (:func:`controls_visible`)."""
    return _html.escape(controls_visible(text), quote=True)


def plot_text(text: Any) -> str:
    """Text for a matplotlib figure: ``$`` escaped, so matplotlib never parses store text as
    mathtext (an unknown ``\\command`` between two ``$`` stops the figure from drawing at all),
    and every non-printable character visible."""
    return visible(text).replace("$", r"\$")


_LITERAL_TYPES = (str, bytes, int, float, bool, type(None))


def py_literal(value: Any) -> str:
    """A Python literal for ``value`` (str, bytes, numbers, None, and lists, tuples and dicts of
    them) that is always one line and evaluates back to ``value``; anything else is refused."""
    if isinstance(value, (list, tuple)):
        inner = ", ".join(py_literal(v) for v in value)
        if isinstance(value, tuple):
            return f"({inner}{',' if len(value) == 1 else ''})"
        return f"[{inner}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    if not isinstance(value, _LITERAL_TYPES):
        raise TypeError(f"py_literal: {type(value).__name__} is not plain data")
    out = repr(value)
    # repr escapes every non-printable character, so the literal is one line; checked anyway.
    if not out.isprintable():  # pragma: no cover - a repr that kept a control character
        raise ValueError("py_literal: repr kept a non-printable character")
    return out


def comment(text: Any) -> str:
    """Text safe inside a ``# ...`` comment of generated Python: one line, nothing Python's
    tokenizer would read as a line end (it honours ``\\r`` and ``\\x0c`` too)."""
    return terminal_line(text)


def split_lines(text: str) -> list[str]:
    """The lines of a file memlab wrote: split at ``\\n`` only (``\\r\\n`` counts as ``\\n``).

    Every reader of a memlab-written file that must agree with another reader (the proposal's
    tick reader, its untick-and-compare tamper check) splits with this and nothing else.
    """
    return text.replace("\r\n", "\n").split("\n")


def quote(name: str) -> str:
    """An SQL identifier (SQLite, PostgreSQL, DuckDB): in double quotes, each ``"`` doubled."""
    return '"' + str(name).replace('"', '""') + '"'
