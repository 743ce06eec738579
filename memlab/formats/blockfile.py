"""elfmem's markdown substrate: block files under ``.elfmem/memory/`` and the JSONL ledger.

Reader and writer live together so a round trip cannot drift: the migration exporter writes
with :func:`format_blockfile` and the loader reads with :func:`parse_blockfile`.

The reading rules follow ``elfmem.memory.blockfile`` in elfmem 0.20.0 exactly (the tests run a
differential check against it). One block is::

    ## <title>
    <!-- id: <id>  cls: <cls>  tags: [a, b]  pinned: true|false  created: <ISO>  <key>: <value> -->
    cue:: <text>
    supports:: [[<id>]], [[<id>]]
    <any-relation>:: [[<id>]]

    <body>

Where memlab differs from elfmem, it is only in what it reports, never in what it reads:

- elfmem raises on a duplicate ``id`` in one file and loses the whole file; memlab keeps every
  block and adds a ``duplicate_id`` problem.
- Silent losses in elfmem's reading (text before the first heading, comment text that is not a
  ``key: value`` pair, prose after a relation's links, ``##`` headings absorbed into the previous
  block) become problem rows.
- elfmem records a relation outside its vocabulary only by name; memlab keeps its targets too.
  The writer emits such relations as ``<rel>:: [[id]]`` lines, which elfmem's parser accepts
  without error (it lists them in ``unknown_relations``), so no edge is lost on the way.

Ledger lines (``.elfmem/ledger/YYYY-MM.jsonl``) are ``{"t", "s", "ah", "k", ...payload}``, one JSON
object per line, each under 4000 bytes so that one ``write(2)`` stays atomic.
"""

from __future__ import annotations

import hashlib
import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field, fields
from typing import Any, Iterable, Mapping, Sequence

from memlab.errors import MigrationError, UnsafePath
from memlab.formats import _json
from memlab.formats.letta_memfs import is_git_name
from memlab.store import Problems

__all__ = [
    "Block",
    "LINK_RELATIONS",
    "SYSTEM_RELATIONS",
    "ALL_RELATIONS",
    "KNOWN_FIELDS",
    "SECTIONS",
    "INDEXED_SECTIONS",
    "MEMORY_DIR",
    "LEDGER_DIR",
    "SELF_FILE",
    "MAX_LEDGER_LINE_BYTES",
    "LEDGER_REQUIRED_FIELDS",
    "parse_blockfile",
    "format_block",
    "format_blockfile",
    "content_id",
    "substrate_path",
    "parse_ledger",
    "format_ledger_line",
    "format_ledger",
    "fit_ledger_event",
    "ledger_path",
]

# --- format constants (elfmem 0.20.0, memory/blockfile.py and memory/ledger.py) -------------

LINK_RELATIONS: tuple[str, ...] = (
    "supports",
    "contradicts",
    "refines",
    "derived-from",
    "requires",
    "supersedes",
)
SYSTEM_RELATIONS: tuple[str, ...] = ("replies_to", "predicts")
ALL_RELATIONS: frozenset[str] = frozenset(LINK_RELATIONS + SYSTEM_RELATIONS)
_RELATION_RANK = {rel: i for i, rel in enumerate(LINK_RELATIONS + SYSTEM_RELATIONS)}
KNOWN_FIELDS: frozenset[str] = frozenset({"id", "tags", "pinned", "created", "cls"})
_CUE = "cue"

#: Sub-folders of ``memory/`` that hold block files; ``archive/`` is export-only in elfmem.
SECTIONS: tuple[str, ...] = ("notes", "log", "archive")
#: The sections ``elfmem index rebuild`` reads (notes → active, log → inbox).
INDEXED_SECTIONS: tuple[str, ...] = ("notes", "log")
MEMORY_DIR = ".elfmem/memory"
LEDGER_DIR = ".elfmem/ledger"
SELF_FILE = ".elfmem/memory/self.md"

MAX_LEDGER_LINE_BYTES = 4000
#: Fields elfmem never drops to make a ledger line fit: without them an event cannot replay.
LEDGER_REQUIRED_FIELDS: frozenset[str] = frozenset({"t", "s", "ah", "k", "id", "from", "to", "rel"})

