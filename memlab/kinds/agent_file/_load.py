"""Letta Agent Files (``.af``) and Letta blocks-API JSON lists, read into typed frames.

Three shapes are recognised from content, not from the file name:

- ``v2``: the current ``AgentFileSchema`` (letta ``schemas/agent_file.py``): top-level
  ``agents``, ``blocks``, ``tools``, ``groups``...; agents point at blocks through ``block_ids``
  and groups share blocks through ``shared_block_ids``, so one block can sit in several agents'
  prompts.
- ``legacy_v1``: Letta 0.6-0.10 exports, a single agent object whose blocks are inline in
  ``core_memory`` (no ids, no ``read_only``).
- ``blocks_json``: a JSON list of ``BlockResponse`` objects as ``GET /v1/blocks/`` or
  ``GET /v1/agents/{id}/core-memory/blocks`` return them (kind ``letta_blocks``).

Any of them may be double-encoded (the file holds a JSON string whose text is the document),
as ``letta`` exports from ``GET /v1/agents/{id}/export`` are.

The file is read once, never written. Structural damage raises (CorruptStore,
UnrecognizedStore); odd records inside a readable file become problem rows, and so do the two
things ``json.loads`` accepts silently (see :mod:`memlab.formats._json`): an escaped lone
surrogate (``bad_text``; read with U+FFFD in its place) and a key repeated in one object
(``duplicate_key``; the last value kept, as the Letta server reads it).

A JSON string past :data:`~memlab.constants.MAX_VALUE_BYTES` (a huge block value or system
prompt) is cut out of the file's bytes before the parse and never decoded: the field is null,
its length in characters unknown (``chars``, ``system_chars`` or ``source_chars`` null, and the
audit's totals over it null), an ``oversized`` problem row names it with its size in bytes, and
``meta["oversized_values"]`` lists them; a migration refuses such a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.constants import INT64_MAX, MAX_VALUE_BYTES
from memlab.errors import CorruptStore, StoreNotFound, UnrecognizedStore
from memlab.kinds.agent_file._read import Unread, read_json
from memlab.store import Problems, Store, categories, empty_frame

__all__ = ["load_agent_file", "DEFAULT_MAX_BYTES", "FRAME_DTYPES"]

#: Largest file read without being asked: the biggest public .af seen is about 4 MiB, and a
#: parsed JSON document takes several times its size in memory.
DEFAULT_MAX_BYTES = 256 * 1024 * 1024

FRAME_DTYPES: dict[str, dict[str, str]] = {
    "agents": {
        "agent_id": "string",
        "name": "string",
        "agent_type": "category",
        "model": "string",
        "context_window": "Int64",
        "system_chars": "Int64",
        "n_blocks": "Int64",
        "n_tools": "Int64",
        "n_messages": "Int64",
        "n_in_context": "Int64",
        "tags": "object",
    },
    "blocks": {
        "block_id": "string",
        "label": "string",
        "value": "string",
        "chars": "Int64",
        "limit": "Int64",
        "description": "string",
        "read_only": "boolean",
        "metadata": "object",
        "is_template": "boolean",
        "template_name": "string",
        "hidden": "boolean",
        "tags": "object",
        "over_limit": "boolean",
        "n_agents": "Int64",
        "shared": "boolean",
        "extra": "object",
    },
    "block_agents": {"block_id": "string", "agent_id": "string"},
    "tools": {
        "tool_id": "string",
        "name": "string",
        "tool_type": "category",
        "source_type": "category",
        "source_chars": "Int64",
        "n_agents": "Int64",
    },
    "messages": {"agent_id": "string", "role": "category", "n": "Int64"},
}


# Block fields read into their own columns; every other field is kept whole in `extra`
# (template ids, project_id, legacy created_at/updated_at, ...), so a migration can carry it.
_BLOCK_FIELDS = frozenset(
    {
        "id",
        "label",
        "value",
        "limit",
        "description",
        "read_only",
        "metadata",
        "metadata_",
        "is_template",
        "template_name",
        "hidden",
        "tags",
    }
)


def load_agent_file(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Store:
    """Load a Letta Agent File or a blocks JSON list, read-only.

    Returns a Store of kind ``agent_file`` (or ``letta_blocks`` for a blocks list) with frames
    ``agents``, ``blocks``, ``block_agents``, ``tools``, ``messages`` and meta ``schema``
    (``v2``/``legacy_v1``/``blocks_json``), ``double_encoded``, ``letta_version``.

    Example::

        store = load_agent_file("data/samples/letta-af/ezra.af")
        store.blocks.loc[store.blocks.over_limit, ["label", "chars", "limit"]]
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise StoreNotFound("no such agent file", path=p)
    if p.is_dir():
        raise UnrecognizedStore("is a folder, not an agent file", path=p)
    size = p.stat().st_size
    if size > max_bytes:
        raise CorruptStore(
            f"not read: over {max_bytes:,} bytes ({size:,} bytes; memlab's cap for agent files)",
            path=p,
            hint="if it really is an agent file, pass max_bytes= to load_agent_file",
        )
    issues: list[tuple[str, str]] = []
    unread = Unread()
    doc, double_encoded = read_json(p, issues, unread)
    problems = Problems()
    file = str(p)
    for kind, message in issues:
        problems.add(file, kind, message)
    if isinstance(doc, dict) and isinstance(doc.get("agents"), list):
        schema, kind = "v2", "agent_file"
        frames, meta = _read_v2(doc, file, problems, unread)
    elif isinstance(doc, dict) and (
        "core_memory" in doc or {"agent_type", "llm_config", "messages"} <= doc.keys()
    ):
        schema, kind = "legacy_v1", "agent_file"
        frames, meta = _read_legacy(doc, file, problems, unread)
    elif isinstance(doc, list):
        schema, kind = "blocks_json", "letta_blocks"
        frames, meta = _read_blocks_list(doc, p, file, problems, unread)
    else:
        shape = (
            f"an object with keys {sorted(doc)[:8]}"
            if isinstance(doc, dict)
            else f"a JSON {type(doc).__name__}"
        )
        raise UnrecognizedStore(
            f"is JSON but not a Letta agent file or blocks list: {shape}", path=p
        )
    meta = {
        "schema": schema,
        "double_encoded": double_encoded,
        **meta,
        "bytes": size,
        "oversized_values": unread.hits,
    }
    meta.setdefault("letta_version", None)
    # The brief that introduced this loader called the key "version"; both name the same value.
    meta["version"] = meta["letta_version"]
    return Store(kind=kind, path=p, frames=frames, problems=problems.frame(), meta=meta)


