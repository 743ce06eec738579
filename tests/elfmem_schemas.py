"""Build elfmem SQLite databases at any schema version 1-9, with the real DDL of each release.

Importable from tests (``from elfmem_schemas import build_db``) and from the benchmark.

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

Two column orders, both real
----------------------------
``order="fresh"``: the database was created by the release of that schema, so columns are in
model order (e.g. 0.20.0 puts ``pinned``, ``superseded_by`` right after ``archive_reason``).
``order="migrated"``: created by an older release (default 0.8.0) and upgraded, so the new
columns are appended in migration order. A loader must select by name, never by position.
"""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path
from typing import Any, Iterable

__all__ = ["build_db", "RELEASE_FOR_VERSION", "MIGRATIONS", "release_ddl", "columns_of"]

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
        'CREATE INDEX idx_blocks_status ON blocks (status)',
        'CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)',
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _BLOCK_TAGS_0_1_0,
        'CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)',
        'CREATE INDEX idx_block_tags_tag ON block_tags (tag)',
        _EDGES_0_1_0,
        'CREATE INDEX idx_edges_from ON edges (from_id)',
        'CREATE INDEX idx_edges_to ON edges (to_id)',
        _CONTRADICTIONS_0_1_0,
        'CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) WHERE resolved = 0',
    ],
    "0.8.0": [
        _BLOCKS_0_4_0,
        'CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)',
        'CREATE INDEX idx_blocks_status ON blocks (status)',
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _BLOCK_TAGS_0_1_0,
        'CREATE INDEX idx_block_tags_tag ON block_tags (tag)',
        'CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)',
        _EDGES_0_4_0,
        'CREATE INDEX idx_edges_from ON edges (from_id)',
        'CREATE INDEX idx_edges_to ON edges (to_id)',
        _CONTRADICTIONS_0_1_0,
        'CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) WHERE resolved = 0',
        _BLOCK_OUTCOMES_0_4_0,
        'CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)',
        _CO_RETRIEVAL_STAGING_0_4_0,
    ],
    "0.9.1": [
        _BLOCKS_0_9_1,
        'CREATE INDEX idx_blocks_status ON blocks (status)',
        'CREATE INDEX idx_blocks_source_peer ON blocks (source_peer)',
        'CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)',
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _PEER_ROSTER_0_9_1,
        _BLOCK_TAGS_0_1_0,
        'CREATE INDEX idx_block_tags_tag ON block_tags (tag)',
        'CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)',
        _EDGES_0_4_0,
        'CREATE INDEX idx_edges_from ON edges (from_id)',
        'CREATE INDEX idx_edges_to ON edges (to_id)',
        _CONTRADICTIONS_0_1_0,
        'CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) WHERE resolved = 0',
        _BLOCK_OUTCOMES_0_4_0,
        'CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)',
        _CO_RETRIEVAL_STAGING_0_4_0,
    ],
    "0.13.3": [
        _BLOCKS_0_13_3,
        'CREATE INDEX idx_blocks_status ON blocks (status)',
        'CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)',
        'CREATE INDEX idx_blocks_source_peer ON blocks (source_peer)',
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _PEER_ROSTER_0_9_1,
        _BLOCK_TAGS_0_1_0,
        'CREATE INDEX idx_block_tags_tag ON block_tags (tag)',
        'CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)',
        _EDGES_0_4_0,
        'CREATE INDEX idx_edges_from ON edges (from_id)',
        'CREATE INDEX idx_edges_to ON edges (to_id)',
        _CONTRADICTIONS_0_1_0,
        'CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) WHERE resolved = 0',
        _BLOCK_OUTCOMES_0_4_0,
        'CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)',
        _CO_RETRIEVAL_STAGING_0_4_0,
    ],
    "0.17.0": [
        _BLOCKS_0_17_0,
        'CREATE INDEX idx_blocks_status ON blocks (status)',
        'CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)',
        'CREATE INDEX idx_blocks_source_peer ON blocks (source_peer)',
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _PEER_ROSTER_0_9_1,
        _BLOCK_TAGS_0_1_0,
        'CREATE INDEX idx_block_tags_tag ON block_tags (tag)',
        'CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)',
        _EDGES_0_4_0,
        'CREATE INDEX idx_edges_from ON edges (from_id)',
        'CREATE INDEX idx_edges_to ON edges (to_id)',
        _CONTRADICTIONS_0_1_0,
        'CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) WHERE resolved = 0',
        _BLOCK_OUTCOMES_0_4_0,
        'CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)',
        _CO_RETRIEVAL_STAGING_0_4_0,
    ],
    "0.19.2": [
        _BLOCKS_0_17_0,
        'CREATE INDEX idx_blocks_status ON blocks (status)',
        'CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)',
        'CREATE INDEX idx_blocks_source_peer ON blocks (source_peer)',
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _PEER_ROSTER_0_9_1,
        _BLOCK_TAGS_0_1_0,
        'CREATE INDEX idx_block_tags_tag ON block_tags (tag)',
        'CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)',
        _EDGES_0_4_0,
        'CREATE INDEX idx_edges_from ON edges (from_id)',
        'CREATE INDEX idx_edges_to ON edges (to_id)',
        _CONTRADICTIONS_0_1_0,
        'CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) WHERE resolved = 0',
        _BLOCK_OUTCOMES_0_4_0,
        'CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)',
        _CO_RETRIEVAL_STAGING_0_4_0,
        _BLOCK_AMENDMENTS_0_18_0,
        'CREATE INDEX idx_block_amendments_block_id ON block_amendments (block_id)',
        'CREATE INDEX idx_block_amendments_timestamp ON block_amendments (timestamp)',
    ],
    "0.20.0": [
        _BLOCKS_0_20_0,
        'CREATE INDEX idx_blocks_status ON blocks (status)',
        'CREATE INDEX idx_blocks_source_peer ON blocks (source_peer)',
        'CREATE INDEX idx_blocks_last_reinforced ON blocks (last_reinforced_at)',
        _FRAMES_0_1_0,
        _SESSIONS_0_1_0,
        _SYSTEM_CONFIG_0_1_0,
        _PEER_ROSTER_0_9_1,
        _BLOCK_TAGS_0_1_0,
        'CREATE INDEX idx_block_tags_block_id ON block_tags (block_id)',
        'CREATE INDEX idx_block_tags_tag ON block_tags (tag)',
        _EDGES_0_20_0,
        'CREATE INDEX idx_edges_to ON edges (to_id)',
        'CREATE INDEX idx_edges_from ON edges (from_id)',
        _CONTRADICTIONS_0_20_0,
        'CREATE INDEX idx_contradictions_unresolved ON contradictions (block_a_id, block_b_id) WHERE resolved = 0',
        _BLOCK_OUTCOMES_0_4_0,
        'CREATE INDEX idx_block_outcomes_block_id ON block_outcomes (block_id)',
        _CO_RETRIEVAL_STAGING_0_4_0,
        _BLOCK_AMENDMENTS_0_18_0,
        'CREATE INDEX idx_block_amendments_timestamp ON block_amendments (timestamp)',
        'CREATE INDEX idx_block_amendments_block_id ON block_amendments (block_id)',
    ],
}

