"""elfmem's SQLite schema history: the real DDL of each release and its migrations, as data.

The one place memlab keeps these facts, so the test fixtures (``tests/elfmem_schemas.py``), the
demo generator (``scripts/make_demo.py``), the load benchmark and the simulation's SQLite writer
all create exactly what elfmem creates. memlab's loader never uses this module to *read*: it
probes tables and columns by name (``PRAGMA table_info``).

Where the DDL comes from
------------------------
Every ``CREATE TABLE`` / ``CREATE INDEX`` below is the exact text SQLAlchemy emits for
``metadata.create_all`` on SQLite from ``elfmem/db/models.py`` of the PyPI wheel named, which is
what elfmem runs when it creates a database. They were dumped with SQLAlchemy 2.1 from the
wheels (``pip download elfmem==<ver> --no-deps``) and pasted verbatim (trailing blanks included).
A constant's suffix is the oldest of the wheels read that emits that table text. Check: schema 5
and 9 built here have exactly the ``sqlite_master`` (every table and index with its SQL) of the
databases real elfmem 0.19.2 and 0.20.0 wrote (``test_builder_ddl_is_what_real_elfmem_wrote``).

==========  ================  =========================================================
schema      wheel read        notes
==========  ================  =========================================================
1 (early)   elfmem 0.1.0      no ``blocks.summary`` / ``outcome_evidence``, no
                              ``edges.relation_type`` / ``origin`` / ``last_active_hours`` /
                              ``note``, no ``block_outcomes`` / ``co_retrieval_staging``
1           elfmem 0.8.0      same DDL as 0.4.0 (checked); no ``db/migrate.py`` and no
                              ``schema_version`` key yet; no ``peer_roster``
2           elfmem 0.9.1      ``source_peer``, ``share``, ``envelope_json``; ``peer_roster``
3           elfmem 0.13.3     ``last_scored_at``
4           elfmem 0.17.0     ``success_count``, ``failure_count``
5           elfmem 0.19.2     ``block_amendments`` (0.18.0 emits the same DDL, checked)
6, 7, 8     (no release)      no wheel ever had CURRENT_SCHEMA_VERSION 6-8: 0.20.0 jumps from
                              5 to 9. These are built as a 0.19.2 (or older) database with the
                              0.20.0 migrations applied only up to that version.
9           elfmem 0.20.0     ``pinned``, ``superseded_by``, ``cue``, ``volatility_class``,
                              ``edges.declared_by``, ``contradictions.kind`` / ``cue_similarity``
==========  ================  =========================================================

The migration statements (:data:`MIGRATIONS`) are copied from ``elfmem/db/migrate.py`` of
0.20.0 (steps 2-5 read the same in 0.9.1, 0.13.3, 0.17.0 and 0.19.2). They are applied the way
``ensure_schema_current`` does: ``metadata.create_all`` of the opening release first (so a
new *table* arrives with that release's full DDL), then each ``ALTER TABLE ... ADD COLUMN``
with "duplicate column" errors ignored, each backfill ``UPDATE``, and ``schema_version`` set.
"""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = [
    "RELEASE_FOR_VERSION",
    "MIGRATING_RELEASE",
    "MIGRATIONS",
    "release_ddl",
    "columns_of",
    "table_names",
    "create_all",
    "apply_migrations",
    "create_fresh",
]

_BLOCKS_0_1_0 = """\
CREATE TABLE blocks (
	id TEXT NOT NULL, 
	content TEXT NOT NULL, 
	category TEXT NOT NULL, 
	source TEXT NOT NULL, 
	created_at TEXT NOT NULL, 
	status TEXT NOT NULL, 
	archive_reason TEXT, 
	confidence FLOAT NOT NULL, 
	reinforcement_count INTEGER NOT NULL, 
	decay_lambda FLOAT NOT NULL, 
	last_reinforced_at FLOAT NOT NULL, 
	self_alignment FLOAT, 
	embedding BLOB, 
	embedding_model TEXT, 
	token_count INTEGER, 
	last_session_id TEXT, 
	PRIMARY KEY (id)
)"""

