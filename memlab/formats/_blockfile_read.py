"""Reading a block file elfmem 0.20's way (:func:`parse_blockfile`), with what elfmem would
reject or silently lose reported as problems, and elfmem's patterns matched in linear time.
Part of :mod:`memlab.formats.blockfile`, which re-exports the public names.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Sequence

from memlab.formats._blockfile_model import ALL_RELATIONS, CUE_FIELD, KNOWN_FIELDS, Block
from memlab.store import Problems

__all__ = ["parse_blockfile"]


# elfmem's own patterns (memory/blockfile.py) are, for headings, fields and wiki-links:
#   ^##[ \t]+(?P<title>.+?)[ \t]*$                                  (re.MULTILINE)
#   (?P<key>[a-zA-Z_][a-zA-Z0-9_]*)\s*:\s*(?P<value>\[[^\]]*\]|\S+)
#   \[\[(?P<target>[^\]]+)\]\]
# Each backtracks quadratically on one long line of store text (a heading of 400 KB of spaces
# inside, a comment of one long word, a line of '['): memlab finds the same matches in linear
# time with :func:`_headings`, :func:`_fields` and :func:`_wikilinks` (tests/security/test_redos.py
# compares them with these patterns).
_HEADING_LINE_RE = re.compile(r"^##([ \t].+)$", re.MULTILINE)
_FRONTMATTER_RE = re.compile(r"^<!--(?P<body>.*)-->[ \t]*+$", re.DOTALL)
_FIELD_HEAD_RE = re.compile(r"(?P<key>[a-zA-Z_][a-zA-Z0-9_]*+)\s*+:\s*+")
_WORD_START_RE = re.compile(r"[a-zA-Z_]")
_WORD_RUN_RE = re.compile(r"[a-zA-Z0-9_]*+")
_NOT_SPACE_RE = re.compile(r"\S++")
_INLINE_FIELD_RE = re.compile(r"^(?P<key>[a-zA-Z][a-zA-Z0-9_-]*)::[ \t]*+(?P<value>.*)$")


@dataclass(frozen=True)
class _Heading:
    """One ``## title`` line: what elfmem's heading match gives (``start``, ``end``, title)."""

    begin: int
    stop: int
    title: str

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.stop

    def group(self, name: str) -> str:
        return self.title


def _headings(text: str) -> list[_Heading]:
    """elfmem's ``^##[ \\t]+(?P<title>.+?)[ \\t]*$`` matches, in linear time: the lazy title
    ends where only spaces and tabs are left on the line (at least one character of it)."""
    out = []
    for m in _HEADING_LINE_RE.finditer(text):
        # elfmem's [ \t]+ takes every leading space (all but the last on a line of spaces only,
        # which is then the title); the title stops before the trailing spaces and tabs.
        title = m.group(1).lstrip(" \t").rstrip(" \t") or m.group(1)[-1]
        out.append(_Heading(m.start(), m.end(), title))
    return out


def _fields(body: str) -> list[tuple[int, int, str, str]]:
    """``(start, end, key, value)`` of each match of elfmem's field pattern, in linear time.

    A key runs to the end of its word (a shorter one would be followed by a word character, not
    ``\\s*:``), so a failed attempt fails for every start inside that word: the scan moves past
    it. The value starts after the spaces (a shorter ``\\s*`` would leave one for it to start
    with); a ``[`` value ends at the first ``]`` after it, else it is read as ``\\S+``."""
    out = []
    pos, n = 0, len(body)
    last_close = body.rfind("]")
    while (w := _WORD_START_RE.search(body, pos)) is not None:
        start = w.start()
        head = _FIELD_HEAD_RE.match(body, start)
        if head is None or head.end() >= n:
            run = _WORD_RUN_RE.match(body, start)
            pos = run.end() if run is not None else start + 1  # the search found a word there
            continue
        i = head.end()
        if body[i] == "[" and last_close > i:
            end = body.index("]", i + 1) + 1
        else:
            stop = _NOT_SPACE_RE.match(body, i)  # body[i] is not a space: \s*+ ended there
            end = stop.end() if stop is not None else i
        out.append((start, end, head.group("key"), body[i:end]))
        pos = end
    return out