#: The wheel whose models.py defines a fresh database of each schema version.
RELEASE_FOR_VERSION: dict[int, str] = {1: "0.8.0", 2: "0.9.1", 3: "0.13.3", 4: "0.17.0",
                                       5: "0.19.2", 6: "0.19.2", 7: "0.19.2", 8: "0.19.2",
                                       9: "0.20.0"}

#: The release that runs the migration to each version (its create_all runs first).
_MIGRATING_RELEASE: dict[int, str] = {2: "0.9.1", 3: "0.13.3", 4: "0.17.0", 5: "0.19.2",
                                      6: "0.20.0", 7: "0.20.0", 8: "0.20.0", 9: "0.20.0"}

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
    2: [("add", "blocks", "source_peer", "TEXT"),
        ("add", "blocks", "share", "TEXT DEFAULT 'private'"),
        ("add", "blocks", "envelope_json", "TEXT"),
        ("add", "peer_roster", "delivery_path", "TEXT"),
        "CREATE INDEX IF NOT EXISTS idx_blocks_source_peer ON blocks(source_peer)"],
    3: [("add", "blocks", "last_scored_at", "TEXT"),
        "UPDATE blocks SET last_scored_at = created_at WHERE last_scored_at IS NULL",
        "CREATE INDEX IF NOT EXISTS idx_blocks_last_scored_at ON blocks(last_scored_at)"],
    4: [("add", "blocks", "success_count", "REAL NOT NULL DEFAULT 0.5"),
        ("add", "blocks", "failure_count", "REAL NOT NULL DEFAULT 0.5"),
        "UPDATE blocks "
        "SET success_count = confidence * (1.0 + outcome_evidence), "
        "    failure_count = (1.0 - confidence) * (1.0 + outcome_evidence) "
        "WHERE success_count = 0.5 AND failure_count = 0.5"],
    5: [_AMENDMENTS_V5,
        "CREATE INDEX IF NOT EXISTS idx_block_amendments_block_id ON block_amendments(block_id)",
        "CREATE INDEX IF NOT EXISTS idx_block_amendments_timestamp ON block_amendments(timestamp)"],
    6: [("add", "blocks", "superseded_by", "TEXT")],
    7: [("add", "blocks", "pinned", "INTEGER NOT NULL DEFAULT 0"),
        "UPDATE blocks SET pinned = 1 WHERE id IN ("
        "  SELECT block_id FROM block_tags WHERE tag = 'self/constitutional')"],
    8: [("add", "blocks", "cue", "TEXT"),
        ("add", "blocks", "volatility_class", "TEXT"),
        ("add", "edges", "declared_by", "TEXT")],
    9: [("add", "contradictions", "kind", "TEXT NOT NULL DEFAULT 'contradiction'"),
        ("add", "contradictions", "cue_similarity", "FLOAT")],
}