_FRAMES_0_1_0 = """\
CREATE TABLE frames (
	name TEXT NOT NULL, 
	weights_json TEXT NOT NULL, 
	filters_json TEXT NOT NULL, 
	guarantees_json TEXT NOT NULL, 
	template TEXT NOT NULL, 
	token_budget INTEGER NOT NULL, 
	cache_json TEXT, 
	source TEXT NOT NULL, 
	created_at TEXT NOT NULL, 
	PRIMARY KEY (name)
)"""

_SESSIONS_0_1_0 = """\
CREATE TABLE sessions (
	id TEXT NOT NULL, 
	task_type TEXT NOT NULL, 
	started_at TEXT NOT NULL, 
	ended_at TEXT, 
	start_active_hours FLOAT NOT NULL, 
	PRIMARY KEY (id)
)"""

_SYSTEM_CONFIG_0_1_0 = """\
CREATE TABLE system_config (
	"key" TEXT NOT NULL, 
	value TEXT NOT NULL, 
	PRIMARY KEY ("key")
)"""

_BLOCK_TAGS_0_1_0 = """\
CREATE TABLE block_tags (
	block_id TEXT NOT NULL, 
	tag TEXT NOT NULL, 
	CONSTRAINT uq_block_tag UNIQUE (block_id, tag), 
	FOREIGN KEY(block_id) REFERENCES blocks (id) ON DELETE CASCADE
)"""

_EDGES_0_1_0 = """\
CREATE TABLE edges (
	from_id TEXT NOT NULL, 
	to_id TEXT NOT NULL, 
	weight FLOAT NOT NULL, 
	reinforcement_count INTEGER NOT NULL, 
	created_at TEXT NOT NULL, 
	CONSTRAINT uq_edge UNIQUE (from_id, to_id), 
	FOREIGN KEY(from_id) REFERENCES blocks (id) ON DELETE CASCADE, 
	FOREIGN KEY(to_id) REFERENCES blocks (id) ON DELETE CASCADE
)"""

_CONTRADICTIONS_0_1_0 = """\
CREATE TABLE contradictions (
	block_a_id TEXT NOT NULL, 
	block_b_id TEXT NOT NULL, 
	score FLOAT NOT NULL, 
	resolved INTEGER NOT NULL, 
	created_at TEXT NOT NULL, 
	CONSTRAINT uq_contradiction UNIQUE (block_a_id, block_b_id), 
	FOREIGN KEY(block_a_id) REFERENCES blocks (id) ON DELETE CASCADE, 
	FOREIGN KEY(block_b_id) REFERENCES blocks (id) ON DELETE CASCADE
)"""

_BLOCKS_0_4_0 = """\
CREATE TABLE blocks (
	id TEXT NOT NULL, 
	content TEXT NOT NULL, 
	category TEXT NOT NULL, 
	source TEXT NOT NULL, 
	created_at TEXT NOT NULL, 
	status TEXT NOT NULL, 
	archive_reason TEXT, 
	confidence FLOAT NOT NULL, 
	reinforcement_count INTEGER NOT NULL, 
	decay_lambda FLOAT NOT NULL, 
	last_reinforced_at FLOAT NOT NULL, 
	self_alignment FLOAT, 
	embedding BLOB, 
	embedding_model TEXT, 
	token_count INTEGER, 
	summary TEXT, 
	last_session_id TEXT, 
	outcome_evidence FLOAT NOT NULL, 
	PRIMARY KEY (id)
)"""

_EDGES_0_4_0 = """\
CREATE TABLE edges (
	from_id TEXT NOT NULL, 
	to_id TEXT NOT NULL, 
	weight FLOAT NOT NULL, 
	reinforcement_count INTEGER NOT NULL, 
	created_at TEXT NOT NULL, 
	relation_type TEXT DEFAULT 'similar' NOT NULL, 
	origin TEXT DEFAULT 'similarity' NOT NULL, 
	last_active_hours FLOAT, 
	note TEXT, 
	CONSTRAINT uq_edge UNIQUE (from_id, to_id), 
	FOREIGN KEY(from_id) REFERENCES blocks (id) ON DELETE CASCADE, 
	FOREIGN KEY(to_id) REFERENCES blocks (id) ON DELETE CASCADE
)"""

