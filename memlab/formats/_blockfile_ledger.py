"""elfmem's JSONL ledger (``.elfmem/ledger/YYYY-MM.jsonl``): reading it with every bad line
named (:func:`parse_ledger`), writing lines as elfmem does (:func:`format_ledger_line`,
:func:`format_ledger`), elfmem's rule for an oversized event (:func:`fit_ledger_event`) and the
monthly file an event goes to (:func:`ledger_path`). Part of :mod:`memlab.formats.blockfile`,
which re-exports the public names.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping

from memlab.errors import MigrationError
from memlab.formats import _json
from memlab.formats._blockfile_model import LEDGER_DIR
from memlab.store import Problems

__all__ = [
    "MAX_LEDGER_LINE_BYTES",
    "LEDGER_REQUIRED_FIELDS",
    "parse_ledger",
    "format_ledger_line",
    "format_ledger",
    "fit_ledger_event",
    "ledger_path",
]


MAX_LEDGER_LINE_BYTES = 4000
#: Fields elfmem never drops to make a ledger line fit: without them an event cannot replay.
LEDGER_REQUIRED_FIELDS: frozenset[str] = frozenset({"t", "s", "ah", "k", "id", "from", "to", "rel"})

# Characters str.splitlines() breaks on that json.dumps(ensure_ascii=False) leaves raw. elfmem
# reads the ledger with splitlines(), so one of these inside a string would cut the line in two
# and elfmem would skip the event; escaping them keeps the JSON identical in meaning.
_SPLITLINES_ONLY = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_ESCAPE_SPLITLINES = {ord(c): f"\\u{ord(c):04x}" for c in _SPLITLINES_ONLY}


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