# --- small coercions that report instead of guessing ------------------------------------------


class _Ctx:
    def __init__(self, file: str, problems: Problems, unread: Unread) -> None:
        self.file = file
        self.problems = problems
        self.unread = unread

    def add(self, kind: str, message: str) -> None:
        self.problems.add(self.file, kind, message)

    def is_unread(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.unread.sizes

    def text(self, value: Any, where: str) -> str | None:
        if self.is_unread(value):
            size = self.unread.sizes[value]
            self.add(
                "oversized",
                f"{where}: a JSON string of {size:,} bytes, over memlab's "
                f"{MAX_VALUE_BYTES:,}-byte cap for one value; its text is not "
                "read (null, and its length in characters unknown: null)",
            )
            self.unread.hits.append({"where": where, "bytes": size})
            return None
        if value is None or isinstance(value, str):
            return value
        self.add("bad_field", f"{where} is a {type(value).__name__}, not text; kept as JSON text")
        return json.dumps(value, ensure_ascii=False, default=str)

    def length(self, value: Any, where: str) -> int | None:
        """The characters of a text field (0 when absent); None for one past the cap."""
        text = self.text(value, where)
        return None if text is None and self.is_unread(value) else len(text or "")

    def integer(self, value: Any, where: str) -> int | None:
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (isinstance(value, float) and not value.is_integer())
        ):
            self.add("bad_field", f"{where} is {value!r:.40}, not an integer; read as missing")
            return None
        if abs(value) > INT64_MAX:
            self.add("bad_field", f"{where} is {value!r:.40}, too large; read as missing")
            return None
        return int(value)

    def flag(self, value: Any, where: str) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        self.add("bad_field", f"{where} is {value!r:.40}, not true/false; read as missing")
        return None

    def refs(self, value: Any, where: str) -> list[str]:
        """A list of ids; anything that is not a string id is reported and left out."""
        out: list[str] = []
        for ref in self.listing(value, where):
            if isinstance(ref, str) and ref:
                out.append(ref)
            else:
                self.add("bad_field", f"{where} holds {ref!r:.40}, not an id; left out")
        return out

    def listing(self, value: Any, where: str) -> list[Any]:
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.add("bad_field", f"{where} is a {type(value).__name__}, not a list; read as empty")
        return []

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        self.add("bad_field", f"{where} is a {type(value).__name__}, not an object; read as {{}}")
        return {}

    def ident(self, value: Any, fallback: str, where: str) -> str:
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        self.add(
            "missing_id", f"{where} has no usable id ({value!r:.40}); called {fallback!r} here"
        )
        return fallback


