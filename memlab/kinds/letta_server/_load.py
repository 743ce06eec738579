"""A Letta server's own database, read-only: every agent's blocks, their sharing and history.

``load_letta_server(dsn_or_path)`` reads

* a PostgreSQL database (``postgresql://user@host:port/db``; Letta 0.12-0.16.8, schema from
  Letta's alembic migrations, tables in schema ``public``) inside one ``READ ONLY``
  ``REPEATABLE READ`` transaction, so every frame comes from the same instant of a live server
  and nothing can be written. The database is untrusted (:mod:`memlab.kinds.letta_server._pg`):
  the session's ``search_path``, ``statement_timeout`` and ``lock_timeout`` are pinned at
  connection (``MEMLAB_PG_STATEMENT_TIMEOUT`` / ``MEMLAB_PG_LOCK_TIMEOUT``, milliseconds), a
  superuser or server-program role is refused, and so is a view, foreign table, rule, row
  policy or owner-defined type where Letta has a plain table
  (:class:`~memlab.errors.UnsafeDatabase`);
* an SQLite file (``~/.letta/sqlite.db``; Letta ≤ 0.11.7, schema from ``create_all``) through
  :mod:`memlab.sources._sqlite_snapshot`, the discipline elfmem databases are read with:
  nothing in its folder is created or changed, even for a live server.

Tables and columns are probed by name, so an older release that lacks a column (``hidden``
before 0.12) or a table (``blocks_tags``) loads with that column all NA / that frame empty, and
``meta["absent"]`` says which. A PostgreSQL database whose ``alembic_version`` is not one of
the 0.16.8 release's 166 revisions gets an ``unknown_schema`` problem row and is still read by
column name.

Frames (``kind="letta_server"``):

| frame | columns |
|---|---|
| organizations | organization_id, name, created_at, updated_at, is_deleted |
| users | user_id, name, organization_id, created_at, is_deleted |
| agents | agent_id, name, description, agent_type, model, context_window, system_chars, organization_id, project_id, template_id, base_template_id, hidden, is_deleted, created_at, updated_at, _created_by_id, _last_updated_by_id, n_blocks, tags |
| blocks | block_id, label, value, chars, limit, over_limit, description, read_only, metadata, is_template, template_name, hidden, is_deleted, tags, n_agents, shared, history_len, current_sequence, version, current_history_entry_id, organization_id, project_id, entity_id, base_template_id, template_id, deployment_id, preserve_on_migration, created_at, updated_at, _created_by_id, _last_updated_by_id |
| block_agents | block_id, agent_id, block_label |
| block_history | history_id, block_id, sequence_number, label, value, chars, limit, description, metadata, actor_type, actor_kind (agent / server_user / unknown), actor_id, is_current, organization_id, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id |
| block_tags | block_id, tag |

``actor_kind`` uses memfs's author kinds: ``letta_agent`` → ``agent``, ``letta_user`` →
``server_user``. Problems: ``history_gap`` (a block's sequence numbers are not 1..N),
``dangling_history_pointer``, ``unknown_actor``, ``dangling_link``, ``bad_json``,
``duplicate_key`` (a JSON column repeating a key: the last value is read, as Python reads it),
``unknown_schema``, and, for values a server cannot have written (SQLite keeps whatever it is
given): ``bad_text`` (text that is not UTF-8, read with U+FFFD for the bad bytes, or a BLOB where
text belongs, read as its UTF-8 text) and ``bad_value`` (a whole number that is not one:
``limit`` 2.5, ``version`` 1e300, text; read as NA). Each names the table, the column and the
row's id. A ``block`` or ``block_history`` value past
:data:`~memlab.constants.MAX_VALUE_BYTES` is measured by the database and not read: its
``value`` is null, its ``chars`` the database's own count (``length``; for an SQLite BLOB, its
bytes), an ``oversized`` problem row names it with its size, and ``meta["oversized_values"]``
lists them (``table``, ``id``, ``bytes``, ``chars``); a migration refuses such a store.

Example::

    store = memlab.load("postgresql://memlab_ro@db.internal:5432/letta")
    store.blocks.groupby("shared").chars.sum()
"""  # noqa: E501 (the frames table above is Markdown: one row a line)

from __future__ import annotations

import math
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pandas as pd