# Characters str.splitlines() breaks on that json.dumps(ensure_ascii=False) leaves raw. elfmem
# reads the ledger with splitlines(), so one of these inside a string would cut the line in two
# and elfmem would skip the event; escaping them keeps the JSON identical in meaning.
_SPLITLINES_ONLY = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_ESCAPE_SPLITLINES = {ord(c): f"\\u{ord(c):04x}" for c in _SPLITLINES_ONLY}


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

# What the writer accepts, so that every value it emits parses back to itself.
_FIELD_KEY_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_RELATION_KEY_RE = re.compile(r"[a-zA-Z][a-zA-Z0-9_-]*")
_SCALAR_VALUE_RE = re.compile(r"[^\s\[\]]+")
_LIST_VALUE_RE = re.compile(r"\[[^\]\n\r]*\]")


def _has_line_break(text: str) -> bool:
    # str.splitlines() breaks on more than "\n" (\r, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029),
    # and elfmem's parser uses splitlines(), so any of them would cut a one-line field.
    return len((text + "x").splitlines()) > 1


@dataclass
class Block:
    """One ``##`` block of a substrate file, as declared in the file.

    ``relations`` is a list of ``(relation, target_id)``; it is kept in a canonical order
    (elfmem's vocabulary order, then other relations by first appearance, targets in file
    order) because the file groups targets one line per relation, so any other order could not
    survive a round trip. ``created`` stays the text as written; frames parse it to UTC.
    ``line`` is the 1-based line of the heading when read from a file; it takes no part in
    equality.
    """

    title: str
    body: str = ""
    id: str | None = None
    tags: list[str] = field(default_factory=list)
    pinned: bool = False
    created: str | None = None
    cls: str | None = None
    cue: str | None = None
    relations: list[tuple[str, str]] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        self.tags = list(self.tags)
        self.extra = dict(self.extra)
        self.relations = _canonical_relations(self.relations)

    @property
    def links(self) -> list[tuple[str, str]]:
        """Relations in elfmem's vocabulary (the ones elfmem turns into edges)."""
        return [(r, t) for r, t in self.relations if r in ALL_RELATIONS]

    @property
    def unknown_relations(self) -> list[tuple[str, str]]:
        """Relations outside elfmem's vocabulary (elfmem keeps only their names)."""
        return [(r, t) for r, t in self.relations if r not in ALL_RELATIONS]


def _canonical_relations(relations: Iterable[Sequence[str]]) -> list[tuple[str, str]]:
    pairs = [(str(r), str(t)) for r, t in relations]
    first_seen: dict[str, int] = {}
    for rel, _ in pairs:
        first_seen.setdefault(rel, len(first_seen))
    offset = len(_RELATION_RANK)

    def rank(pair: tuple[str, str]) -> int:
        rel = pair[0]
        return _RELATION_RANK.get(rel, offset + first_seen[rel])

    return sorted(pairs, key=rank)  # stable: targets keep their order within a relation


def content_id(body: str) -> str:
    """The id elfmem assigns a block that has none: sha256 of the stripped, lowercased body."""
    return hashlib.sha256(body.strip().lower().encode("utf-8")).hexdigest()[:16]


# --- reading ------------------------------------------------------------------------------


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
        if key == _CUE:
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


# --- writing ------------------------------------------------------------------------------


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
            or key == _CUE
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
        if not _RELATION_KEY_RE.fullmatch(rel) or rel == _CUE:
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
        head.append(f"{_CUE}:: {b.cue}")
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


# --- the ledger ---------------------------------------------------------------------------


def parse_ledger(text: str, *, file: str | None = None) -> tuple[list[dict[str, Any]], Problems]:
    """Events of one ledger file, each with its 1-based ``line``; bad lines become problems.

    elfmem skips (and only counts) unparseable lines; memlab names each one. A line of 4000
    bytes or more is read but reported, since elfmem's writer never produces one. A lone
    surrogate escape is read as U+FFFD (``bad_text``) and a repeated key keeps its last value
    (``duplicate_key``), both reported (:mod:`memlab.formats._json`).
    """
    problems = Problems()
    events: list[dict[str, Any]] = []
    if not isinstance(text, str):
        problems.add(file, "not_text", f"expected text, got {type(text).__name__}; nothing read")
        return events, problems
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        size = len(raw.encode("utf-8", "surrogatepass"))
        if size >= MAX_LEDGER_LINE_BYTES:
            problems.add(
                file,
                "ledger_line_too_long",
                f"{size} bytes; elfmem keeps ledger lines under "
                f"{MAX_LEDGER_LINE_BYTES} so appends stay atomic",
                line=n,
            )
        try:
            event, issues = _json.loads(raw, reader="elfmem (Python's json)", root="the event")
        except (json.JSONDecodeError, RecursionError) as exc:
            problems.add(
                file,
                "ledger_bad_json",
                f"not JSON ({exc.__class__.__name__}: {str(exc)[:80]}); elfmem skips it",
                line=n,
            )
            continue
        if not isinstance(event, dict) or "k" not in event:
            problems.add(
                file,
                "ledger_bad_event",
                "not an object with a 'k' (kind) key; elfmem skips it",
                line=n,
            )
            continue
        if any(c in raw for c in _SPLITLINES_ONLY):
            problems.add(
                file,
                "ledger_line_split",
                "holds a raw character that str.splitlines() breaks on (e.g. U+2028); "
                "elfmem splits the line there and skips the event",
                line=n,
            )
        for kind, message in issues:
            problems.add(file, kind, message, line=n)
        event["line"] = n
        events.append(event)
    return events, problems