def _check_label(ctx: _Ctx, label: str | None, block_id: str) -> None:
    """Labels become memfs paths on migration; say which ones cannot, or read oddly."""
    if label is None:
        ctx.add("missing_label", f"block {block_id} has no label")
        return
    parts = label.replace("\\", "/").split("/")
    if (
        label.startswith(("/", "\\"))
        or ".." in parts
        or "\x00" in label
        or (len(label) > 1 and label[1] == ":")
    ):
        ctx.add(
            "unsafe_label",
            f"block {block_id} label {label!r:.80} would escape a memory "
            "folder as a file path (absolute or '..'); memlab never writes it as-is",
        )
    elif "" in parts or label != label.strip() or "\\" in label:
        ctx.add(
            "odd_label",
            f"block {block_id} label {label!r:.80} has an empty path segment, "
            "a backslash or surrounding spaces",
        )


# --- one block ------------------------------------------------------------------------------


def _block_row(ctx: _Ctx, raw: Any, fallback_id: str, *, legacy: bool) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        ctx.add("not_an_object", f"{fallback_id} is a {type(raw).__name__}, not a block; skipped")
        return None
    block_id = (
        ctx.ident(raw.get("id"), fallback_id, fallback_id)
        if not legacy or "id" in raw
        else fallback_id
    )
    label = ctx.text(raw.get("label"), f"block {block_id} label")
    value: Any = raw.get("value")  # text once read (None only when unread)
    if value is None:
        ctx.add("null_value", f"block {block_id} ({label}) has no value; read as empty")
        value = ""
    unread = ctx.is_unread(value)
    value = ctx.text(value, f"block {block_id} value")
    _check_label(ctx, label, block_id)
    limit = ctx.integer(raw.get("limit"), f"block {block_id} limit")
    if limit is not None and limit <= 0:
        ctx.add("bad_field", f"block {block_id} limit is {limit}; no value can fit it")
    meta_key = "metadata_" if legacy and "metadata" not in raw else "metadata"
    return {
        "block_id": block_id,
        "label": label,
        "value": value,
        "chars": None if unread else len(value),
        "limit": limit,
        "description": ctx.text(raw.get("description"), f"block {block_id} description"),
        # Legacy exports have no read_only at all: unknown, not False.
        "read_only": ctx.flag(raw.get("read_only"), f"block {block_id} read_only"),
        "metadata": ctx.mapping(raw.get(meta_key), f"block {block_id} {meta_key}"),
        "is_template": ctx.flag(raw.get("is_template"), f"block {block_id} is_template"),
        "template_name": ctx.text(raw.get("template_name"), f"block {block_id} template_name"),
        "hidden": ctx.flag(raw.get("hidden"), f"block {block_id} hidden"),
        "tags": [str(t) for t in ctx.listing(raw.get("tags"), f"block {block_id} tags")],
        "over_limit": None
        if limit is None
        else len(value) > limit
        if not unread
        else _surely_over(ctx.unread.sizes[raw["value"]], limit),
        "extra": {k: v for k, v in raw.items() if k not in _BLOCK_FIELDS},
    }


def _surely_over(size: int, limit: int) -> bool | None:
    """Whether a value not read is over ``limit``: a JSON string of ``size`` bytes holds at least
    ``size / 12`` characters (the longest spelling of one is a ``\\uXXXX\\uXXXX`` surrogate
    pair), so past ``12 * limit`` bytes it is over; below that it is not known (None)."""
    return True if size > 12 * max(limit, 0) else None


