"""The frames of a ``letta_server`` store from one :class:`~memlab.kinds.letta_server._db.Source`
read: each table's columns by name (a column or table an older release lacks is NA / empty and
listed as absent), typed (``_values``), with the derived columns (model, sizes, sharing, tags,
history positions, actor kinds), the consistency problems (``history_gap``,
``dangling_history_pointer``, ``unknown_actor``, ``dangling_link``) and the values past the cap
(``oversized``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from memlab._numbers import missing_numbers
from memlab.constants import MAX_VALUE_BYTES
from memlab.errors import UnrecognizedStore, UnsupportedSchema
from memlab.kinds.letta_server._db import Source
from memlab.kinds.letta_server._schema import REQUIRED_BLOCK_COLUMNS, REQUIRED_TABLES
from memlab.kinds.letta_server._values import as_text, typed, whole_numbers
from memlab.store import Problems

__all__ = ["ACTOR_KINDS", "build_frames", "report_oversized"]

ACTOR_KINDS = ("agent", "server_user", "unknown")
_ACTOR_OF_TYPE = {"letta_agent": "agent", "letta_user": "server_user"}

# (db column, frame column, dtype); dtype is one of str/int/bool/time/json/cat, or value: text
# read only up to MAX_VALUE_BYTES (a longer one is null, its size reported; Source.select).
_ORGS = [
    ("id", "organization_id", "str"),
    ("name", "name", "str"),
    ("created_at", "created_at", "time"),
    ("updated_at", "updated_at", "time"),
    ("is_deleted", "is_deleted", "bool"),
]
_USERS = [
    ("id", "user_id", "str"),
    ("name", "name", "str"),
    ("organization_id", "organization_id", "str"),
    ("created_at", "created_at", "time"),
    ("is_deleted", "is_deleted", "bool"),
]
_AUDIT_COLS = [
    ("organization_id", "organization_id", "str"),
    ("created_at", "created_at", "time"),
    ("updated_at", "updated_at", "time"),
    ("is_deleted", "is_deleted", "bool"),
    ("_created_by_id", "_created_by_id", "str"),
    ("_last_updated_by_id", "_last_updated_by_id", "str"),
]
_AGENTS = [
    ("id", "agent_id", "str"),
    ("name", "name", "str"),
    ("description", "description", "str"),
    ("agent_type", "agent_type", "cat"),
    ("llm_config", "llm_config", "json"),
    ("system", "system", "str"),
    ("project_id", "project_id", "str"),
    ("template_id", "template_id", "str"),
    ("base_template_id", "base_template_id", "str"),
    ("hidden", "hidden", "bool"),
    *_AUDIT_COLS,
]
_BLOCKS = [
    ("id", "block_id", "str"),
    ("label", "label", "str"),
    ("value", "value", "value"),
    ("limit", "limit", "int"),
    ("description", "description", "str"),
    ("read_only", "read_only", "bool"),
    ("metadata_", "metadata", "json"),
    ("is_template", "is_template", "bool"),
    ("template_name", "template_name", "str"),
    ("hidden", "hidden", "bool"),
    ("version", "version", "int"),
    ("current_history_entry_id", "current_history_entry_id", "str"),
    ("project_id", "project_id", "str"),
    ("entity_id", "entity_id", "str"),
    ("base_template_id", "base_template_id", "str"),
    ("template_id", "template_id", "str"),
    ("deployment_id", "deployment_id", "str"),
    ("preserve_on_migration", "preserve_on_migration", "bool"),
    *_AUDIT_COLS,
]
_LINKS = [
    ("block_id", "block_id", "str"),
    ("agent_id", "agent_id", "str"),
    ("block_label", "block_label", "str"),
]
_HISTORY = [
    ("id", "history_id", "str"),
    ("block_id", "block_id", "str"),
    ("sequence_number", "sequence_number", "int"),
    ("label", "label", "str"),
    ("value", "value", "value"),
    ("limit", "limit", "int"),
    ("description", "description", "str"),
    ("metadata_", "metadata", "json"),
    ("actor_type", "actor_type", "cat"),
    ("actor_id", "actor_id", "str"),
    *_AUDIT_COLS,
]
_TAGS = [("block_id", "block_id", "str"), ("tag", "tag", "str")]
_AGENT_TAGS = [("agent_id", "agent_id", "str"), ("tag", "tag", "str")]


def build_frames(
    src: Source, where: str, problems: Problems
) -> tuple[dict[str, pd.DataFrame], dict]:
    tables = set(src.columns)
    missing_tables = [t for t in REQUIRED_TABLES if t not in tables]
    if missing_tables:
        raise UnrecognizedStore(
            f"not a Letta server database: no {', '.join(missing_tables)} table(s)",
            path=None if src.flavour == "postgres" else where,
            hint="memlab reads a Letta server's PostgreSQL database or its ~/.letta/sqlite.db",
        )
    lacking = [c for c in REQUIRED_BLOCK_COLUMNS if c not in src.columns["block"]]
    if lacking:
        raise UnsupportedSchema(
            f"this Letta database's block table has no {', '.join(lacking)} "
            "column(s); memlab does not know this schema",
            path=None if src.flavour == "postgres" else where,
        )
    absent: dict[str, list[str]] = {}

    def read(table: str, spec) -> pd.DataFrame:
        df, missing = src.select(table, spec)
        if table not in tables:
            absent[table] = ["(table)"]
        elif missing:
            absent[table] = missing
        return typed(df, spec, problems, where, table)

    orgs = read("organizations", _ORGS)
    users = read("users", _USERS)
    agents = read("agents", _AGENTS)
    blocks = read("block", _BLOCKS)
    links = read("blocks_agents", _LINKS)
    history = read("block_history", _HISTORY)
    tags = read("blocks_tags", _TAGS)
    agent_tags = read("agents_tags", _AGENT_TAGS)

    # agents: what the config says, never the whole prompt.
    llm = agents.pop("llm_config")
    config = [c if isinstance(c, dict) else {} for c in llm]
    ids = agents["agent_id"].tolist()
    agents.insert(
        4,
        "model",
        as_text(
            pd.Series([c.get("model") for c in config], dtype="object"),
            problems,
            where,
            "agents.llm_config.model",
            "id",
            ids,
        )
        .astype("string")
        .array,
    )
    agents.insert(
        5,
        "context_window",
        whole_numbers(
            pd.Series([c.get("context_window") for c in config], dtype="object"),
            problems,
            where,
            "agents.llm_config.context_window",
            "id",
            ids,
        ).array,
    )
    system = agents.pop("system")
    agents.insert(6, "system_chars", system.str.len().astype("Int64"))
    agents["n_blocks"] = (
        agents["agent_id"].map(links.groupby("agent_id").size()).fillna(0).astype("Int64")
    )
    agent_tag_lists = agent_tags.groupby("agent_id")["tag"].agg(lambda t: sorted(map(str, t)))
    agents["tags"] = [agent_tag_lists.get(a, []) for a in agents["agent_id"]]

    # history: actor kind, which entry is current.
    actor = history["actor_type"].astype("object")
    history.insert(
        history.columns.get_loc("actor_id"),
        "actor_kind",
        pd.Categorical(
            [_ACTOR_OF_TYPE.get(a, "unknown") if isinstance(a, str) else "unknown" for a in actor],
            categories=ACTOR_KINDS,
        ),
    )
    current_ids = set(blocks["current_history_entry_id"].dropna().astype(str))
    history.insert(
        history.columns.get_loc("actor_id") + 1,
        "is_current",
        history["history_id"].astype("object").isin(current_ids).astype("boolean"),
    )
    history.insert(
        history.columns.get_loc("value") + 1,
        "chars",
        _chars(history, "history_id", src.oversized.get("block_history", {})),
    )
    history = history.sort_values(["block_id", "sequence_number"], kind="stable", ignore_index=True)

    # blocks: size, sharing, tags, history.
    blocks.insert(
        blocks.columns.get_loc("value") + 1,
        "chars",
        _chars(blocks, "block_id", src.oversized.get("block", {})),
    )
    # Letta's own rule, as the Agent File loader applies it: a value longer than its limit is
    # over it, whatever the limit (one of 0 or below: nothing fits it; the limit ratio leaves
    # it out, memlab._metrics.max_limit_ratio)
    over = (blocks["limit"].notna() & (blocks["chars"] > blocks["limit"])).astype("boolean")
    blocks.insert(blocks.columns.get_loc("limit") + 1, "over_limit", over)
    tag_lists = tags.groupby("block_id")["tag"].agg(lambda t: sorted(map(str, t)))
    blocks["tags"] = [tag_lists.get(b, []) for b in blocks["block_id"]]
    fan = links.groupby("block_id")["agent_id"].nunique()
    blocks["n_agents"] = blocks["block_id"].map(fan).fillna(0).astype("Int64")
    blocks["shared"] = (blocks["n_agents"] > 1).astype("boolean")
    blocks["history_len"] = (
        blocks["block_id"].map(history.groupby("block_id").size()).fillna(0).astype("Int64")
    )
    seq_of = dict(zip(history["history_id"].astype(str), history["sequence_number"]))
    blocks["current_sequence"] = pd.array(
        [
            seq_of.get(h) if isinstance(h, str) else None
            for h in blocks["current_history_entry_id"].astype("object")
        ],
        dtype="Int64",
    )

    _check(blocks, agents, links, history, problems, where)
    frames = {
        "organizations": orgs,
        "users": users,
        "agents": agents,
        "blocks": blocks,
        "block_agents": links,
        "block_history": history,
        "block_tags": tags,
    }
    return frames, absent


def _chars(
    frame: pd.DataFrame, key: str, oversized: dict[str, tuple[int, int | None]]
) -> pd.Series:
    """Each value's length; for a value past the cap (not read), the database's own count."""
    chars = frame["value"].str.len().astype("Int64")
    if oversized:
        ids = frame[key].astype("object").map(str)
        known = ids.map(lambda k: oversized[k][1] if k in oversized else None)
        chars = chars.mask(ids.isin(list(oversized)), pd.array(known, dtype="Int64"))
    return chars


def report_oversized(src: Source, problems: Problems, where: str) -> list[dict[str, Any]]:
    """An ``oversized`` problem row per value past the cap, and the list for ``meta``."""
    out = []
    for table, found in sorted(src.oversized.items()):
        for key, (size, chars) in sorted(found.items()):
            problems.add(
                where,
                "oversized",
                f"{table}.value of id {key!r}: {size:,} bytes"
                + (f" ({chars:,} characters)" if chars is not None else "")
                + f", over memlab's {MAX_VALUE_BYTES:,}-byte cap for one value; its "
                "text is not read (value is null; chars is the database's own count)",
            )
            out.append({"table": table, "id": key, "bytes": size, "chars": chars})
    return out


def _check(blocks, agents, links, history, problems: Problems, where: str) -> None:
    label = dict(zip(blocks["block_id"].astype(str), blocks["label"].astype("object")))
    for block_id, group in history.groupby("block_id", sort=True):
        seqs = [int(s) for s in group["sequence_number"].dropna()]
        expected = list(range(1, len(seqs) + 1))
        if seqs != expected:
            # arithmetic, never a set of 1..max: one number of 9e18 is one row, not 9e18 ints
            missing, count = missing_numbers(seqs, show=12)
            problems.add(
                where,
                "history_gap",
                f"block {block_id} ({label.get(block_id)!r}): history sequence numbers "
                f"{seqs[:12]} are not 1..{len(seqs)}"
                + (
                    f"; missing {missing}"
                    + (f" ({count:,} in all)" if count > len(missing) else "")
                    if count
                    else ""
                )
                + "; replayed in sequence order",
            )
    known = set(history["history_id"].astype(str))
    for row in blocks[blocks["current_history_entry_id"].notna()].itertuples(index=False):
        if str(row.current_history_entry_id) not in known:
            problems.add(
                where,
                "dangling_history_pointer",
                f"block {row.block_id} ({row.label!r}) points at history entry "
                f"{row.current_history_entry_id}, which is not in block_history",
            )
    bad = history[history["actor_kind"].astype(str) == "unknown"]
    for row in bad.itertuples(index=False):
        problems.add(
            where,
            "unknown_actor",
            f"history {row.history_id} of block {row.block_id}: actor_type "
            f"{None if pd.isna(row.actor_type) else str(row.actor_type)!r} is neither "
            "letta_agent nor letta_user",
        )
    block_ids, agent_ids = set(label), set(agents["agent_id"].astype(str))
    for row in links.itertuples(index=False):
        if str(row.block_id) not in block_ids or str(row.agent_id) not in agent_ids:
            problems.add(
                where,
                "dangling_link",
                f"blocks_agents links block {row.block_id} and agent {row.agent_id}, "
                "one of which is not in the database",
            )