def release_ddl(release: str) -> list[str]:
    """The CREATE statements ``metadata.create_all`` runs for a fresh database of ``release``."""
    return list(_RELEASE_DDL[release])


def columns_of(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _create_all(conn: sqlite3.Connection, release: str) -> None:
    """SQLAlchemy's create_all(checkfirst=True): create missing tables (with their indexes)."""
    present = _tables(conn)
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


def _migrate(conn: sqlite3.Connection, start: int, target: int) -> None:
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
        conn.execute("INSERT INTO system_config (key, value) VALUES ('schema_version', ?) "
                     "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (str(version),))


def _vec(seed: int, dims: int = 8) -> bytes:
    # elfmem stores np.float32(...).tobytes(); a small deterministic unit-ish vector.
    vals = [((seed * 7 + i * 3) % 11 - 5) / 5.0 for i in range(dims)]
    return struct.pack(f"<{dims}f", *vals)


_CONSTITUTION = ("I am elf — a curious, adaptive cognitive agent. I learn through action, evolve "
                 "through reflection, and improve through honest feedback.")


def _base_rows() -> dict[str, list[dict[str, Any]]]:
    """A small, realistic instance: a pinned constitutional block, knowledge, a supersession
    (archived, tags already deleted as elfmem's archival does), an inbox block, a decayed mind
    block; edges of three kinds, a contradiction, outcomes, sessions (one still open),
    a peer, an amendment and the system_config keys elfmem writes."""
    def block(i: int, content: str, **kw: Any) -> dict[str, Any]:
        row = {
            "id": f"{0x85515efd7a93ce40 + i:016x}", "content": content,
            "category": "knowledge", "source": "api",
            "created_at": f"2026-08-0{i}T08:50:2{i}.660418+00:00", "status": "active",
            "archive_reason": None, "pinned": 0, "superseded_by": None,
            "confidence": 0.55, "reinforcement_count": 3 * i, "decay_lambda": 0.01,
            "last_reinforced_at": 5.0 * i, "self_alignment": 0.4, "embedding": _vec(i),
            "embedding_model": "mock", "token_count": len(content) // 4,
            "summary": "Summary: " + content[:60], "last_session_id": None,
            "outcome_evidence": 0.0, "success_count": 0.55, "failure_count": 0.45,
            "source_peer": None, "share": "private", "envelope_json": None,
            "last_scored_at": f"2026-11-30T08:50:1{i}.187241+00:00", "cue": None,
            "volatility_class": None,
        }
        row.update(kw)
        return row

    b = [
        block(1, _CONSTITUTION, decay_lambda=1e-05, reinforcement_count=10,
              last_reinforced_at=98.4883598074434, pinned=1, self_alignment=0.9),
        block(2, "Read git repositories with --no-optional-locks so a status check never "
                 "rewrites the index of a live agent's memory.", outcome_evidence=2.0,
              success_count=1.9, failure_count=1.1),
        block(3, "Backups go to ~/backups every night.", category="observation",
              status="archived", archive_reason="superseded"),
        block(4, "Backups go to ~/backups every night at 02:00 UTC, rotated weekly.",
              category="decision"),
        block(5, "Ask before deleting files in a user's home folder.", status="inbox",
              last_scored_at=None, summary=None, confidence=0.5, success_count=0.5,
              failure_count=0.5),
        block(6, "# Mind Model: Mira\nPrefers short answers; works late.", category="mind",
              source="mind_create", status="archived", archive_reason="decayed",
              decay_lambda=0.05),
    ]
    ids = [r["id"] for r in b]
    b[2]["superseded_by"] = ids[3]
    tags = [(0, "self/constitutional"), (0, "self/role/identity"), (1, "git"), (1, "tools"),
            (1, "safety"), (3, "backups"), (3, "ops"), (4, "safety")]
    return {
        "blocks": b,
        "block_tags": [{"block_id": ids[i], "tag": t} for i, t in tags],
        "edges": [
            {"from_id": ids[0], "to_id": ids[1], "weight": 0.64, "reinforcement_count": 4,
             "created_at": "2026-11-30T08:50:22.947524+00:00", "relation_type": "similar",
             "origin": "similarity", "last_active_hours": 70.8, "note": None,
             "declared_by": None},
            {"from_id": ids[1], "to_id": ids[3], "weight": 0.55, "reinforcement_count": 35,
             "created_at": "2026-11-30T08:50:23.843253+00:00", "relation_type": "co_occurs",
             "origin": "co_retrieval", "last_active_hours": 94.99, "note": None,
             "declared_by": None},
            {"from_id": ids[3], "to_id": ids[4], "weight": 0.8, "reinforcement_count": 0,
             "created_at": "2026-11-30T08:50:24.000001+00:00", "relation_type": "supports",
             "origin": "agent", "last_active_hours": None,
             "note": "the backup rule backs the deletion rule", "declared_by": ids[3]},
        ],
        "contradictions": [
            {"block_a_id": ids[1], "block_b_id": ids[4], "score": 0.9, "resolved": 0,
             "created_at": "2026-11-30T08:50:18.738698+00:00", "kind": "contradiction",
             "cue_similarity": None},
        ],
        "block_outcomes": [
            {"id": "a49f7c7ad9b24b0c82bd921fea2a91a8", "block_id": ids[1], "signal": 0.9,
             "weight": 1.0, "source": "user", "confidence_before": 0.55,
             "confidence_after": 0.725, "created_at": "2026-11-30T08:50:21.415922+00:00"},
            {"id": "b095cfe4ef774eca8c58d1981719babe", "block_id": ids[1], "signal": 0.2,
             "weight": 1.0, "source": "", "confidence_before": 0.725,
             "confidence_after": 0.633, "created_at": "2026-11-30T08:50:21.400106+00:00"},
        ],
        "sessions": [
            {"id": "068ddd9c66b14a3b", "task_type": "general",
             "started_at": "2026-11-30T08:50:15.860700+00:00",
             "ended_at": "2026-11-30T08:50:16.268591+00:00", "start_active_hours": 0.0},
            {"id": "a17fc817a5ad4e2b", "task_type": "coding",
             "started_at": "2026-11-30T08:50:16.288192+00:00",
             "ended_at": "2026-11-30T09:20:16.288192+00:00", "start_active_hours": 5.0},
            {"id": "a7845bd8387f4749", "task_type": "general",
             "started_at": "2026-11-30T09:30:00+00:00", "ended_at": None,
             "start_active_hours": 5.5},
        ],
        "system_config": [
            {"key": "total_active_hours", "value": "105.988359807443"},
            {"key": "prune_threshold", "value": "0.05"},
            {"key": "top_k", "value": "5"},
            {"key": "last_consolidated_at", "value": "2026-10-17T08:50:21.660418+00:00"},
            {"key": "last_curate_at", "value": "98.4883598074434"},
            {"key": "embedding_model_lock", "value": "mock"},
            {"key": "lifetime_token_usage", "value": json.dumps(
                {"llm_input_tokens": 27236, "llm_output_tokens": 3360,
                 "embedding_tokens": 12114, "llm_calls": 82, "embedding_calls": 496})},
        ],
        "frames": [
            {"name": "self", "weights_json": json.dumps({"similarity": 0.1, "confidence": 0.3}),
             "filters_json": json.dumps({"tag_patterns": ["self/%"]}), "guarantees_json": "[]",
             "template": "# SELF\n{blocks}", "token_budget": 500, "cache_json": None,
             "source": "builtin", "created_at": "2026-11-30T08:50:15.823687+00:00"},
        ],
        "co_retrieval_staging": [{"from_id": ids[0], "to_id": ids[1], "count": 3}],
        "peer_roster": [
            {"did": "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", "name": "mira",
             "public_key": None, "trust": 0.5, "is_self": 0,
             "first_contact": "2026-09-01T10:00:00+00:00",
             "last_active": "2026-11-29T18:00:00+00:00", "blocks_imported": 2,
             "blocks_exported": 1, "messages_in": 4, "messages_out": 3, "notes": None,
             "delivery_path": "/home/mira/.elfmem/inbox"},
        ],
        "block_amendments": [
            {"block_id": ids[0], "timestamp": "2026-11-30 08:50:21",
             "pre_content": _CONSTITUTION, "post_content": _CONSTITUTION + " Curious, bounded.",
             "pre_summary": None, "post_summary": None, "drift_score": 0.4,
             "rationale": "tighten the wording", "acceptor": "user", "reverted_at": None},
        ],
    }


def _later_rows(ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Rows written after an upgrade, using the columns the upgrade added."""
    return {
        "blocks": [{
            "id": "3c8dc28ffb9239ce", "content": "Backups go to ~/backups nightly, 02:00 UTC.",
            "category": "decision", "source": "api",
            "created_at": "2026-11-30T08:50:25.775556+00:00", "status": "active",
            "confidence": 0.5, "reinforcement_count": 0, "decay_lambda": 0.01,
            "last_reinforced_at": 105.9, "embedding": _vec(9), "embedding_model": "mock",
            "token_count": 11, "summary": None, "outcome_evidence": 0.0,
            "success_count": 0.5, "failure_count": 0.5, "share": "private", "pinned": 0,
            "last_scored_at": None, "cue": "when scheduling or restoring backups",
            "volatility_class": "durable",
        }],
        "contradictions": [{
            "block_a_id": ids[3], "block_b_id": "3c8dc28ffb9239ce", "score": 0.9425716400146484,
            "resolved": 0, "created_at": "2026-11-30T08:50:25.775556+00:00",
            "kind": "near_duplicate", "cue_similarity": 0.25,
        }],
    }


def _insert(conn: sqlite3.Connection, rows: dict[str, list[dict[str, Any]]]) -> dict[str, int]:
    """Insert rows into the tables present, using only the columns each table has."""
    written: dict[str, int] = {}
    present = _tables(conn)
    for table, table_rows in rows.items():
        if table not in present or not table_rows:
            continue
        cols = columns_of(conn, table)
        for row in table_rows:
            names = [c for c in row if c in cols]
            conn.execute(
                f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                [row[c] for c in names])
        written[table] = written.get(table, 0) + len(table_rows)
    return written


def build_db(path: str | Path, version: int, *, order: str = "fresh",
             origin: str | None = None, rows: bool = True, journal_mode: str = "wal",
             extra_config: Iterable[tuple[str, str]] = ()) -> dict[str, int]:
    """Create an elfmem database at schema ``version`` (1-9) at ``path``; return rows per table.

    ``order="fresh"`` uses the DDL of the release for that version; ``order="migrated"``
    starts from ``origin`` (default 0.8.0, schema 1; ``"0.1.0"`` for the pre-0.4 shape),
    writes the sample rows there, then upgrades with the real migrations, so backfills run on
    real rows, and writes rows that use the new columns afterwards.
    ``extra_config`` adds or overrides ``system_config`` rows (e.g. a malformed value).
    The connection is closed at the end, so a WAL database is fully checkpointed.
    """
    if not 1 <= version <= 9:
        raise ValueError(f"elfmem schema versions are 1-9, not {version}")
    if order not in ("fresh", "migrated"):
        raise ValueError("order is 'fresh' or 'migrated'")
    path = Path(path)
    if order == "fresh":
        origin = origin or RELEASE_FOR_VERSION[version]
    else:
        origin = origin or "0.8.0"
    origin_version = next(v for v, r in sorted(RELEASE_FOR_VERSION.items()) if r == origin) \
        if origin in RELEASE_FOR_VERSION.values() else 1
    if origin_version > version:
        raise ValueError(f"elfmem {origin} creates schema {origin_version}, newer than {version}")
    conn = sqlite3.connect(path)
    try:
        conn.execute(f"PRAGMA journal_mode={journal_mode}")
        for stmt in _RELEASE_DDL[origin]:
            conn.execute(stmt)
        # A fresh database also goes through ensure_schema_current (no key reads as 1): every
        # ALTER is a no-op on model-order tables, but the indexes and the key get written.
        _migrate(conn, 1, origin_version)
        base = _base_rows()
        counts = _insert(conn, base) if rows else {}
        if version > origin_version:
            _create_all(conn, _MIGRATING_RELEASE[version])
            _migrate(conn, origin_version, version)
            if rows:
                ids = [r["id"] for r in base["blocks"]]
                for table, n in _insert(conn, _later_rows(ids)).items():
                    counts[table] = counts.get(table, 0) + n
        for key, value in extra_config:
            conn.execute("INSERT INTO system_config (key, value) VALUES (?, ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))
        conn.commit()
        for table in _tables(conn):
            counts.setdefault(table, 0)
        counts["system_config"] = conn.execute("SELECT COUNT(*) FROM system_config").fetchone()[0]
    finally:
        conn.close()
    return counts