from memlab._files import sqlite_uri
from memlab._numbers import missing_numbers
from memlab.constants import INT64_MAX, MAX_VALUE_BYTES
from memlab.errors import UnrecognizedStore, UnsupportedSchema
from memlab.formats import _json
from memlab.kinds.letta_server._db import PostgresSource, Source, SQLiteSource, quote
from memlab.kinds.letta_server._pg import connect, redact_dsn, refusal, timeouts
from memlab.sources._sqlite_snapshot import BadText, decode_text
from memlab.store import Problems, Store, categories, utc_datetimes

__all__ = [
    "load_letta_server",
    "is_dsn",
    "redact_dsn",
    "is_letta_sqlite",
    "find_letta_server",
    "ACTOR_KINDS",
]

KIND = "letta_server"
ACTOR_KINDS = ("agent", "server_user", "unknown")
_ACTOR_OF_TYPE = {"letta_agent": "agent", "letta_user": "server_user"}
_DSN_RE = re.compile(r"^postgres(ql)?(\+\w+)?://", re.I)
#: The tables that make a database a Letta server's; without them it is something else.
REQUIRED_TABLES = ("block", "agents")
#: Every table memlab reads from a Letta server database.
LETTA_TABLES = (
    "organizations",
    "users",
    "agents",
    "block",
    "blocks_agents",
    "block_history",
    "blocks_tags",
    "agents_tags",
    "alembic_version",
)
_REQUIRED_BLOCK_COLUMNS = ("id", "label", "value")

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


def is_dsn(source: Any) -> bool:
    """True for a PostgreSQL connection URI (``postgresql://`` or ``postgres://``)."""
    return isinstance(source, str) and bool(_DSN_RE.match(source.strip()))


def is_letta_sqlite(path: str | Path) -> bool:
    """True when the SQLite file at ``path`` has a Letta server's tables (read-only peek)."""
    import sqlite3

    from memlab.sources._sqlite_snapshot import read_snapshot

    sql = "SELECT name FROM sqlite_master WHERE type='table'"
    p = Path(path).expanduser().resolve()
    try:  # the cheap look: immutable=1 takes no lock and creates no side file
        uri = sqlite_uri(p, mode="ro", immutable="1")
        conn = sqlite3.connect(uri, uri=True)
        try:
            names = {r[0] for r in conn.execute(sql)}
        finally:
            conn.close()
    except sqlite3.Error:  # mid-write or damaged: the snapshot route says which

        def tables(snap) -> set[str]:
            conn = snap.connect()
            try:
                return {r[0] for r in conn.execute(sql)}
            finally:
                conn.close()

        names = read_snapshot(p, tables)
    return set(REQUIRED_TABLES) <= names


# --------------------------------------------------------------------------- typing


def _typed(
    df: pd.DataFrame, spec: list[tuple[str, str, str]], problems: Problems, where: str, table: str
) -> pd.DataFrame:
    out = df.copy()
    key_db, key_col, _ = spec[0]
    keys = out[key_col].tolist()
    for db, col, kind in spec:
        s = out[col]
        what = f"{table}.{db}"
        if kind in ("str", "value", "time", "cat", "json"):
            s = _text(s, problems, where, what, key_db, keys)
        if kind in ("str", "value"):
            out[col] = s.astype("string")
        elif kind == "int":
            out[col] = _whole_numbers(s, problems, where, what, key_db, keys)
        elif kind == "bool":
            out[col] = s.map(
                lambda v: None if v is None or (isinstance(v, float) and v != v) else bool(v)
            ).astype("boolean")
        elif kind == "time":
            if len(s) and any(isinstance(v, str) for v in s.dropna()):
                out[col] = utc_datetimes(s.astype("string"))
            else:
                out[col] = pd.to_datetime(s, utc=True, errors="coerce").astype(
                    "datetime64[ns, UTC]"
                )
        elif kind == "cat":
            out[col] = categories(s)
        elif kind == "json":
            out[col] = [
                _json_value(v, problems, where, what, f"{key_db} {k!r}") for v, k in zip(s, keys)
            ]
    return out


def _rows(key: str, keys: list) -> str:
    shown = ", ".join(repr(str(k)) if k is not None else "NULL" for k in keys[:5])
    return f"rows with {key} {shown}" + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")