def _dedupe_ids(ctx: _Ctx, rows: list[dict[str, Any]], key: str, what: str) -> None:
    seen: dict[str, int] = {}
    for row in rows:
        seen[row[key]] = seen.get(row[key], 0) + 1
    for ident, n in seen.items():
        if n > 1:
            ctx.add(
                "duplicate_id",
                f"{n} {what}s share the id {ident!r}; references to it cannot tell them apart",
            )


# --- the three shapes -----------------------------------------------------------------------


def _read_v2(doc: dict[str, Any], file: str, problems: Problems, unread: Unread):
    ctx = _Ctx(file, problems, unread)
    blocks = [
        r
        for i, raw in enumerate(ctx.listing(doc.get("blocks"), "top-level blocks"))
        if (r := _block_row(ctx, raw, f"blocks[{i}]", legacy=False)) is not None
    ]
    tools = [
        r
        for i, raw in enumerate(ctx.listing(doc.get("tools"), "top-level tools"))
        if (r := _tool_row(ctx, raw, f"tools[{i}]")) is not None
    ]
    block_ids = {b["block_id"] for b in blocks}
    tool_ids = {t["tool_id"] for t in tools}
    pairs: list[tuple[str, str]] = []
    agents: list[dict[str, Any]] = []
    message_rows: list[dict[str, Any]] = []
    agent_tools: dict[str, set[str]] = {}

    for i, raw in enumerate(doc["agents"]):
        if not isinstance(raw, dict):
            ctx.add(
                "not_an_object", f"agents[{i}] is a {type(raw).__name__}, not an agent; skipped"
            )
            continue
        agent_id = ctx.ident(raw.get("id"), f"agents[{i}]", f"agents[{i}]")
        for j, inline in enumerate(
            ctx.listing(raw.get("memory_blocks"), f"agent {agent_id} memory_blocks")
        ):
            # Normally [] in exports; a hand-made file may still create blocks inline.
            row = _block_row(ctx, inline, f"{agent_id}/memory_blocks[{j}]", legacy=True)
            if row is not None:
                blocks.append(row)
                block_ids.add(row["block_id"])
                pairs.append((row["block_id"], agent_id))
        for ref in ctx.refs(raw.get("block_ids"), f"agent {agent_id} block_ids"):
            if ref in block_ids:
                pairs.append((ref, agent_id))
            else:
                ctx.add(
                    "dangling_block_id",
                    f"agent {agent_id} lists block {ref!r}, which is not in the file",
                )
        refs = ctx.refs(raw.get("tool_ids"), f"agent {agent_id} tool_ids")
        for ref in refs:
            if ref not in tool_ids:
                ctx.add(
                    "dangling_tool_id",
                    f"agent {agent_id} lists tool {ref!r}, which is not in the file",
                )
        agent_tools[agent_id] = set(refs)
        messages = ctx.listing(raw.get("messages"), f"agent {agent_id} messages")
        message_rows.extend(_message_counts(agent_id, messages))
        llm = ctx.mapping(raw.get("llm_config"), f"agent {agent_id} llm_config")
        model = llm.get("model") if isinstance(llm.get("model"), str) else None
        if model is None and isinstance(raw.get("model"), str):
            model = raw["model"]
        window = llm.get("context_window", raw.get("context_window_limit"))
        agents.append(
            {
                "agent_id": agent_id,
                "name": ctx.text(raw.get("name"), f"agent {agent_id} name"),
                "agent_type": ctx.text(raw.get("agent_type"), f"agent {agent_id} agent_type"),
                "model": model,
                "context_window": ctx.integer(window, f"agent {agent_id} context_window"),
                "system_chars": ctx.length(raw.get("system"), f"agent {agent_id} system"),
                "n_tools": len(agent_tools[agent_id]),
                "n_messages": len(messages),
                "n_in_context": _in_context(
                    ctx, raw, messages, "in_context_message_ids", f"agent {agent_id}"
                ),
                "tags": [str(t) for t in ctx.listing(raw.get("tags"), f"agent {agent_id} tags")],
            }
        )

    agent_ids = {a["agent_id"] for a in agents}
    group_shared: set[str] = set()
    groups = ctx.listing(doc.get("groups"), "top-level groups")
    for i, group in enumerate(groups):
        if not isinstance(group, dict):
            ctx.add("not_an_object", f"groups[{i}] is not an object; skipped")
            continue
        gid = ctx.ident(group.get("id"), f"groups[{i}]", f"groups[{i}]")
        members = ctx.refs(group.get("agent_ids"), f"group {gid} agent_ids")
        manager = ctx.mapping(group.get("manager_config"), f"group {gid} manager_config")
        if isinstance(manager.get("manager_agent_id"), str) and manager["manager_agent_id"]:
            members.append(manager["manager_agent_id"])
        for member in members:
            if member not in agent_ids:
                ctx.add(
                    "dangling_agent_id",
                    f"group {gid} names agent {member!r}, which is not in the file",
                )
        for ref in ctx.refs(group.get("shared_block_ids"), f"group {gid} shared_block_ids"):
            if ref not in block_ids:
                ctx.add(
                    "dangling_block_id",
                    f"group {gid} shares block {ref!r}, which is not in the file",
                )
                continue
            group_shared.add(ref)
            pairs.extend((ref, m) for m in members if m in agent_ids)

    _dedupe_ids(ctx, blocks, "block_id", "block")
    _dedupe_ids(ctx, tools, "tool_id", "tool")
    _dedupe_ids(ctx, agents, "agent_id", "agent")
    pairs = list(dict.fromkeys(pairs))
    n_by_block = pd.Series([b for b, _ in pairs], dtype=object).value_counts().to_dict()
    n_by_agent = pd.Series([a for _, a in pairs], dtype=object).value_counts().to_dict()
    for b in blocks:
        b["n_agents"] = n_by_block.get(b["block_id"], 0)
        b["shared"] = b["n_agents"] > 1 or b["block_id"] in group_shared
    for a in agents:
        a["n_blocks"] = n_by_agent.get(a["agent_id"], 0)
    for t in tools:
        t["n_agents"] = sum(t["tool_id"] in refs for refs in agent_tools.values())

    skills = [
        s.get("name")
        for s in ctx.listing(doc.get("skills"), "top-level skills")
        if isinstance(s, dict)
    ]
    metadata: Any = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    meta = {
        "letta_version": None,
        "revision_id": metadata.get("revision_id"),
        "created_at": doc.get("created_at"),
        "n_groups": len(groups),
        "skills": skills,
    }
    frames = _frames(
        agents, blocks, [{"block_id": b, "agent_id": a} for b, a in pairs], tools, message_rows
    )
    return frames, meta


