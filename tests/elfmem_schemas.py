"""Build elfmem SQLite databases at any schema version 1-9, with the real DDL of each release.

Importable from tests (``from elfmem_schemas import build_db``) and from the benchmark. The DDL
and migrations themselves, and where they come from, are in :mod:`memlab.formats.elfmem_schema`.

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

from memlab.formats.elfmem_schema import (  # noqa: F401  (re-exported for the tests)
    _RELEASE_DDL,
    MIGRATING_RELEASE,
    MIGRATIONS,
    RELEASE_FOR_VERSION,
    apply_migrations,
    columns_of,
    create_all,
    release_ddl,
    table_names,
)

__all__ = ["build_db", "RELEASE_FOR_VERSION", "MIGRATIONS", "release_ddl", "columns_of"]


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
    present = table_names(conn)
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
        apply_migrations(conn, 1, origin_version)
        base = _base_rows()
        counts = _insert(conn, base) if rows else {}
        if version > origin_version:
            create_all(conn, MIGRATING_RELEASE[version])
            apply_migrations(conn, origin_version, version)
            if rows:
                ids = [r["id"] for r in base["blocks"]]
                for table, n in _insert(conn, _later_rows(ids)).items():
                    counts[table] = counts.get(table, 0) + n
        for key, value in extra_config:
            conn.execute("INSERT INTO system_config (key, value) VALUES (?, ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))
        conn.commit()
        for table in table_names(conn):
            counts.setdefault(table, 0)
        counts["system_config"] = conn.execute("SELECT COUNT(*) FROM system_config").fetchone()[0]
    finally:
        conn.close()
    return counts