def _text(
    s: pd.Series, problems: Problems, where: str, what: str, key: str, keys: list
) -> pd.Series:
    """A text column's values as ``str`` (or None), whatever SQLite handed back: text that is
    not UTF-8 (a :class:`BadText`) and BLOBs are read as UTF-8 with U+FFFD for the bad bytes
    and reported by row; numbers (SQLite keeps 5 in a JSON column as a number) become text."""
    out: list[Any] = []
    bad: list[Any] = []
    blobs: list[Any] = []
    for i, v in enumerate(s.tolist()):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(None)
            continue
        if isinstance(v, (bytes, bytearray, memoryview)):
            blobs.append(keys[i])
            v = bytes(v).decode("utf-8", "replace")
        elif type(v) is BadText:
            bad.append(keys[i])
            v = str(v)
        elif not isinstance(v, (str, dict, list)):
            v = str(v)
        out.append(v)
    if bad:
        problems.add(
            where,
            "bad_text",
            f"{what}: {len(bad)} value(s) are not valid UTF-8, read "
            f"with U+FFFD for the bad bytes ({_rows(key, bad)})",
        )
    if blobs:
        problems.add(
            where,
            "bad_text",
            f"{what}: {len(blobs)} value(s) are BLOBs, not text; "
            f"read as UTF-8 with U+FFFD for any bad bytes "
            f"({_rows(key, blobs)})",
        )
    return pd.Series(out, index=s.index, dtype="object")


_INT_TEXT = re.compile(r"\s*[-+]?[0-9]+\s*")


def _whole_numbers(
    s: pd.Series, problems: Problems, where: str, what: str, key: str, keys: list
) -> pd.Series:
    """An integer column as Int64: a whole float (2.0) or the text of an integer is that
    integer, as Letta's pydantic models read it; anything else (2.5, 1e300, inf, past
    :data:`~memlab.constants.INT64_MAX`, other text, a BLOB) is NA and reported by row."""
    out, bad, examples = [], [], []
    for i, v in enumerate(s.tolist()):
        n = None
        if v is None or (isinstance(v, float) and math.isnan(v)):
            pass
        elif isinstance(v, bool):
            n = int(v)
        elif isinstance(v, int):
            n = v
        elif isinstance(v, float) and v.is_integer():
            n = int(v)
        elif isinstance(v, str) and _INT_TEXT.fullmatch(v):
            n = int(v)
        else:
            n = False  # not a whole number
        if n is not None and (n is False or abs(n) > INT64_MAX):
            bad.append(keys[i])
            examples.append(v)
            n = None
        out.append(n)
    if bad:
        shown = ", ".join(
            repr(v if not isinstance(v, (bytes, bytearray)) else bytes(v)[:20])[:40]
            for v in examples[:3]
        )
        problems.add(
            where,
            "bad_value",
            f"{what}: {len(bad)} value(s) not a whole number "
            f"within 64 bits, read as NA (e.g. {shown}; "
            f"{_rows(key, bad)})",
        )
    return pd.Series(pd.array(out, dtype="Int64"), index=s.index)


def _json_value(value: Any, problems: Problems, where: str, what: str, row: str) -> Any:
    if value is None or isinstance(value, (dict, list)):
        return value
    try:
        text = bytes(value).decode("utf-8") if isinstance(value, (bytes, bytearray)) else value
        doc, issues = _json.loads(text, reader="the Letta server", root=f"{what} of {row}")
    except RecursionError:
        problems.add(
            where, "bad_json", f"{what} of {row}: JSON nested too deeply to read; kept as text"
        )
        return value
    except (TypeError, ValueError):
        problems.add(where, "bad_json", f"{what} of {row}: not valid JSON; kept as text")
        return value
    for kind, message in issues:  # repeated keys, lone surrogates: read, and said
        problems.add(where, kind, message)
    return doc


# --------------------------------------------------------------------------- frames