def _wikilinks(value: str) -> list[tuple[int, int, str]]:
    """``(start, end, target)`` of each match of elfmem's ``\\[\\[(?P<target>[^\\]]+)\\]\\]``, in
    linear time: the target runs to the first ``]`` after the ``[[`` (it cannot hold one), and
    every ``[[`` before that ``]`` shares it, so a failed one fails them all."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    while True:
        p = value.find("[[", pos)
        if p < 0:
            return out
        q = value.find("]", p + 2)
        if q < 0:
            return out
        if q > p + 2 and value.startswith("]]", q):
            out.append((p, q + 2, value[p + 2 : q]))
            pos = q + 2
        else:
            pos = q + 1


def _without(value: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """``value`` with the ``spans`` cut out (``re.sub("", ...)`` of the wiki-links)."""
    out, pos = [], 0
    for start, end, _ in spans:
        out.append(value[pos:start])
        pos = end
    out.append(value[pos:])
    return "".join(out)


class _Lines:
    """Line starts as str.splitlines() sees them, to find "the next non-blank line" in O(log n)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.starts: list[int] = []
        self.lines = text.splitlines(keepends=True)
        pos = 0
        for line in self.lines:
            self.starts.append(pos)
            pos += len(line)

    def next_nonblank(self, pos: int) -> str | None:
        """First non-blank line strictly after offset ``pos`` (``pos`` sits on a "\\n" or at end).

        Same answer as elfmem's ``text[pos:].splitlines()`` scan, without copying the rest of
        the file for every heading (which is quadratic on large files).
        """
        i = bisect_right(self.starts, pos)
        while i < len(self.lines):
            stripped = self.lines[i].strip()
            if stripped:
                return stripped
            i += 1
        return None

    def line_of(self, offset: int) -> int:
        """1-based line number of ``offset`` as an editor counts lines (by "\\n")."""
        return bisect_right(self.newlines, offset - 1) + 1


def parse_blockfile(text: str, *, file: str | None = None) -> tuple[list[Block], Problems]:
    """Read one ``notes/``, ``log/`` or ``archive/`` file into blocks, elfmem 0.20's way.

    Never raises on content: what elfmem would reject or silently lose is reported in the
    returned :class:`~memlab.store.Problems` (kinds: ``duplicate_id``, ``bad_frontmatter``,
    ``frontmatter_text_ignored``, ``duplicate_field``, ``bad_pinned``, ``absorbed_heading``,
    ``preamble_ignored``, ``crlf``, ``duplicate_cue``, ``relation_text_dropped``,
    ``empty_relation``). Do not use it for ``self.md``, which is raw text, never blocks.
    """
    problems = Problems()
    if not isinstance(text, str):
        problems.add(file, "not_text", f"expected text, got {type(text).__name__}; nothing read")
        return [], problems
    if "\r\n" in text or "\r" in text:
        problems.add(
            file,
            "crlf",
            "carriage returns in the file: elfmem keeps a trailing '\\r' "
            "in every title; save the file with '\\n' line endings",
            line=None,
        )
    lines = _Lines(text)
    headings = _headings(text)

    preamble = text[: headings[0].start()] if headings else text
    if preamble.strip():
        what = "text before the first '## ' heading" if headings else "no '## ' heading at all"
        problems.add(
            file,
            "preamble_ignored",
            f"{what}: elfmem ignores {len(preamble.strip())} characters of it",
            line=1,
        )

    def is_frontmatter_next(pos: int) -> bool:
        nxt = lines.next_nonblank(pos)
        return nxt is not None and _FRONTMATTER_RE.match(nxt) is not None

    blocks: list[Block] = []
    i = 0
    while i < len(headings):
        start = headings[i]
        title = start.group("title")
        heading_line = lines.line_of(start.start())
        has_frontmatter = is_frontmatter_next(start.end())
        j = i + 1
        while j < len(headings):
            if not has_frontmatter or is_frontmatter_next(headings[j].end()):
                break
            j += 1
        end_pos = headings[j].start() if j < len(headings) else len(text)
        for absorbed in headings[i + 1 : j]:
            problems.add(
                file,
                "absorbed_heading",
                f"'## {absorbed.group('title')}' is read as body text of "
                f"'{title}' (no <!-- --> comment follows it); add one if it is meant "
                "to be a block of its own",
                line=lines.line_of(absorbed.start()),
            )

        remainder = text[start.end() : end_pos]
        rlines = remainder.splitlines(keepends=True)
        idx = 0
        while idx < len(rlines) and rlines[idx].strip() == "":
            idx += 1
        raw_fields: dict[str, str] = {}
        if idx < len(rlines):
            fm = _FRONTMATTER_RE.match(rlines[idx].strip())
            if fm:
                fm_line = lines.line_of(start.end() + sum(len(x) for x in rlines[:idx]))
                raw_fields = _read_frontmatter(
                    fm.group("body").strip(), title, file, fm_line, problems
                )
                idx += 1
        content = "".join(rlines[idx:]).strip()
        block = _build_block(title, raw_fields, content, file, heading_line, problems)
        blocks.append(block)
        i = j

    _report_duplicates(blocks, file, problems)
    return blocks, problems