def _ledger_json(event: Mapping[str, Any]) -> str:
    head = {k: event[k] for k in ("t", "s", "ah", "k") if k in event}
    record = {**head, **{k: v for k, v in event.items() if k not in head and k != "line"}}
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.translate(_ESCAPE_SPLITLINES)


def format_ledger_line(event: Mapping[str, Any]) -> str:
    """One event as elfmem writes it (``t, s, ah, k`` first, compact JSON), without newline.

    Raises MigrationError if the event lacks ``t``/``s``/``ah``/``k``, holds NaN/inf, or the
    line would reach 4000 bytes (see :func:`fit_ledger_event`).
    """
    missing = [k for k in ("t", "s", "ah", "k") if k not in event]
    if missing:
        raise MigrationError(
            f"ledger event lacks {', '.join(missing)}: {dict(event)!r:.200}",
            hint="every ledger event needs t (ISO time), s, ah and k",
        )
    try:
        line = _ledger_json(event)
    except (TypeError, ValueError) as exc:
        raise MigrationError(
            f"ledger event of kind {event.get('k')!r} is not plain JSON: {exc}",
            hint="use str/int/float/bool/None/list/dict values, no NaN",
        ) from exc
    size = len((line + "\n").encode("utf-8", "surrogatepass"))
    if size > MAX_LEDGER_LINE_BYTES:
        raise MigrationError(
            f"ledger event of kind {event.get('k')!r} is {size} bytes with its newline, over "
            f"{MAX_LEDGER_LINE_BYTES}",
            hint="use fit_ledger_event() to drop the largest free-text field, as elfmem does",
        )
    return line


def fit_ledger_event(event: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """elfmem's rule for an oversized event: drop the largest droppable text field until it fits.

    Returns the event and the names of the fields dropped, so the caller can report the loss
    (elfmem only logs it). Raises MigrationError if nothing droppable is left.
    """
    record = {k: v for k, v in event.items() if k != "line"}
    dropped: list[str] = []
    while (
        len((_ledger_json(record) + "\n").encode("utf-8", "surrogatepass")) > MAX_LEDGER_LINE_BYTES
    ):
        texts = {
            k: v
            for k, v in record.items()
            if isinstance(v, str) and k not in LEDGER_REQUIRED_FIELDS
        }
        if not texts:
            raise MigrationError(
                f"ledger event of kind {record.get('k')!r} is over {MAX_LEDGER_LINE_BYTES} bytes "
                "with no droppable text field",
                hint="split the event (elfmem chunks long id lists at 64 per line)",
            )
        biggest = max(texts, key=lambda k: len(texts[k]))
        record.pop(biggest)
        dropped.append(biggest)
    return record, dropped


def format_ledger(events: Iterable[Mapping[str, Any]]) -> str:
    """JSONL text for a ledger file: one checked line per event, each ending in a newline."""
    return "".join(format_ledger_line(e) + "\n" for e in events)


def ledger_path(t: str) -> str:
    """The monthly file elfmem appends an event stamped ``t`` to:
    ``.elfmem/ledger/YYYY-MM.jsonl``."""
    if not isinstance(t, str) or not re.match(r"^\d{4}-\d{2}", t):
        raise MigrationError(
            f"ledger time {t!r} is not ISO-8601",
            hint="stamp events with datetime.isoformat() in UTC",
        )
    return f"{LEDGER_DIR}/{t[:7]}.jsonl"