_BLOCK_OUTCOMES_0_4_0 = """\
CREATE TABLE block_outcomes (
	id TEXT NOT NULL, 
	block_id TEXT NOT NULL, 
	signal FLOAT NOT NULL, 
	weight FLOAT NOT NULL, 
	source TEXT NOT NULL, 
	confidence_before FLOAT NOT NULL, 
	confidence_after FLOAT NOT NULL, 
	created_at TEXT NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(block_id) REFERENCES blocks (id) ON DELETE CASCADE
)"""

_CO_RETRIEVAL_STAGING_0_4_0 = """\
CREATE TABLE co_retrieval_staging (
	from_id TEXT NOT NULL, 
	to_id TEXT NOT NULL, 
	count INTEGER NOT NULL, 
	CONSTRAINT uq_co_retrieval_staging UNIQUE (from_id, to_id), 
	FOREIGN KEY(from_id) REFERENCES blocks (id) ON DELETE CASCADE, 
	FOREIGN KEY(to_id) REFERENCES blocks (id) ON DELETE CASCADE
)"""

_BLOCKS_0_9_1 = """\
CREATE TABLE blocks (
	id TEXT NOT NULL, 
	content TEXT NOT NULL, 
	category TEXT NOT NULL, 
	source TEXT NOT NULL, 
	created_at TEXT NOT NULL, 
	status TEXT NOT NULL, 
	archive_reason TEXT, 
	confidence FLOAT NOT NULL, 
	reinforcement_count INTEGER NOT NULL, 
	decay_lambda FLOAT NOT NULL, 
	last_reinforced_at FLOAT NOT NULL, 
	self_alignment FLOAT, 
	embedding BLOB, 
	embedding_model TEXT, 
	token_count INTEGER, 
	summary TEXT, 
	last_session_id TEXT, 
	outcome_evidence FLOAT NOT NULL, 
	source_peer TEXT, 
	share TEXT, 
	envelope_json TEXT, 
	PRIMARY KEY (id)
)"""

_PEER_ROSTER_0_9_1 = """\
CREATE TABLE peer_roster (
	did TEXT NOT NULL, 
	name TEXT NOT NULL, 
	public_key TEXT, 
	trust FLOAT NOT NULL, 
	is_self INTEGER NOT NULL, 
	first_contact TEXT NOT NULL, 
	last_active TEXT NOT NULL, 
	blocks_imported INTEGER NOT NULL, 
	blocks_exported INTEGER NOT NULL, 
	messages_in INTEGER NOT NULL, 
	messages_out INTEGER NOT NULL, 
	notes TEXT, 
	delivery_path TEXT, 
	PRIMARY KEY (did)
)"""

_BLOCKS_0_13_3 = """\
CREATE TABLE blocks (
	id TEXT NOT NULL, 
	content TEXT NOT NULL, 
	category TEXT NOT NULL, 
	source TEXT NOT NULL, 
	created_at TEXT NOT NULL, 
	status TEXT NOT NULL, 
	archive_reason TEXT, 
	confidence FLOAT NOT NULL, 
	reinforcement_count INTEGER NOT NULL, 
	decay_lambda FLOAT NOT NULL, 
	last_reinforced_at FLOAT NOT NULL, 
	self_alignment FLOAT, 
	embedding BLOB, 
	embedding_model TEXT, 
	token_count INTEGER, 
	summary TEXT, 
	last_session_id TEXT, 
	outcome_evidence FLOAT NOT NULL, 
	source_peer TEXT, 
	share TEXT, 
	envelope_json TEXT, 
	last_scored_at TEXT, 
	PRIMARY KEY (id)
)"""

