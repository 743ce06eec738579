"""What Letta Code 0.34.12 keeps beside an agent's memory repository, read as it reads it: the
reflection settings (``settings.json``), the per-conversation reflection state
(``<transcripts>/<agent>/<conversation>/state.json`` with ``transcript.jsonl`` and the
``payload-auto-*.json`` each pass leaves) and the worktree names under ``memory-worktrees/``.

Each rule below names the function of Letta Code's bundle (``letta.js``) it follows;
``tests/test_letta_home.py`` builds homes with those functions themselves
(``tests/letta_home_oracle.mjs``) and compares.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from memlab._files import FileTooLarge, LineTooLong, iter_lines, read_text
from memlab.constants import MAX_FILE_BYTES
from memlab.formats._json import loads as json_loads
from memlab.store import Problems

__all__ = [
    "STATE_SCHEMA",
    "LEGACY_STATE_SCHEMA",
    "DEFAULT_TRIGGER",
    "DEFAULT_STEP_COUNT",
    "read_settings",
    "reflection_settings",
    "read_conversation",
    "worktree_name",
    "sanitize_segment",
    "read_local_agents",
    "read_pass",
]

#: ``REFLECTION_STATE_SCHEMA_VERSION`` and the legacy one ``readState`` migrates.
STATE_SCHEMA = "v3_assistant_steps"
LEGACY_STATE_SCHEMA = "v2_message_id"
#: ``DEFAULT_SETTINGS`` (src/settings-manager.ts): the trigger a settings file without one has.
DEFAULT_TRIGGER = "step-count"
DEFAULT_STEP_COUNT = 25
_DEFAULT_REMINDER = 25  # DEFAULT_SETTINGS.memoryReminderInterval
_TRIGGERS = ("off", "step-count", "compaction-event")
_LINE_BYTES = MAX_FILE_BYTES  # one transcript row (a tool result may be long)
#: A conversation's transcript.jsonl grows with every step: ten times a memory file's cap.
_TRANSCRIPT_BYTES = 10 * MAX_FILE_BYTES


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (JavaScript's JSON.parse refuses it)")


def _json(text: str, path: Path, problems: Problems, line: int | None = None) -> Any:
    """``JSON.parse(text)`` as Letta Code reads it; lone surrogates and repeated keys are
    problem rows (the last value of a key is read, as JavaScript reads it). Raises ValueError."""
    doc, issues = json_loads(
        text, reader="Letta Code (JSON.parse)", parse_constant=_refuse_constant
    )
    for kind, message in issues:
        problems.add(path, kind, message, line=line)
    return doc


def sanitize_segment(segment: str) -> str:
    """``sanitizePathSegment2``: the folder name Letta Code gives an agent or conversation id."""
    out = re.sub(r"[^a-zA-Z0-9._-]", "_", segment).strip()
    return out or "unknown"


def read_settings(path: Path, problems: Problems) -> dict[str, Any] | None:
    """The global ``settings.json`` as a dict; None (with a problem row when it is there but
    unreadable) when there is none."""
    if not path.exists():
        return None
    try:
        data = _json(read_text(path, max_bytes=MAX_FILE_BYTES, errors="strict"), path, problems)
    except (OSError, FileTooLarge, UnicodeDecodeError, ValueError, RecursionError) as exc:
        problems.add(path, "bad_settings", f"settings.json not read: {exc}")
        return None
    if not isinstance(data, dict):
        problems.add(path, "bad_settings", "settings.json is not a JSON object")
        return None
    return data


def _step_count(value: Any, fallback: int) -> int:
    # normalizeStepCount: a positive integer (JSON numbers, not booleans), else the fallback
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == int(value)
    return int(value) if ok and value > 0 else fallback


def _trigger(value: Any, fallback: str) -> str:
    return value if value in _TRIGGERS else fallback


def reflection_settings(settings: dict[str, Any] | None, agent_id: str) -> dict[str, Any]:
    """``getReflectionSettings(agentId)`` from the global settings alone (a project's own
    ``.letta/settings.json`` lives in its working folder, which the home does not name):
    ``legacyModeToReflectionSettings(memoryReminderInterval)``, then the explicit
    ``reflectionTrigger``/``reflectionStepCount``, then ``reflectionSettingsByAgent[agent]``;
    the file's keys over ``DEFAULT_SETTINGS``. Returns ``trigger``, ``step_count`` and
    ``source`` (``default``, ``settings`` or ``agent``)."""
    raw = dict(settings or {})
    legacy = raw.get("memoryReminderInterval", _DEFAULT_REMINDER)
    # legacyModeToReflectionSettings: a number is step-count with that count, null is off,
    # "compaction"/"auto-compaction" the compaction trigger; anything else the defaults
    # (DEFAULT_REFLECTION_SETTINGS: compaction-event, 25)
    if isinstance(legacy, (int, float)) and not isinstance(legacy, bool):
        trigger, count = "step-count", _step_count(legacy, DEFAULT_STEP_COUNT)
    elif legacy is None:
        trigger, count = "off", DEFAULT_STEP_COUNT
    else:
        trigger, count = "compaction-event", DEFAULT_STEP_COUNT
    trigger = _trigger(raw.get("reflectionTrigger", DEFAULT_TRIGGER), trigger)
    count = _step_count(raw.get("reflectionStepCount", DEFAULT_STEP_COUNT), count)
    source = "settings" if settings is not None else "default"
    by_agent = raw.get("reflectionSettingsByAgent")
    scoped = by_agent.get(agent_id) if isinstance(by_agent, dict) else None
    if isinstance(scoped, dict):
        trigger = _trigger(scoped.get("trigger"), trigger)
        count = _step_count(scoped.get("stepCount"), count)
        source = "agent"
    return {"trigger": trigger, "step_count": count, "source": source}


def _count(value: Any) -> int:
    # normalizeNonNegativeInteger
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return int(value) if ok and value == int(value) and value >= 0 else 0


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _transcript(
    path: Path, problems: Problems, what: str = "transcript"
) -> tuple[list[dict[str, Any]], bool]:
    """The rows of a JSON-lines file (``transcript.jsonl``, a local conversation's
    ``messages.jsonl``) that parse as JSON objects (``parseTranscriptRows`` skips the others),
    and whether the whole file was read; ``what`` names the problem rows."""
    rows: list[dict[str, Any]] = []
    if not path.exists():
        return rows, True
    try:
        for number, raw in enumerate(
            iter_lines(path, max_bytes=_TRANSCRIPT_BYTES, max_line_bytes=_LINE_BYTES), 1
        ):
            line = raw.strip()
            if not line:
                continue
            try:
                entry = _json(line.decode("utf-8", "replace"), path, problems, number)
            except (ValueError, RecursionError):
                problems.add(path, f"bad_{what}_row", "a row that is not JSON", line=number)
                continue
            if isinstance(entry, dict):
                rows.append(entry)
    except (OSError, FileTooLarge, LineTooLong) as exc:
        problems.add(path, f"{what}_not_read", f"{what} not read to its end: {exc}")
        return rows, False
    return rows, True


def _eligible(entry: dict[str, Any]) -> bool:
    # isEligibleCanonicalEntry
    return entry.get("kind") in ("user", "assistant") and bool(
        _text(entry.get("source_message_id"))
    )


def read_conversation(folder: Path, problems: Problems) -> dict[str, Any]:
    """One conversation's reflection state, as ``readState`` would see it (without writing it
    back): a ``v3_assistant_steps`` state normalised (``normalizeV3State``), a ``v2_message_id``
    one migrated from the transcript (``migrateMessageIdState``), none or another schema built
    from the transcript as unreflected (``buildUnreflectedStateFromTranscript``); plus what the
    transcript and the payload files say."""
    state_path = folder / "state.json"
    rows, complete = _transcript(folder / "transcript.jsonl", problems)
    assistant = sum(1 for r in rows if r.get("kind") == "assistant")
    parsed: dict[str, Any] | None = None
    recorded = None
    if state_path.exists():
        try:
            text = read_text(state_path, max_bytes=MAX_FILE_BYTES, errors="strict")
            value = _json(text, state_path, problems)
            if isinstance(value, dict):
                parsed = value
            else:
                problems.add(state_path, "bad_state", "state.json is not a JSON object")
        except (OSError, FileTooLarge, UnicodeDecodeError, ValueError, RecursionError) as exc:
            problems.add(state_path, "bad_state", f"state.json not read: {exc}")
    schema = parsed.get("schema_version") if parsed is not None else None
    if parsed is not None and schema == STATE_SCHEMA:
        total = _count(parsed.get("total_completed_steps"))
        reflected = min(_count(parsed.get("reflected_completed_steps")), total)
        through = _text(parsed.get("reflected_through_message_id"))
        recorded = parsed.get("steps_since_last_successful_reflection")
    else:
        total = assistant
        through = _text(parsed.get("reflected_through_message_id")) if parsed else None
        reflected = 0
        if parsed is not None and schema == LEGACY_STATE_SCHEMA and through:
            anchor = next(
                (
                    i
                    for i, r in enumerate(rows)
                    if _eligible(r) and r.get("source_message_id") == through
                ),
                None,
            )
            if anchor is not None:
                reflected = sum(1 for r in rows[: anchor + 1] if r.get("kind") == "assistant")
        reflected = min(reflected, total)
        if parsed is not None and schema != LEGACY_STATE_SCHEMA:
            problems.add(
                state_path,
                "unknown_state_schema",
                f"schema_version {schema!r}: Letta Code rebuilds it from the transcript "
                "as never reflected",
            )
    # buildUnreflectedStateFromTranscript keeps no times: only v3 and v2 states carry them
    kept = parsed if parsed is not None and schema in (STATE_SCHEMA, LEGACY_STATE_SCHEMA) else {}
    started = _text(kept.get("last_reflection_started_at"))
    succeeded = _text(kept.get("last_reflection_succeeded_at"))
    payloads: list[float] = []
    try:
        for entry in os.scandir(folder):
            if (
                entry.name.startswith("payload-auto-")
                and entry.name.endswith(".json")
                and entry.is_file(follow_symlinks=False)
            ):
                payloads.append(entry.stat(follow_symlinks=False).st_mtime)
    except OSError as exc:
        problems.add(folder, "not_listed", f"conversation folder not listed: {exc}")
    captured = [c for r in rows if isinstance(c := r.get("captured_at"), str)]
    return {
        "schema_version": schema if isinstance(schema, str) else None,
        "state_file": parsed is not None,
        "total_completed_steps": total,
        "reflected_completed_steps": reflected,
        "steps_since_last_successful_reflection": max(0, total - reflected),
        "steps_recorded": _count(recorded) if recorded is not None else None,
        "reflected_through_message_id": through,
        "last_reflection_started_at": started,
        "last_reflection_succeeded_at": succeeded,
        "transcript_rows": len(rows),
        "transcript_assistant_rows": assistant,
        "transcript_complete": complete,
        "last_captured_at": max(captured) if captured else None,
        "payload_files": len(payloads),
        "payload_times": sorted(payloads),
    }


_WORKTREE = re.compile(r"^(?P<label>.+)-(?P<ts>\d{14})-(?P<uuid>[0-9a-f]{8})$")


def worktree_name(name: str) -> tuple[str | None, pd.Timestamp | None, str | None]:
    """``<label>-<YYYYMMDDHHMMSS>-<uuid8>`` (``createReflectionMemoryWorktree`` with
    ``buildReflectionWorktreeId``: the UTC creation time): (label, created, branch
    ``letta/<label>/<id>``), or Nones for a name Letta Code does not give."""
    m = _WORKTREE.match(name)
    if not m:
        return None, None, None
    try:
        created = pd.Timestamp(pd.to_datetime(m["ts"], format="%Y%m%d%H%M%S", utc=True))
    except (ValueError, OverflowError):
        return None, None, None
    ident = f"{m['ts']}-{m['uuid']}"
    return m["label"], created, f"letta/{m['label']}/{ident}"


def read_local_agents(folder: Path, problems: Problems) -> list[dict[str, Any]]:
    """The agent records of Letta Code's local backend (``<storage>/agents/<base64url id>.json``,
    ``src/backend/local/local-agent-record.ts``): ``id``, ``name`` and, from ``tags``, whether
    it is a subagent (``role:subagent``), its type (``type:<t>``) and parent (``parent:<id>``).
    Each reflection pass starts a subagent of its own, so the reflection subagents naming an
    agent as parent are the passes launched for it. A record not read is a problem row."""
    out: list[dict[str, Any]] = []
    try:
        with os.scandir(folder) as found:
            names = sorted(e.name for e in found if e.is_file(follow_symlinks=False))
    except FileNotFoundError:
        return out
    except OSError as exc:
        problems.add(folder, "not_listed", f"folder not listed: {exc.strerror}")
        return out
    for name in names:
        if not name.endswith(".json"):
            continue
        path = folder / name
        try:
            doc = _json(read_text(path, max_bytes=MAX_FILE_BYTES, errors="strict"), path, problems)
        except (OSError, FileTooLarge, UnicodeDecodeError, ValueError, RecursionError) as exc:
            problems.add(path, "bad_agent_record", f"agent record not read: {exc}")
            continue
        ident = doc.get("id") if isinstance(doc, dict) else None
        if not isinstance(ident, str) or not ident:
            problems.add(path, "bad_agent_record", "agent record without a string id")
            continue
        raw = doc.get("tags")
        tags = [t for t in raw if isinstance(t, str)] if isinstance(raw, list) else []
        tag = {k: v for k, _, v in (t.partition(":") for t in tags) if v}
        out.append(
            {
                "id": ident,
                "name": _text(doc.get("name")),
                "subagent": "role:subagent" in tags,
                "type": tag.get("type"),
                "parent": tag.get("parent"),
            }
        )
    return out


#: The reminder Letta Code puts first in a subagent's conversation
#: (``This message is from agent <id>, conversation <id>.``): which conversation a pass reflects on.
_FROM = re.compile(r"This message is from agent (?P<agent>\S+?), conversation (?P<conv>[^\s.]+)\.")
_EVIDENCE_CHARS = 300


def _texts(content: Any) -> list[str]:
    items = content if isinstance(content, list) else []
    return [i["text"] for i in items if isinstance(i, dict) and isinstance(i.get("text"), str)]


def read_pass(folder: Path, problems: Problems) -> dict[str, Any]:
    """One reflection pass of the local backend, from its subagent's conversation folder
    (``<storage>/conversations/<base64url "default:<subagent id>">/``: ``conversation.json``
    and ``messages.jsonl``): when it started and last wrote, the conversation it reflected on,
    how many tool calls it made, and, as written, its last tool call's name and result and its
    last text (each cut to 300 characters): why a pass failed is there, not in the state."""
    out: dict[str, Any] = {}
    meta = folder / "conversation.json"
    if meta.is_file():
        try:
            doc = _json(read_text(meta, max_bytes=MAX_FILE_BYTES, errors="strict"), meta, problems)
        except (OSError, FileTooLarge, UnicodeDecodeError, ValueError, RecursionError) as exc:
            problems.add(meta, "bad_conversation", f"conversation.json not read: {exc}")
            doc = None
        if isinstance(doc, dict):
            out["started_at"] = _text(doc.get("created_at"))
            out["last_message_at"] = _text(doc.get("last_message_at"))
    rows, _ = _transcript(folder / "messages.jsonl", problems, what="messages")
    calls, tool, result, text = 0, None, None, None
    for row in rows:
        message = row.get("message")
        if not isinstance(message, dict):
            continue
        role, content = message.get("role"), message.get("content")
        if role == "user" and "conversation_id" not in out:
            m = next(filter(None, map(_FROM.search, _texts(content))), None)
            out["conversation_id"] = m["conv"] if m else None
        elif role == "assistant":
            for item in content if isinstance(content, list) else []:
                if isinstance(item, dict) and item.get("type") == "toolCall":
                    calls += 1
                    tool = _text(item.get("name"))
            said = "".join(_texts(content)).strip()
            text = said[:_EVIDENCE_CHARS] if said else text
        elif role == "toolResult":
            tool = _text(message.get("toolName")) or tool
            result = "".join(_texts(content)).strip()[:_EVIDENCE_CHARS]
    return out | {
        "tool_calls": calls,
        "last_tool": tool,
        "last_tool_result": result,
        "last_text": text,
    }