def _read_legacy(doc: dict[str, Any], file: str, problems: Problems, unread: Unread):
    ctx = _Ctx(file, problems, unread)
    agent_id = doc["id"] if isinstance(doc.get("id"), str) and doc["id"] else "agent-0"
    # Legacy blocks carry no ids; number them the way v2 exports do so frames still join.
    blocks = [
        r
        for i, raw in enumerate(ctx.listing(doc.get("core_memory"), "core_memory"))
        if (r := _block_row(ctx, raw, f"block-{i}", legacy=True)) is not None
    ]
    tools = [
        r
        for i, raw in enumerate(ctx.listing(doc.get("tools"), "tools"))
        if (r := _tool_row(ctx, raw, f"tool-{i}", legacy=True)) is not None
    ]
    _dedupe_ids(ctx, blocks, "block_id", "block")
    for b in blocks:
        b["n_agents"], b["shared"] = 1, False
    for t in tools:
        t["n_agents"] = 1
    messages = ctx.listing(doc.get("messages"), "messages")
    llm = ctx.mapping(doc.get("llm_config"), "llm_config")
    agent = {
        "agent_id": agent_id,
        "name": ctx.text(doc.get("name"), "agent name"),
        "agent_type": ctx.text(doc.get("agent_type"), "agent_type"),
        "model": llm.get("model") if isinstance(llm.get("model"), str) else None,
        "context_window": ctx.integer(llm.get("context_window"), "llm_config.context_window"),
        "system_chars": ctx.length(doc.get("system"), "system"),
        "n_blocks": len(blocks),
        "n_tools": len(tools),
        "n_messages": len(messages),
        "n_in_context": _in_context(ctx, doc, messages, "in_context_message_indices", "agent"),
        "tags": [str(t) for t in ctx.listing(doc.get("tags"), "tags")],
    }
    version = doc.get("version") if isinstance(doc.get("version"), str) else None
    meta: dict[str, Any] = {
        "letta_version": version,
        "created_at": doc.get("created_at"),
        "n_groups": 0,
        "skills": [],
    }
    frames = _frames(
        [agent],
        blocks,
        [{"block_id": b["block_id"], "agent_id": agent_id} for b in blocks],
        tools,
        _message_counts(agent_id, messages),
    )
    return frames, meta