_BLOCKS_0_17_0 = """\
CREATE TABLE blocks (
	id TEXT NOT NULL, 
	content TEXT NOT NULL, 
	category TEXT NOT NULL, 
	source TEXT NOT NULL, 
	created_at TEXT NOT NULL, 
	status TEXT NOT NULL, 
	archive_reason TEXT, 
	confidence FLOAT NOT NULL, 
	reinforcement_count INTEGER NOT NULL, 
	decay_lambda FLOAT NOT NULL, 
	last_reinforced_at FLOAT NOT NULL, 
	self_alignment FLOAT, 
	embedding BLOB, 
	embedding_model TEXT, 
	token_count INTEGER, 
	summary TEXT, 
	last_session_id TEXT, 
	outcome_evidence FLOAT NOT NULL, 
	success_count FLOAT DEFAULT '0.5' NOT NULL, 
	failure_count FLOAT DEFAULT '0.5' NOT NULL, 
	source_peer TEXT, 
	share TEXT, 
	envelope_json TEXT, 
	last_scored_at TEXT, 
	PRIMARY KEY (id)
)"""

_BLOCK_AMENDMENTS_0_18_0 = """\
CREATE TABLE block_amendments (
	id INTEGER NOT NULL, 
	block_id TEXT NOT NULL, 
	timestamp DATETIME DEFAULT CURRENT_TIMESTAMP NOT NULL, 
	pre_content TEXT NOT NULL, 
	post_content TEXT NOT NULL, 
	pre_summary TEXT, 
	post_summary TEXT, 
	drift_score FLOAT NOT NULL, 
	rationale TEXT, 
	acceptor TEXT NOT NULL, 
	reverted_at DATETIME, 
	PRIMARY KEY (id), 
	CONSTRAINT ck_block_amendments_acceptor CHECK (acceptor IN ('agent', 'user', 'system')), 
	FOREIGN KEY(block_id) REFERENCES blocks (id) ON DELETE CASCADE
)"""

_BLOCKS_0_20_0 = """\
CREATE TABLE blocks (
	id TEXT NOT NULL, 
	content TEXT NOT NULL, 
	category TEXT NOT NULL, 
	source TEXT NOT NULL, 
	created_at TEXT NOT NULL, 
	status TEXT NOT NULL, 
	archive_reason TEXT, 
	pinned INTEGER DEFAULT '0' NOT NULL, 
	superseded_by TEXT, 
	confidence FLOAT NOT NULL, 
	reinforcement_count INTEGER NOT NULL, 
	decay_lambda FLOAT NOT NULL, 
	last_reinforced_at FLOAT NOT NULL, 
	self_alignment FLOAT, 
	embedding BLOB, 
	embedding_model TEXT, 
	token_count INTEGER, 
	summary TEXT, 
	last_session_id TEXT, 
	outcome_evidence FLOAT NOT NULL, 
	success_count FLOAT DEFAULT '0.5' NOT NULL, 
	failure_count FLOAT DEFAULT '0.5' NOT NULL, 
	source_peer TEXT, 
	share TEXT, 
	envelope_json TEXT, 
	last_scored_at TEXT, 
	cue TEXT, 
	volatility_class TEXT, 
	PRIMARY KEY (id)
)"""

_EDGES_0_20_0 = """\
CREATE TABLE edges (
	from_id TEXT NOT NULL, 
	to_id TEXT NOT NULL, 
	weight FLOAT NOT NULL, 
	reinforcement_count INTEGER NOT NULL, 
	created_at TEXT NOT NULL, 
	relation_type TEXT DEFAULT 'similar' NOT NULL, 
	origin TEXT DEFAULT 'similarity' NOT NULL, 
	last_active_hours FLOAT, 
	note TEXT, 
	declared_by TEXT, 
	CONSTRAINT uq_edge UNIQUE (from_id, to_id), 
	FOREIGN KEY(from_id) REFERENCES blocks (id) ON DELETE CASCADE, 
	FOREIGN KEY(to_id) REFERENCES blocks (id) ON DELETE CASCADE
)"""

_CONTRADICTIONS_0_20_0 = """\
CREATE TABLE contradictions (
	block_a_id TEXT NOT NULL, 
	block_b_id TEXT NOT NULL, 
	score FLOAT NOT NULL, 
	resolved INTEGER NOT NULL, 
	created_at TEXT NOT NULL, 
	kind TEXT DEFAULT 'contradiction' NOT NULL, 
	cue_similarity FLOAT, 
	CONSTRAINT uq_contradiction UNIQUE (block_a_id, block_b_id), 
	FOREIGN KEY(block_a_id) REFERENCES blocks (id) ON DELETE CASCADE, 
	FOREIGN KEY(block_b_id) REFERENCES blocks (id) ON DELETE CASCADE
)"""

