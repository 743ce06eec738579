"""elfmem database → elfmem markdown substrate (``.elfmem/memory/`` + ``.elfmem/ledger/``).

What goes where, and why it differs from ``elfmem export --to-markdown`` (formats-elfmem.md §5):

* ``self.md`` holds the constitution: every active or inbox block tagged ``self/constitutional``
  (the v2 design keeps the constitution outside the block table). elfmem reads ``self.md`` raw;
  memlab writes it in block format so each section keeps its id, tags and pin and can be read
  back and verified.
* ``notes/<category>.md`` (active), ``log/<category>.md`` (inbox), ``archive/<category>.md``
  (archived, with ``archive_reason`` and ``superseded_by`` in the comment line). The title is the
  first line of the content (without leading ``#``), and the body is the whole content, so
  content round-trips exactly (elfmem's export cuts the title at 60 characters and absorbs mind
  sub-headings; the body is still whole here because every block carries its comment line).
* ``pinned`` is the ``pinned`` column or the ``self/constitutional`` tag, elfmem's own export
  rule (schema < 7 has no column; constitutional rows were backfilled at v7).
* Every agent-declared edge is a relation line on its declaring block, including relations
  outside elfmem's eight-word vocabulary (``elaborates:: [[id]]``, which elfmem's parser accepts
  and lists as unknown). *Every* edge, learned ones included, is also a ledger ``link`` event,
  which is how elfmem's index rebuild restores weights and reinforcement.
* The ledger carries what markdown cannot: a ``seed`` per block (reinforcement count, last
  reinforced active hour, α/β, λ, summary, exactly as elfmem's export writes them), the clock
  (``instance``), and, as ``memlab.*`` events that elfmem's replay skips, every outcome,
  amendment, contradiction/near-duplicate, co-retrieval count, session, frame, peer and config
  value, plus the per-block fields the seed has no key for. Text too long for one ledger line is
  carried in ``memlab.text`` chunks instead of being dropped.

All events are stamped with the migration's fixed time; original times travel in the payload.

The block layout and the ledger are shared with the Letta and Souveraine targets
(:mod:`memlab.migrations._letta`) and their parity checks; the substrate planner itself is the
elfmem database kind's (:mod:`memlab.kinds.elfmem_db._migrate`).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from memlab.errors import MigrationError
from memlab.formats.blockfile import (
    SELF_FILE,
    Block,
    fit_ledger_event,
    format_blockfile,
    format_ledger,
    format_ledger_line,
    ledger_path,
    parse_blockfile,
    substrate_path,
)
from memlab.migrations._plan import (
    refuse_nul,
)
from memlab.store import Store

__all__ = [
    "CONSTITUTION_TAG",
    "STATUS_SECTION",
    "MEMLAB_KIND",
    "TEXT_CHUNK",
    "BLOCK_SIDE_FIELDS",
    "SideTable",
    "SIDE_TABLES",
    "value_or_none",
    "iso",
    "content_sha",
    "frame",
    "tags_by_block",
    "effective_pinned",
    "declared_relations",
    "title_for",
    "to_block",
    "layout_blocks",
    "render_block_files",
    "render_blocks",
    "number_or",
    "ledger_events",
    "source_time",
]

CONSTITUTION_TAG = "self/constitutional"
STATUS_SECTION = {"active": "notes", "inbox": "log", "archived": "archive"}
MEMLAB_KIND = "memlab."
#: Characters of text per ``memlab.text`` chunk: even at 6 bytes per escaped character a chunk
#: stays far below elfmem's 4000-byte line limit.
TEXT_CHUNK = 500

#: Per-block fields carried in a ``memlab.block`` event: column -> ledger key.
BLOCK_SIDE_FIELDS = {
    "confidence": "conf",
    "self_alignment": "sa",
    "source": "src",
    "token_count": "tc",
    "embedding_model": "em",
    "last_session_id": "sid",
    "outcome_evidence": "oe",
    "source_peer": "peer",
    "share": "share",
    "envelope_json": "env",
    "last_scored_at": "ls",
    "volatility_class": "vol",
    "status": "status",
    "archive_reason": "reason",
    "superseded_by": "sup",
    "pinned": "pin_col",
}


@dataclass(frozen=True)
class SideTable:
    """A DB frame carried as ``memlab.<kind>`` ledger events: ledger key -> frame column."""

    frame: str
    kind: str
    order: tuple[str, ...]
    key_fields: tuple[str, ...]
    mapping: dict[str, str] | None  # None: every column under its own name


SIDE_TABLES: tuple[SideTable, ...] = (
    SideTable(
        "outcomes",
        "outcome",
        ("created_at", "id"),
        ("oid",),
        {
            "id": "block_id",
            "oid": "id",
            "sig": "signal",
            "w": "weight",
            "src": "source",
            "cb": "confidence_before",
            "ca": "confidence_after",
            "at": "created_at",
        },
    ),
    SideTable(
        "amendments",
        "amend",
        ("id",),
        ("aid",),
        {
            "id": "block_id",
            "aid": "id",
            "at": "timestamp",
            "drift": "drift_score",
            "by": "acceptor",
            "why": "rationale",
            "reverted": "reverted_at",
            "pre": "pre_content",
            "post": "post_content",
            "pre_sum": "pre_summary",
            "post_sum": "post_summary",
        },
    ),
    SideTable(
        "contradictions",
        "contra",
        ("block_a_id", "block_b_id"),
        ("a", "b"),
        {
            "a": "block_a_id",
            "b": "block_b_id",
            "score": "score",
            "resolved": "resolved",
            "at": "created_at",
            "kind": "kind",
            "cue_sim": "cue_similarity",
        },
    ),
    SideTable("co_retrieval", "corel", ("from_id", "to_id"), ("from_id", "to_id"), None),
    SideTable(
        "sessions",
        "session",
        ("started_at", "id"),
        ("sid",),
        {
            "sid": "id",
            "task": "task_type",
            "start": "started_at",
            "end": "ended_at",
            "sah": "start_active_hours",
            "dur": "duration_s",
        },
    ),
    SideTable(
        "frames",
        "frame",
        ("name",),
        ("name",),
        {
            "name": "name",
            "weights": "weights_json",
            "filters": "filters_json",
            "guarantees": "guarantees_json",
            "template": "template",
            "budget": "token_budget",
            "cache": "cache_json",
            "src": "source",
            "at": "created_at",
        },
    ),
    SideTable("peers", "peer", (), (), None),
)


def value_or_none(value: Any) -> Any:
    """A JSON-safe Python value: NA/NaN → None, numpy scalars → Python, times → ISO text."""
    if value is None:
        return None
    if isinstance(value, (list, dict)):
        return value
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(value, pd.Timestamp):
        return iso(value)
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def iso(ts: Any) -> str | None:
    """UTC ISO-8601 text with an explicit offset (no spaces, so it fits a comment field)."""
    if ts is None or (not isinstance(ts, str) and pd.isna(ts)):
        return None
    t = pd.Timestamp(ts)
    t = t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")
    return t.isoformat()


def content_sha(text: str) -> str:
    """The content hash parity compares: sha256 of the content with surrounding whitespace
    removed (the block format strips bodies; a migration reports any block that had some)."""
    return hashlib.sha256(str(text).strip().encode("utf-8")).hexdigest()


def frame(store: Store, name: str) -> pd.DataFrame:
    """A frame by name, empty when the store does not have it (``store.frames`` is the dict)."""
    df = store.frames.get(name)
    return df if df is not None else pd.DataFrame()


def tags_by_block(store: Store) -> dict[str, list[str]]:
    tags = frame(store, "tags")
    if tags.empty:
        return {}
    out: dict[str, list[str]] = {}
    for block_id, tag in zip(tags["block_id"], tags["tag"]):
        out.setdefault(str(block_id), []).append(str(tag))
    return {k: sorted(set(v)) for k, v in out.items()}


def effective_pinned(blocks: pd.DataFrame, tags: dict[str, list[str]]) -> pd.Series:
    """elfmem's export rule: pinned if the column says so or the block is constitutional."""
    col = blocks["pinned"] if "pinned" in blocks else pd.Series(pd.NA, index=blocks.index)
    by_tag = blocks["id"].map(lambda i: CONSTITUTION_TAG in tags.get(str(i), []))
    return (col.fillna(False).astype(bool) | by_tag.astype(bool)).astype("boolean")