def _read_blocks_list(doc: list[Any], p: Path, file: str, problems: Problems, unread: Unread):
    if doc and not any(isinstance(x, dict) and ("value" in x or "label" in x) for x in doc):
        raise UnrecognizedStore(
            "is a JSON list, but none of its items is a block (an object with 'value' or 'label')",
            path=p,
        )
    ctx = _Ctx(file, problems, unread)
    blocks = [
        r
        for i, raw in enumerate(doc)
        if (r := _block_row(ctx, raw, f"[{i}]", legacy=False)) is not None
    ]
    _dedupe_ids(ctx, blocks, "block_id", "block")
    for b in blocks:
        # The blocks API does not say which agents hold a block.
        b["n_agents"], b["shared"] = None, None
    return _frames([], blocks, [], [], []), {"letta_version": None}


# --- tools, messages, frames ----------------------------------------------------------------


def _tool_row(ctx: _Ctx, raw: Any, fallback_id: str, *, legacy: bool = False):
    if not isinstance(raw, dict):
        ctx.add("not_an_object", f"{fallback_id} is a {type(raw).__name__}, not a tool; skipped")
        return None
    tool_id = (
        fallback_id
        if legacy and not raw.get("id")
        else ctx.ident(raw.get("id"), fallback_id, fallback_id)
    )
    source_chars = ctx.length(raw.get("source_code"), f"tool {tool_id} source_code")
    return {
        "tool_id": tool_id,
        "name": ctx.text(raw.get("name"), f"tool {tool_id} name"),
        "tool_type": ctx.text(raw.get("tool_type"), f"tool {tool_id} tool_type"),
        "source_type": ctx.text(raw.get("source_type"), f"tool {tool_id} source_type"),
        "source_chars": source_chars,
    }


def _in_context(ctx: _Ctx, owner: dict[str, Any], messages: list[Any], key: str, where: str) -> int:
    """Messages in the agent's context window, from whichever form the file uses.

    Current files list ``in_context_message_ids``, legacy 0.7-0.10 files
    ``in_context_message_indices``; letta 0.6.x files instead mark each message with
    ``"in_context": true`` (and carry no list, or an empty one). A non-empty list wins; with
    none, the per-message flags are counted.
    """
    listed = ctx.listing(owner.get(key), f"{where} {key}")
    if listed:
        return len(listed)
    flags = [m.get("in_context") for m in messages if isinstance(m, dict) and "in_context" in m]
    if flags:
        bad = [f for f in flags if not isinstance(f, bool)]
        if bad:
            ctx.add(
                "bad_value",
                f"{where}: {len(bad)} message(s) have an in_context that is not "
                "true or false; counted as not in context",
            )
        return sum(1 for f in flags if f is True)
    return 0


def _message_counts(agent_id: str, messages: list[Any]) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    for m in messages:
        role = m.get("role") if isinstance(m, dict) else None
        role = role if isinstance(role, str) and role else "unknown"
        counts[role] = counts.get(role, 0) + 1
    return [{"agent_id": agent_id, "role": r, "n": n} for r, n in sorted(counts.items())]


def _typed(rows: list[dict[str, Any]], dtypes: dict[str, str]) -> pd.DataFrame:
    if not rows:
        return empty_frame(dtypes)
    df = pd.DataFrame(rows, columns=list(dtypes))
    for col, dtype in dtypes.items():
        if dtype == "object":
            continue
        if dtype == "category":
            df[col] = categories(df[col])
        else:
            df[col] = df[col].astype(dtype)
    return df


def _frames(agents, blocks, block_agents, tools, messages) -> dict[str, pd.DataFrame]:
    rows = {
        "agents": agents,
        "blocks": blocks,
        "block_agents": block_agents,
        "tools": tools,
        "messages": messages,
    }
    return {name: _typed(rows[name], dtypes) for name, dtypes in FRAME_DTYPES.items()}