_RELEASE_DDL: dict[str, list[str]] = {
    "0.1.0": [
        _BLOCKS_0_1_0,
        "CREATE INDEX idx_blocks_status ON blocks (status)",
        "CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)",
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _BLOCK_TAGS_0_1_0,
        "CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)",
        "CREATE INDEX idx_block_tags_tag ON block_tags (tag)",
        _EDGES_0_1_0,
        "CREATE INDEX idx_edges_from ON edges (from_id)",
        "CREATE INDEX idx_edges_to ON edges (to_id)",
        _CONTRADICTIONS_0_1_0,
        "CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) "
        "WHERE resolved = 0",
    ],
    "0.8.0": [
        _BLOCKS_0_4_0,
        "CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)",
        "CREATE INDEX idx_blocks_status ON blocks (status)",
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _BLOCK_TAGS_0_1_0,
        "CREATE INDEX idx_block_tags_tag ON block_tags (tag)",
        "CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)",
        _EDGES_0_4_0,
        "CREATE INDEX idx_edges_from ON edges (from_id)",
        "CREATE INDEX idx_edges_to ON edges (to_id)",
        _CONTRADICTIONS_0_1_0,
        "CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) "
        "WHERE resolved = 0",
        _BLOCK_OUTCOMES_0_4_0,
        "CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)",
        _CO_RETRIEVAL_STAGING_0_4_0,
    ],
    "0.9.1": [
        _BLOCKS_0_9_1,
        "CREATE INDEX idx_blocks_status ON blocks (status)",
        "CREATE INDEX idx_blocks_source_peer ON blocks (source_peer)",
        "CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)",
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _PEER_ROSTER_0_9_1,
        _BLOCK_TAGS_0_1_0,
        "CREATE INDEX idx_block_tags_tag ON block_tags (tag)",
        "CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)",
        _EDGES_0_4_0,
        "CREATE INDEX idx_edges_from ON edges (from_id)",
        "CREATE INDEX idx_edges_to ON edges (to_id)",
        _CONTRADICTIONS_0_1_0,
        "CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) "
        "WHERE resolved = 0",
        _BLOCK_OUTCOMES_0_4_0,
        "CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)",
        _CO_RETRIEVAL_STAGING_0_4_0,
    ],
    "0.13.3": [
        _BLOCKS_0_13_3,
        "CREATE INDEX idx_blocks_status ON blocks (status)",
        "CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)",
        "CREATE INDEX idx_blocks_source_peer ON blocks (source_peer)",
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _PEER_ROSTER_0_9_1,
        _BLOCK_TAGS_0_1_0,
        "CREATE INDEX idx_block_tags_tag ON block_tags (tag)",
        "CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)",
        _EDGES_0_4_0,
        "CREATE INDEX idx_edges_from ON edges (from_id)",
        "CREATE INDEX idx_edges_to ON edges (to_id)",
        _CONTRADICTIONS_0_1_0,
        "CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) "
        "WHERE resolved = 0",
        _BLOCK_OUTCOMES_0_4_0,
        "CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)",
        _CO_RETRIEVAL_STAGING_0_4_0,
    ],
    "0.17.0": [
        _BLOCKS_0_17_0,
        "CREATE INDEX idx_blocks_status ON blocks (status)",
        "CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)",
        "CREATE INDEX idx_blocks_source_peer ON blocks (source_peer)",
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _PEER_ROSTER_0_9_1,
        _BLOCK_TAGS_0_1_0,
        "CREATE INDEX idx_block_tags_tag ON block_tags (tag)",
        "CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)",
        _EDGES_0_4_0,
        "CREATE INDEX idx_edges_from ON edges (from_id)",
        "CREATE INDEX idx_edges_to ON edges (to_id)",
        _CONTRADICTIONS_0_1_0,
        "CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) "
        "WHERE resolved = 0",
        _BLOCK_OUTCOMES_0_4_0,
        "CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)",
        _CO_RETRIEVAL_STAGING_0_4_0,
    ],
    "0.19.2": [
        _BLOCKS_0_17_0,
        "CREATE INDEX idx_blocks_status ON blocks (status)",
        "CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)",
        "CREATE INDEX idx_blocks_source_peer ON blocks (source_peer)",
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _PEER_ROSTER_0_9_1,
        _BLOCK_TAGS_0_1_0,
        "CREATE INDEX idx_block_tags_tag ON block_tags (tag)",
        "CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)",
        _EDGES_0_4_0,
        "CREATE INDEX idx_edges_from ON edges (from_id)",
        "CREATE INDEX idx_edges_to ON edges (to_id)",
        _CONTRADICTIONS_0_1_0,
        "CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) "
        "WHERE resolved = 0",
        _BLOCK_OUTCOMES_0_4_0,
        "CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)",
        _CO_RETRIEVAL_STAGING_0_4_0,
        _BLOCK_AMENDMENTS_0_18_0,
        "CREATE INDEX idx_block_amendments_block_id ON block_amendments (block_id)",
        "CREATE INDEX idx_block_amendments_timestamp ON block_amendments (timestamp)",
    ],
    "0.20.0": [
        _BLOCKS_0_20_0,
        "CREATE INDEX idx_blocks_status ON blocks (status)",
        "CREATE INDEX idx_blocks_source_peer ON blocks (source_peer)",
        "CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)",
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _PEER_ROSTER_0_9_1,
        _BLOCK_TAGS_0_1_0,
        "CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)",
        "CREATE INDEX idx_block_tags_tag ON block_tags (tag)",
        _EDGES_0_20_0,
        "CREATE INDEX idx_edges_to ON edges (to_id)",
        "CREATE INDEX idx_edges_from ON edges (from_id)",
        _CONTRADICTIONS_0_20_0,
        "CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) "
        "WHERE resolved = 0",
        _BLOCK_OUTCOMES_0_4_0,
        "CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)",
        _CO_RETRIEVAL_STAGING_0_4_0,
        _BLOCK_AMENDMENTS_0_18_0,
        "CREATE INDEX idx_block_amendments_timestamp ON block_amendments (timestamp)",
        "CREATE INDEX idx_block_amendments_block_id ON block_amendments (block_id)",
    ],
}