def declared_relations(store: Store) -> dict[str, list[tuple[str, str]]]:
    """Agent-declared edges as ``{declaring block: [(relation, target)]}`` (elfmem's export rule:
    the declaring side is ``declared_by``, or ``from_id`` for edges from before schema 8)."""
    edges = frame(store, "edges")
    out: dict[str, list[tuple[str, str]]] = {}
    if edges.empty:
        return out
    agent = edges[edges["origin"].astype("string") == "agent"]
    agent = agent.sort_values(["from_id", "to_id"], kind="stable")
    for row in agent.itertuples(index=False):
        by = value_or_none(getattr(row, "declared_by", None))
        source = str(by) if by is not None else str(row.from_id)
        target = str(row.to_id) if source == str(row.from_id) else str(row.from_id)
        out.setdefault(source, []).append((str(row.relation_type), target))
    return out


def title_for(content: str) -> str:
    """The first non-blank line of the content, without leading '#', as a one-line heading."""
    for line in str(content).splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text[:80]
    return "Untitled"


def _created_order(df: pd.DataFrame) -> pd.DataFrame:
    return (
        df.assign(_c=df["created_at"])
        .sort_values(["_c", "id"], kind="stable", na_position="last")
        .drop(columns="_c")
    )


def to_block(row: Any, tags: list[str], relations: list[tuple[str, str]], pinned: bool) -> Block:
    extra: dict[str, str] = {}
    if value_or_none(row.status) == "archived":
        reason = value_or_none(row.archive_reason)
        if reason is not None:
            extra["archive_reason"] = str(reason)
        sup = value_or_none(getattr(row, "superseded_by", None))
        if sup is not None:
            extra["superseded_by"] = str(sup)
    cue = value_or_none(getattr(row, "cue", None))
    vol = value_or_none(getattr(row, "volatility_class", None))
    return Block(
        title=title_for(row.content),
        body=str(row.content),
        id=str(row.id),
        tags=list(tags),
        pinned=bool(pinned),
        created=iso(row.created_at),
        cls=None if vol is None else str(vol),
        cue=None if cue is None else str(cue),
        relations=list(relations),
        extra=extra,
    )