def _frames(src: Source, where: str, problems: Problems) -> tuple[dict[str, pd.DataFrame], dict]:
    tables = set(src.columns)
    missing_tables = [t for t in REQUIRED_TABLES if t not in tables]
    if missing_tables:
        raise UnrecognizedStore(
            f"not a Letta server database: no {', '.join(missing_tables)} table(s)",
            path=None if src.flavour == "postgres" else where,
            hint="memlab reads a Letta server's PostgreSQL database or its ~/.letta/sqlite.db",
        )
    lacking = [c for c in _REQUIRED_BLOCK_COLUMNS if c not in src.columns["block"]]
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
        return _typed(df, spec, problems, where, table)

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
        _text(
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
        _whole_numbers(
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


def _report_oversized(src: Source, problems: Problems, where: str) -> list[dict[str, Any]]:
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


def _release(src: Source, revision: str | None, problems: Problems, where: str) -> str:
    if src.flavour == "sqlite":
        hidden = "hidden" in src.columns.get("block", [])
        return (
            "letta <= 0.11.7 (SQLite, schema by create_all)"
            if not hidden
            else "letta (SQLite, schema by create_all, with block.hidden)"
        )
    if revision is None:
        problems.add(
            where,
            "unknown_schema",
            "no alembic_version table: not a schema Letta's migrations made; read by column name",
        )
        return "unknown (no alembic_version)"
    if revision == ALEMBIC_HEAD_0_16_8:
        return f"letta 0.16.8 (alembic head {revision})"
    if revision in ALEMBIC_REVISIONS_0_16_8:
        return f"letta <= 0.16.8 (alembic revision {revision})"
    problems.add(
        where,
        "unknown_schema",
        f"alembic revision {revision} is not one of letta 0.16.8's migrations (head "
        f"{ALEMBIC_HEAD_0_16_8}); read by column name, newer columns are ignored",
    )
    return f"unknown (alembic revision {revision})"


def _load(src: Source, path: Path, where: str, meta: dict) -> Store:
    problems = Problems()
    frames, absent = _frames(src, where, problems)
    oversized = _report_oversized(src, problems, where)
    revision = None
    if "alembic_version" in src.columns:
        got = src.rows(f"SELECT {quote('version_num')} FROM {src.table_sql('alembic_version')}")
        revision = str(got[0][0]) if got else None
    meta.update(
        {
            "flavour": src.flavour,
            "tables": sorted(src.columns),
            "absent": absent,
            "alembic_revision": revision,
            "letta_release": _release(src, revision, problems, where),
            "history_rows": int(len(frames["block_history"])),
            "history_empty": bool(frames["block_history"].empty),
            "oversized_values": oversized,
        }
    )
    return Store(kind=KIND, path=path, frames=frames, problems=problems.frame(), meta=meta)


def load_letta_server(dsn_or_path: str | Path) -> Store:
    """Load a Letta server database read-only (see the module docstring for frames and rules).

    ``dsn_or_path`` is a ``postgresql://`` URI or the path of a Letta SQLite file. Raises
    SourceError (cannot connect, a timeout, a lock), UnsafeDatabase (a role or a relation memlab
    will not read through), UnrecognizedStore (no Letta tables), UnsupportedSchema (a block
    table without id/label/value), MissingExtra (no psycopg for a DSN), InvalidArgument (a bad
    ``MEMLAB_PG_*`` timeout).

    Example::

        store = memlab.load_letta_server("postgresql://memlab_ro@localhost:5432/letta")
        store.block_history.groupby("actor_kind", observed=True).size()
    """
    if is_dsn(dsn_or_path):
        dsn = str(dsn_or_path).strip()
        shown = redact_dsn(dsn)
        conn = connect(dsn)
        try:
            import psycopg

            try:
                parts = urllib.parse.urlsplit(dsn)
                name = f"{parts.path.lstrip('/') or 'postgres'}@{parts.hostname or 'localhost'}"
                statement, lock = timeouts()
                return _load(
                    PostgresSource(conn, shown, list(LETTA_TABLES)),
                    Path(shown),
                    shown,
                    {
                        "dsn": shown,
                        "name": name,
                        "transaction": "read only, repeatable read",
                        "statement_timeout_ms": statement,
                        "lock_timeout_ms": lock,
                    },
                )
            except psycopg.Error as exc:
                raise refusal(exc, shown) from exc
        finally:
            if not conn.closed:  # closed: the client deadline ended it (nothing to roll back)
                conn.rollback()
                conn.close()
    from memlab.sources._sqlite_snapshot import read_snapshot

    p = Path(dsn_or_path).expanduser()

    def reader(snap) -> Store:
        conn = snap.connect()
        conn.text_factory = decode_text  # text that is not UTF-8: a BadText, reported by row
        try:
            return _load(
                SQLiteSource(conn),
                p,
                str(p),
                {"snapshot": snap.info(), "journal_mode": snap.journal_mode},
            )
        finally:
            conn.close()

    return read_snapshot(p, reader)


def find_letta_server(search) -> list[dict[str, Any]]:
    """Inventory rows for :func:`memlab.sources.discover.discover`: one per agent of the local
    Letta server's SQLite database (``~/.letta/sqlite.db``, letta <= 0.11.7), read-only. A
    database memlab cannot read is one row naming the problem. PostgreSQL servers are not
    discovered (they are found by their DSN, not on disk)."""
    from memlab.errors import MemlabError

    db = search.home / ".letta" / "sqlite.db"
    if not db.is_file():
        return []
    st = db.stat()
    base = {
        "kind": KIND,
        "layout": "sqlite",
        "path": str(db),
        "files": 1,
        "bytes": st.st_size,
        "last_commit": None,
        "modified": st.st_mtime,
        "problem": None,
    }
    try:
        if not is_letta_sqlite(db):
            return []
        store = load_letta_server(db)
    except MemlabError as exc:
        return [{**base, "agent_id": db.name, "name": None, "problem": str(exc)}]
    live = store.agents[~store.agents["is_deleted"].fillna(False).astype(bool)]
    return [
        {**base, "agent_id": str(a), "name": None if pd.isna(n) else str(n)}
        for a, n in zip(live["agent_id"], live["name"])
    ]


#: The revision ids of letta 0.16.8's alembic migrations (its ``alembic/versions``; the release
#: ships them outside the wheel), to tell a schema memlab knows from a newer or foreign one.
ALEMBIC_HEAD_0_16_8 = "1c28e167b74f"
ALEMBIC_REVISIONS_0_16_8 = frozenset(
    """
0335b1eb9c40 038e68cdf0df 05c3bc564286 066857381578 068588268b02 06fbbf65d4f1 08b2f8225812
0b496eae90de 0ceb975e0063 15b577c62f3f 167491cfb7a8 175dd10fb916 18e300709530 18ff61fbc034
1af251a42c06 1c28e167b74f 1c6b6a38b713 1c8880d671ee 1dc0fee72dea 1e553a664210 220856bbf43b
22a6e413d89c 25fc99e97839 27de0f58e076 28b8765bdd0a 297e8217e952 2c059cad97cc 2cceb07c2384
2dbb2cf49e07 2e5e90d3cdf8 2f4ede6ae33b 308a180244fc 341068089f14 348214cbc081 373dabcba6cf
39577145c45d 3bc3c031fbe4 3c683a662c82 3d2e9fb40a3c 3e54e2fa2f7e 400501b04bf0 416b9d2db10b
4537f0996495 45402909a46b 46699adc71a7 47d2277e530d 495f3f474131 4c6c9ef0387d 4e88e702f85e
51999513bcf1 539afa667cff 549eff097c71 54c76f7cabca 54dec07619c4 54f2311edb62 56254216524f
567e9fe06270 57bcea83af3f 5973fd8b8c60 5987401b40ae 5b804970e6a0 5d27a719b24d 5fb8bba2c373
60ed28ee7138 614c4e53b66e 61ee53ec45a5 6756d04c3ddb 6c53224a7a58 6fbe9cace832 6fe79c0525f2
74e860718e0d 74f2ede29317 750dd87faa12 7778731d15e2 77de976590ae 7980d239ea08 7b189006c97d
7f652fdd3dba 7f7933666957 8149a781ac1b 82feb220a9b8 878607e41ca4 887a4367b560 88f9432739a9
89b595051e48 89fd4648866b 8d70372ad130 90bb156e71df 90fd814d0cda 915b68780108 9275f62ad282
9556081ce65b 95badb46fdf9 9758adf8fdd3 9792f94e961d 9a505cc7eca9 9ecbdbaa409f 9fa274fb0b83
a08c972e781b a113caac453e a1b2c3d4e5f6 a1b2c3d4e5f7 a1b2c3d4e5f8 a3047a624130 a3c7d62e08ca
a66510f83fc2 a91994b9752f af842aa6f743 b183663c6769 b1c2d3e4f5a6 b2c3d4e5f6a8 b6061da886ee
b6d7ca024aa9 b888f21b151f bdddd421ec41 bff040379479 c0ef3ff26306 c3b1da3d1157 c41c87205254
c4eb5a907b38 c56081a05371 c5d964280dff c6c43222e2de c734cfc0d595 c7ac45f69849 c85a3d07c028
c96263433aef cc8dc340836d cce9a6174366 cda66b6cb0d6 cdb3db091113 cdd4a1c11aee cf3c4d025dbc
d007f4ca66bf d05669b60ebe d06594144ef3 d0880aae6cee d14ae606614c d211df879a5f d5103ee17ed5
d6632deac81d d798609d65ff dd049fbec729 ddb69be34a72 ddecfe4902bc dfafcf8210ca e1a625072dbf
e20573fe9b86 e67961ed7c32 e78b4e82db30 e991d2e3b428 ee2b43eea55e eff256d296cb f2f78d62005c
f3bf00ef6118 f55542f37641 f595e0e8013e f5d26b0526e8 f6cd5a1e519d f7507eab4bb9 f7f757414d20
f81ceea2c08d f895232c144a f922ca16e42c f9ad1c25fd2b fdcdafdb11cf ffb17eb241fc
""".split()
)
