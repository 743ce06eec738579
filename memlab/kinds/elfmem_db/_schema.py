"""What memlab knows of elfmem's schemas 1 to 9, for :mod:`memlab.kinds.elfmem_db._load`.

The column kinds and their dtypes, which table and columns each frame reads
(:data:`FRAME_TABLES`), the categories and ``system_config`` keys elfmem writes, and how a
database's schema version is told: the recorded ``schema_version``, the newest version its
columns show, and the elfmem releases that write it. ``q`` quotes a table or column name
for SQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab._escape import quote
from memlab.errors import UnsupportedSchema

if TYPE_CHECKING:
    from memlab.kinds.elfmem_db._load import Reader

__all__ = [
    "SUPPORTED_SCHEMA_VERSIONS",
    "STR",
    "CAT",
    "UTC",
    "FLOAT",
    "INT",
    "BOOL",
    "BLOB",
    "DTYPES",
    "FRAME_TABLES",
    "KNOWN_CATEGORIES",
    "CONFIG_TYPED",
    "TOKEN_KEYS",
    "release_guess",
    "q",
    "read_schema_version",
    "columns_version",
]

SUPPORTED_SCHEMA_VERSIONS = range(1, 10)

# Column kinds: how a stored value becomes a typed pandas value.
STR, CAT, UTC, FLOAT, INT, BOOL, BLOB = "str", "cat", "utc", "float", "int", "bool", "blob"

DTYPES = {
    STR: "string",
    CAT: "category",
    UTC: "datetime64[ns, UTC]",
    FLOAT: "float64",
    INT: "Int64",
    BOOL: "boolean",
    BLOB: "object",
}

#: frame name -> (SQLite table, [(column, kind), ...]) in the order of docs/DESIGN.md.
FRAME_TABLES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "blocks": (
        "blocks",
        [
            ("id", STR),
            ("content", STR),
            ("category", CAT),
            ("source", CAT),
            ("created_at", UTC),
            ("status", CAT),
            ("archive_reason", CAT),
            ("pinned", BOOL),
            ("superseded_by", STR),
            ("confidence", FLOAT),
            ("reinforcement_count", INT),
            ("decay_lambda", FLOAT),
            ("last_reinforced_at", FLOAT),
            ("self_alignment", FLOAT),
            ("embedding_model", STR),
            ("token_count", INT),
            ("summary", STR),
            ("last_session_id", STR),
            ("outcome_evidence", FLOAT),
            ("success_count", FLOAT),
            ("failure_count", FLOAT),
            ("source_peer", STR),
            ("share", CAT),
            ("envelope_json", STR),
            ("last_scored_at", UTC),
            ("cue", STR),
            ("volatility_class", CAT),
        ],
    ),
    "tags": ("block_tags", [("block_id", STR), ("tag", STR)]),
    "edges": (
        "edges",
        [
            ("from_id", STR),
            ("to_id", STR),
            ("weight", FLOAT),
            ("reinforcement_count", INT),
            ("created_at", UTC),
            ("relation_type", CAT),
            ("origin", CAT),
            ("last_active_hours", FLOAT),
            ("note", STR),
            ("declared_by", STR),
        ],
    ),
    "contradictions": (
        "contradictions",
        [
            ("block_a_id", STR),
            ("block_b_id", STR),
            ("score", FLOAT),
            ("resolved", BOOL),
            ("created_at", UTC),
            ("kind", CAT),
            ("cue_similarity", FLOAT),
        ],
    ),
    "outcomes": (
        "block_outcomes",
        [
            ("id", STR),
            ("block_id", STR),
            ("signal", FLOAT),
            ("weight", FLOAT),
            ("source", STR),
            ("confidence_before", FLOAT),
            ("confidence_after", FLOAT),
            ("created_at", UTC),
        ],
    ),
    "amendments": (
        "block_amendments",
        [
            ("id", INT),
            ("block_id", STR),
            ("timestamp", UTC),
            ("pre_content", STR),
            ("post_content", STR),
            ("pre_summary", STR),
            ("post_summary", STR),
            ("drift_score", FLOAT),
            ("rationale", STR),
            ("acceptor", CAT),
            ("reverted_at", UTC),
        ],
    ),
    "sessions": (
        "sessions",
        [
            ("id", STR),
            ("task_type", STR),
            ("started_at", UTC),
            ("ended_at", UTC),
            ("start_active_hours", FLOAT),
        ],
    ),
    "config_raw": ("system_config", [("key", STR), ("value", STR)]),
    "frames": (
        "frames",
        [
            ("name", STR),
            ("weights_json", STR),
            ("filters_json", STR),
            ("guarantees_json", STR),
            ("template", STR),
            ("token_budget", INT),
            ("cache_json", STR),
            ("source", STR),
            ("created_at", UTC),
        ],
    ),
    "peers": (
        "peer_roster",
        [
            ("did", STR),
            ("name", STR),
            ("public_key", STR),
            ("trust", FLOAT),
            ("is_self", BOOL),
            ("first_contact", UTC),
            ("last_active", UTC),
            ("blocks_imported", INT),
            ("blocks_exported", INT),
            ("messages_in", INT),
            ("messages_out", INT),
            ("notes", STR),
            ("delivery_path", STR),
        ],
    ),
    "co_retrieval": ("co_retrieval_staging", [("from_id", STR), ("to_id", STR), ("count", INT)]),
}

# Known values first, so the category order is the same in every store; values elfmem never
# wrote are kept (appended), never turned into NA.
KNOWN_CATEGORIES = {
    ("blocks", "status"): ["inbox", "active", "archived"],
    ("blocks", "archive_reason"): ["superseded", "decayed", "forgotten"],
    ("blocks", "share"): ["private", "public", "peer"],
    ("contradictions", "kind"): ["contradiction", "near_duplicate"],
    ("amendments", "acceptor"): ["agent", "user", "system"],
}

# system_config keys with a type of their own; every other key is a string column.
CONFIG_TYPED = [
    ("schema_version", INT),
    ("total_active_hours", FLOAT),
    ("last_curate_at", FLOAT),
    ("last_consolidated_at", UTC),
    ("prune_threshold", FLOAT),
    ("top_k", INT),
]
TOKEN_KEYS = [
    "llm_calls",
    "llm_input_tokens",
    "llm_output_tokens",
    "embedding_calls",
    "embedding_tokens",
]

# Schema version -> the elfmem releases that write it (PyPI wheels read; see tests/elfmem_schemas).
_RELEASES = {
    1: "0.4.0-0.8.0",
    2: "0.9.1-0.13.2",
    3: "0.13.3-0.15.3",
    4: "0.17.0",
    5: "0.18.0-0.19.2",
    6: "unreleased 0.20.0 development build",
    7: "unreleased 0.20.0 development build",
    8: "unreleased 0.20.0 development build",
    9: ">=0.20.0",
}


def release_guess(schema_version: int, columns: dict[str, list[str]]) -> str:
    """Best guess of the elfmem release range that wrote a database with this schema."""
    if schema_version == 1 and (
        "summary" not in columns.get("blocks", [])
        or "relation_type" not in columns.get("edges", [])
    ):
        return "<0.4.0 (0.1.0 shape)"
    return _RELEASES.get(schema_version, "unknown")


q = quote  # the SQL identifier quoting of memlab._escape, by its short local name


def read_schema_version(raw: list[tuple[Any, Any]], reader: Reader, path: Path) -> tuple[int, bool]:
    recorded = [v for k, v in raw if k == "schema_version"]
    if not recorded:
        return 1, False
    value = recorded[0]
    try:
        version = int(str(value).strip())
    except ValueError:
        # elfmem's _get_version reads an unparseable value as 1, and would migrate from there.
        reader.problem(
            "schema_version",
            f"system_config.schema_version is {value!r}, not an integer; read as 1, as elfmem does",
        )
        return 1, True
    if version > max(SUPPORTED_SCHEMA_VERSIONS):
        raise UnsupportedSchema(
            f"elfmem schema version {version} is newer than memlab knows "
            f"({SUPPORTED_SCHEMA_VERSIONS[0]}-{SUPPORTED_SCHEMA_VERSIONS[-1]})",
            path=path,
            hint="upgrade memlab; its columns may mean things this version cannot know",
        )
    if version < 1:
        reader.problem(
            "schema_version",
            f"system_config.schema_version is {version}; elfmem versions start at 1",
        )
    return version, True


def columns_version(schema: dict[str, list[str]]) -> int:
    """The newest schema version whose additions are all present (drift check)."""
    marks = [
        (2, "blocks", "source_peer"),
        (3, "blocks", "last_scored_at"),
        (4, "blocks", "success_count"),
        (5, "block_amendments", None),
        (6, "blocks", "superseded_by"),
        (7, "blocks", "pinned"),
        (8, "blocks", "cue"),
        (9, "contradictions", "kind"),
    ]
    version = 1
    for v, table, col in marks:
        if table not in schema or (col is not None and col not in schema[table]):
            break
        version = v
    return version