def layout_blocks(store: Store) -> tuple[dict[str, list[Block]], list[dict], list[dict]]:
    """``{substrate file: [Block]}`` plus moved and flag rows, for any target that wants the
    elfmem block format (the substrate itself, or block bodies inside memfs files)."""
    blocks = store.blocks
    if blocks.empty:
        return {}, [], []
    tags = tags_by_block(store)
    pins = effective_pinned(blocks, tags)
    relations = declared_relations(store)
    known = set(blocks["id"].astype(str))
    files: dict[str, list[Block]] = {}
    moved: list[dict] = []
    flags: list[dict] = []
    ordered = _created_order(blocks.assign(pinned_effective=pins))
    for row in ordered.itertuples(index=False):
        pinned = bool(row.pinned_effective)
        block_id = str(row.id)
        status = value_or_none(row.status)
        block_tags = tags.get(block_id, [])
        if status not in STATUS_SECTION:
            flags.append(
                {
                    "kind": "unknown_status",
                    "item": block_id,
                    "path": None,
                    "severity": "error",
                    "message": f"status {status!r} is not inbox/active/archived; kept in "
                    "notes/ so it is not lost",
                }
            )
            status = "active"
        constitutional = CONSTITUTION_TAG in block_tags and status != "archived"
        category = str(value_or_none(row.category) or "uncategorised")
        path = SELF_FILE if constitutional else substrate_path(STATUS_SECTION[status], category)
        rels = relations.get(block_id, [])
        for rel, target in rels:
            if target not in known:
                flags.append(
                    {
                        "kind": "dangling_edge",
                        "item": block_id,
                        "path": path,
                        "severity": "warning",
                        "message": f"{rel} edge to {target}, which is not in the database",
                    }
                )
        content = str(row.content)
        if content != content.strip():
            flags.append(
                {
                    "kind": "whitespace_trimmed",
                    "item": block_id,
                    "path": path,
                    "severity": "info",
                    "message": "content had leading/trailing whitespace; the block format "
                    "strips it (parity compares stripped content)",
                }
            )
        files.setdefault(path, []).append(to_block(row, block_tags, rels, bool(pinned)))
        moved.append(
            {
                "kind": "block",
                "item": block_id,
                "label": title_for(content),
                "repo": "",
                "path": path,
                "section": "self" if constitutional else STATUS_SECTION[status],
                "chars": len(content),
                "note": None,
            }
        )
    return files, moved, flags