#: The wheel whose models.py defines a fresh database of each schema version.
RELEASE_FOR_VERSION: dict[int, str] = {
    1: "0.8.0",
    2: "0.9.1",
    3: "0.13.3",
    4: "0.17.0",
    5: "0.19.2",
    6: "0.19.2",
    7: "0.19.2",
    8: "0.19.2",
    9: "0.20.0",
}

#: The release that runs the migration to each version (its create_all runs first).
MIGRATING_RELEASE: dict[int, str] = {
    2: "0.9.1",
    3: "0.13.3",
    4: "0.17.0",
    5: "0.19.2",
    6: "0.20.0",
    7: "0.20.0",
    8: "0.20.0",
    9: "0.20.0",
}

_AMENDMENTS_V5 = """
        CREATE TABLE IF NOT EXISTS block_amendments (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            block_id TEXT NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
            timestamp TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
            pre_content TEXT NOT NULL,
            post_content TEXT NOT NULL,
            pre_summary TEXT,
            post_summary TEXT,
            drift_score REAL NOT NULL,
            rationale TEXT,
            acceptor TEXT NOT NULL CHECK (acceptor IN ('agent', 'user', 'system')),
            reverted_at TIMESTAMP
        )
    """

#: elfmem 0.20.0 db/migrate.py, one list per target version, in the order it runs them.
#: ``("add", table, column, type)`` is ``_add_column`` (duplicate-column errors ignored).
MIGRATIONS: dict[int, list[Any]] = {
    2: [
        ("add", "blocks", "source_peer", "TEXT"),
        ("add", "blocks", "share", "TEXT DEFAULT 'private'"),
        ("add", "blocks", "envelope_json", "TEXT"),
        ("add", "peer_roster", "delivery_path", "TEXT"),
        "CREATE INDEX IF NOT EXISTS idx_blocks_source_peer ON blocks(source_peer)",
    ],
    3: [
        ("add", "blocks", "last_scored_at", "TEXT"),
        "UPDATE blocks SET last_scored_at = created_at WHERE last_scored_at IS NULL",
        "CREATE INDEX IF NOT EXISTS idx_blocks_last_scored_at ON blocks(last_scored_at)",
    ],
    4: [
        ("add", "blocks", "success_count", "REAL NOT NULL DEFAULT 0.5"),
        ("add", "blocks", "failure_count", "REAL NOT NULL DEFAULT 0.5"),
        "UPDATE blocks "
        "SET success_count = confidence * (1.0 + outcome_evidence), "
        "    failure_count = (1.0 - confidence) * (1.0 + outcome_evidence) "
        "WHERE success_count = 0.5 AND failure_count = 0.5",
    ],
    5: [
        _AMENDMENTS_V5,
        "CREATE INDEX IF NOT EXISTS idx_block_amendments_block_id ON block_amendments(block_id)",
        "CREATE INDEX IF NOT EXISTS idx_block_amendments_timestamp ON block_amendments(timestamp)",
    ],
    6: [("add", "blocks", "superseded_by", "TEXT")],
    7: [
        ("add", "blocks", "pinned", "INTEGER NOT NULL DEFAULT 0"),
        "UPDATE blocks SET pinned = 1 WHERE id IN ("
        "  SELECT block_id FROM block_tags WHERE tag = 'self/constitutional')",
    ],
    8: [
        ("add", "blocks", "cue", "TEXT"),
        ("add", "blocks", "volatility_class", "TEXT"),
        ("add", "edges", "declared_by", "TEXT"),
    ],
    9: [
        ("add", "contradictions", "kind", "TEXT NOT NULL DEFAULT 'contradiction'"),
        ("add", "contradictions", "cue_similarity", "FLOAT"),
    ],
}