def _read_frontmatter(
    body: str, title: str, file: str | None, line: int, problems: Problems
) -> dict[str, str]:
    if "[" in body and body.count("[") != body.count("]"):
        problems.add(
            file,
            "bad_frontmatter",
            f"'{title}': unbalanced '[' / ']' in the <!-- --> comment; elfmem drops "
            "all of its fields (id, tags, pinned...)",
            line=line,
        )
        return {}
    found: dict[str, str] = {}
    leftover: list[str] = []
    pos = 0
    for start, end, key, value in _fields(body):
        leftover.append(body[pos:start])
        pos = end
        if key in found:
            problems.add(
                file,
                "duplicate_field",
                f"'{title}': field '{key}' appears twice; the last value wins",
                line=line,
            )
        found[key] = value
    leftover.append(body[pos:])
    if not found and ":" in body:
        problems.add(
            file,
            "bad_frontmatter",
            f"'{title}': no valid 'key: value' pair in the <!-- --> comment",
            line=line,
        )
        return {}
    ignored = " ".join("".join(leftover).split())
    if ignored:
        problems.add(
            file,
            "frontmatter_text_ignored",
            f"'{title}': text in the <!-- --> comment that is not a 'key: value' pair is "
            f"ignored: {ignored[:120]!r}",
            line=line,
        )
    return found


def _build_block(
    title: str, raw: dict[str, str], content: str, file: str | None, line: int, problems: Problems
) -> Block:
    tags_raw = raw.get("tags", "")
    tags = [t.strip() for t in tags_raw.strip("[]").split(",") if t.strip()] if tags_raw else []
    pinned_raw = raw.get("pinned", "false").strip().lower()
    if pinned_raw not in ("true", "false"):
        problems.add(
            file,
            "bad_pinned",
            f"'{title}': pinned is {raw.get('pinned')!r}; only 'true' pins a block, so "
            "it is read as not pinned",
            line=line,
        )
    extra = {k: v for k, v in raw.items() if k not in KNOWN_FIELDS}
    cue, relations, body = _split_inline_fields(content, title, file, line, problems)
    return Block(
        title=title,
        body=body,
        id=raw.get("id"),
        tags=tags,
        pinned=pinned_raw == "true",
        created=raw.get("created"),
        cls=raw.get("cls"),
        cue=cue,
        relations=relations,
        extra=extra,
        line=line,
    )


def _split_inline_fields(
    content: str, title: str, file: str | None, line: int, problems: Problems
) -> tuple[str | None, list[tuple[str, str]], str]:
    """Peel the ``key:: value`` run off the front of a block body (elfmem's rule)."""
    lines = content.splitlines(keepends=True)
    cue: str | None = None
    seen_cue = False
    relations: list[tuple[str, str]] = []
    idx = 0
    while idx < len(lines):
        m = _INLINE_FIELD_RE.match(lines[idx].rstrip("\n"))
        if m is None:
            break
        key = m.group("key")
        value = m.group("value").strip()
        if key == CUE_FIELD:
            if seen_cue:
                problems.add(
                    file,
                    "duplicate_cue",
                    f"'{title}': more than one cue:: line; the last one wins",
                    line=line,
                )
            seen_cue = True
            cue = value or None
        elif key in ALL_RELATIONS:
            links = _wikilinks(value)
            targets = [t for _, _, t in links]
            if targets:
                rest = _without(value, links).replace(",", " ").strip()
                if rest:
                    problems.add(
                        file,
                        "relation_text_dropped",
                        f"'{title}': text after {key}:: links is not kept: {rest[:80]!r}",
                        line=line,
                    )
            elif value:
                targets = [t.strip() for t in value.split(",") if t.strip()]
            if not targets:
                problems.add(
                    file,
                    "empty_relation",
                    f"'{title}': '{key}::' names no target; the line is dropped",
                    line=line,
                )
            relations.extend((key, t.strip()) for t in targets)
        elif links := _wikilinks(value):
            # elfmem keeps only the name of a relation outside its vocabulary; memlab keeps the
            # targets as well, so a migration can carry the edge.
            targets = [t for _, _, t in links]
            rest = _without(value, links).replace(",", " ").strip()
            if rest:
                problems.add(
                    file,
                    "relation_text_dropped",
                    f"'{title}': text after {key}:: links is not kept: {rest[:80]!r}",
                    line=line,
                )
            relations.extend((key, t.strip()) for t in targets)
        else:
            break
        idx += 1
    return cue, relations, "".join(lines[idx:]).strip()


def _report_duplicates(blocks: list[Block], file: str | None, problems: Problems) -> None:
    by_id: dict[str, list[Block]] = {}
    for b in blocks:
        if b.id is not None:
            by_id.setdefault(b.id, []).append(b)
    for block_id, same in sorted(by_id.items()):
        if len(same) > 1:
            where = ", ".join(str(b.line) for b in same)
            problems.add(
                file,
                "duplicate_id",
                f"id {block_id!r} is used by {len(same)} blocks (lines {where}); elfmem "
                "refuses the whole file: give one of them a new id",
                line=same[1].line,
            )