def render_block_files(files: dict[str, list[Block]], flags: list[dict]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path, blocks in sorted(files.items()):
        text = render_blocks(path, blocks, flags)
        out[path] = text.encode("utf-8")
    return out


def render_blocks(path: str, blocks: list[Block], flags: list[dict]) -> str:
    """One block file's text; sub-headings elfmem will list as "absorbed" become info flags."""
    try:
        text = format_blockfile(blocks)
    except MigrationError as exc:
        raise MigrationError(exc.message, path=path, hint=exc.hint) from exc
    if "\x00" in text:
        refuse_nul(path, text, next(b.id for b in blocks if "\x00" in format_blockfile([b])))
    _, problems = parse_blockfile(text, file=path)
    starts = sorted((b.line or 0, b.id) for b in parse_blockfile(text)[0])
    for row in problems.frame().itertuples(index=False):
        if row.kind != "absorbed_heading":
            continue
        owner = [bid for line, bid in starts if line <= (row.line or 0)]
        flags.append(
            {
                "kind": "absorbed_heading",
                "item": owner[-1] if owner else None,
                "path": path,
                "severity": "info",
                "message": f"{row.message.split(' is read as')[0]} in the body is read as "
                "body text, as intended; `elfmem index check` lists it as an "
                "absorbed heading",
            }
        )
    return text


# --------------------------------------------------------------------------- the ledger


class _Ledger:
    """Collects events with one fixed time and a running sequence, splitting oversized text."""

    def __init__(self, when: str) -> None:
        self.when = when
        self.events: list[dict[str, Any]] = []
        self.flags: list[dict] = []

    def add(self, kind: str, ah: float | None, /, **payload: Any) -> None:
        payload = {k: value_or_none(v) for k, v in payload.items()}
        event = {
            "t": self.when,
            "s": len(self.events),
            "ah": round(float(ah or 0.0), 6),
            "k": kind,
            **payload,
        }
        try:
            format_ledger_line(event)
            self.events.append(event)
            return
        except MigrationError:
            pass
        fitted, dropped = fit_ledger_event(event)
        self.events.append(fitted)
        key = (
            payload.get("id") or payload.get("name") or f"{payload.get('from')}-{payload.get('to')}"
        )
        for name in dropped:
            text = str(event[name])
            parts = [text[i : i + TEXT_CHUNK] for i in range(0, len(text), TEXT_CHUNK)]
            for n, part in enumerate(parts):
                self.events.append(
                    {
                        "t": self.when,
                        "s": len(self.events),
                        "ah": event["ah"],
                        "k": MEMLAB_KIND + "text",
                        "of": kind,
                        "ref": fitted["s"],
                        "key": key,
                        "field": name,
                        "part": n,
                        "parts": len(parts),
                        "text": part,
                    }
                )
            self.flags.append(
                {
                    "kind": "ledger_text_split",
                    "item": str(key),
                    "path": None,
                    "severity": "info",
                    "message": f"{kind}.{name} ({len(text)} chars) is over elfmem's 4000-byte "
                    "ledger "
                    f"line; carried in {len(parts)} memlab.text event(s). elfmem's replay "
                    "does not read those, so its rebuilt index lacks this field",
                }
            )

    def files(self) -> dict[str, bytes]:
        by_file: dict[str, list[dict]] = {}
        for e in self.events:
            by_file.setdefault(ledger_path(e["t"]), []).append(e)
        return {p: format_ledger(evs).encode("utf-8") for p, evs in sorted(by_file.items())}


def number_or(value: Any, default: float) -> float:
    v = value_or_none(value)
    return default if v is None else float(v)


def ledger_events(store: Store, when: str) -> _Ledger:
    """Every side record of an elfmem DB as ledger events (see the module docstring)."""
    led = _Ledger(when)
    config = frame(store, "config")
    clock = None
    if not config.empty and "total_active_hours" in config:
        clock = value_or_none(config["total_active_hours"].iloc[0])
    if clock is not None:
        led.add("instance", clock, total_ah=float(clock))
    raw = frame(store, "config_raw")
    for row in (
        raw.sort_values("key", kind="stable").itertuples(index=False) if not raw.empty else []
    ):
        led.add(MEMLAB_KIND + "config", clock, key=str(row.key), value=value_or_none(row.value))

    blocks = store.blocks
    for row in blocks.sort_values("id", kind="stable").itertuples(index=False):
        lah = number_or(getattr(row, "last_reinforced_at", None), 0.0)
        seed = {
            "id": str(row.id),
            "created": iso(row.created_at),
            "n": int(number_or(getattr(row, "reinforcement_count", None), 0.0)),
            "lah": lah,
            "a": number_or(getattr(row, "success_count", None), 0.5),
            "b": number_or(getattr(row, "failure_count", None), 0.5),
            "lam": number_or(getattr(row, "decay_lambda", None), 0.01),
        }
        summary = value_or_none(getattr(row, "summary", None))
        if summary:
            seed["sum"] = summary
        led.add("seed", lah, **seed)
        side = {
            key: value_or_none(getattr(row, col, None))
            for col, key in BLOCK_SIDE_FIELDS.items()
            if hasattr(row, col)
        }
        # A seed cannot say "no α/β recorded" (schema < 4); keep that distinction here.
        side["a_raw"] = value_or_none(getattr(row, "success_count", None))
        side["b_raw"] = value_or_none(getattr(row, "failure_count", None))
        led.add(
            MEMLAB_KIND + "block",
            clock,
            id=str(row.id),
            **{k: v for k, v in side.items() if v is not None},
        )

    edges = frame(store, "edges")
    if not edges.empty:
        for row in edges.sort_values(["from_id", "to_id"], kind="stable").itertuples(index=False):
            lah = value_or_none(row.last_active_hours)
            led.add(
                "link",
                lah,
                **{"from": str(row.from_id), "to": str(row.to_id)},
                rel=value_or_none(row.relation_type),
                o=value_or_none(row.origin),
                w=value_or_none(row.weight),
                rc=value_or_none(row.reinforcement_count),
                lah=lah,
                by=value_or_none(getattr(row, "declared_by", None)),
                note=value_or_none(row.note),
                ct=iso(row.created_at),
            )
    for spec in SIDE_TABLES:
        df = frame(store, spec.frame)
        if df.empty:
            continue
        mapping = spec.mapping if spec.mapping is not None else {c: c for c in df.columns}
        present = [c for c in spec.order if c in df.columns]
        df = df.sort_values(present, kind="stable") if present else df
        for rec in df.to_dict("records"):
            led.add(
                MEMLAB_KIND + spec.kind,
                clock,
                **{key: rec.get(col) for key, col in mapping.items() if col in rec},
            )
    return led


def source_time(store: Store) -> pd.Timestamp | None:
    """The latest timestamp anywhere in the DB: the migration's fixed commit date."""
    stamps: list[pd.Timestamp] = []
    for name, cols in (
        ("blocks", ["created_at", "last_scored_at"]),
        ("edges", ["created_at"]),
        ("outcomes", ["created_at"]),
        ("amendments", ["timestamp", "reverted_at"]),
        ("contradictions", ["created_at"]),
        ("sessions", ["started_at", "ended_at"]),
        ("config", ["last_consolidated_at"]),
    ):
        df = frame(store, name)
        for col in cols:
            if not df.empty and col in df:
                values = pd.to_datetime(df[col], utc=True, errors="coerce").dropna()
                if not values.empty:
                    stamps.append(values.max())
    return max(stamps) if stamps else None