def release_ddl(release: str) -> list[str]:
    """The CREATE statements ``metadata.create_all`` runs for a fresh database of ``release``."""
    return list(_RELEASE_DDL[release])


def columns_of(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def create_all(conn: sqlite3.Connection, release: str) -> None:
    """SQLAlchemy's create_all(checkfirst=True): create missing tables (with their indexes)."""
    present = table_names(conn)
    skip: set[str] = set()
    for stmt in _RELEASE_DDL[release]:
        words = stmt.split()
        if words[1] == "TABLE":
            name = words[2]
            if name in present:
                skip.add(name)
                continue
            conn.execute(stmt)
        else:  # CREATE INDEX name ON table (...)
            if words[4] not in skip:
                conn.execute(stmt)


def apply_migrations(conn: sqlite3.Connection, start: int, target: int) -> None:
    for version in range(start + 1, target + 1):
        for step in MIGRATIONS[version]:
            if isinstance(step, tuple):
                _, table, column, ctype = step
                try:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {ctype}")
                except sqlite3.OperationalError:
                    pass  # elfmem's _add_column suppresses this (column already there)
            else:
                conn.execute(step)
        conn.execute(
            "INSERT INTO system_config (key, value) VALUES ('schema_version', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (str(version),),
        )


def create_fresh(conn: sqlite3.Connection, release: str) -> int:
    """What ``release`` leaves in an empty database on first open; returns its schema version.

    ``metadata.create_all`` with that release's DDL, then ``ensure_schema_current`` (no key
    reads as 1: every ALTER is a no-op on model-order tables, but indexes and the key are written).
    Releases before the migration era (0.8.0 and older) write no ``schema_version`` key.
    """
    for stmt in _RELEASE_DDL[release]:
        conn.execute(stmt)
    # 0.19.2 is also the base for the never-released versions 6-8: its own version is the lowest.
    version = (
        min(v for v, r in RELEASE_FOR_VERSION.items() if r == release)
        if release in RELEASE_FOR_VERSION.values()
        else 1
    )
    if version > 1:
        apply_migrations(conn, 1, version)
    return version
