"""load_elfmem: every schema 1-9 in both column orders, the two real samples, dtypes, the
read-only guarantee on live WAL databases, and a specific error for each kind of bad input."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import struct
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import memlab
from elfmem_schemas import RELEASE_FOR_VERSION, build_db, columns_of
from memlab.errors import CorruptStore, StoreNotFound, UnrecognizedStore, UnsupportedSchema
from memlab.sources._sqlite_snapshot import read_snapshot
from memlab.kinds.elfmem_db._audit import audit_elfmem
from memlab.kinds.elfmem_db._load import load_elfmem

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "elfmem"

# docs/DESIGN.md, written out here rather than taken from the module, so a drift in either shows.
UTC = "datetime64[ns, UTC]"
BLOCK_DTYPES = {
    "id": "string", "content": "string", "category": "category", "source": "category",
    "created_at": UTC, "status": "category", "archive_reason": "category", "pinned": "boolean",
    "superseded_by": "string", "confidence": "float64", "reinforcement_count": "Int64",
    "decay_lambda": "float64", "last_reinforced_at": "float64", "self_alignment": "float64",
    "embedding_model": "string", "token_count": "Int64", "summary": "string",
    "last_session_id": "string", "outcome_evidence": "float64", "success_count": "float64",
    "failure_count": "float64", "source_peer": "string", "share": "category",
    "envelope_json": "string", "last_scored_at": UTC, "cue": "string",
    "volatility_class": "category", "content_chars": "Int64", "summary_chars": "Int64",
}
FRAME_DTYPES = {
    "tags": {"block_id": "string", "tag": "string"},
    "edges": {"from_id": "string", "to_id": "string", "weight": "float64",
              "reinforcement_count": "Int64", "created_at": UTC, "relation_type": "category",
              "origin": "category", "last_active_hours": "float64", "note": "string",
              "declared_by": "string"},
    "contradictions": {"block_a_id": "string", "block_b_id": "string", "score": "float64",
                       "resolved": "boolean", "created_at": UTC, "kind": "category",
                       "cue_similarity": "float64"},
    "outcomes": {"id": "string", "block_id": "string", "signal": "float64", "weight": "float64",
                 "source": "string", "confidence_before": "float64",
                 "confidence_after": "float64", "created_at": UTC},
    "amendments": {"id": "Int64", "block_id": "string", "timestamp": UTC,
                   "pre_content": "string", "post_content": "string", "pre_summary": "string",
                   "post_summary": "string", "drift_score": "float64", "rationale": "string",
                   "acceptor": "category", "reverted_at": UTC},
    "sessions": {"id": "string", "task_type": "string", "started_at": UTC, "ended_at": UTC,
                 "start_active_hours": "float64", "duration_s": "float64"},
    "config_raw": {"key": "string", "value": "string"},
    "frames": {"name": "string", "weights_json": "string", "filters_json": "string",
               "guarantees_json": "string", "template": "string", "token_budget": "Int64",
               "cache_json": "string", "source": "string", "created_at": UTC},
    "peers": {"did": "string", "name": "string", "public_key": "string", "trust": "float64",
              "is_self": "boolean", "first_contact": UTC, "last_active": UTC,
              "blocks_imported": "Int64", "blocks_exported": "Int64", "messages_in": "Int64",
              "messages_out": "Int64", "notes": "string", "delivery_path": "string"},
    "co_retrieval": {"from_id": "string", "to_id": "string", "count": "Int64"},
}
CONFIG_DTYPES = {
    "schema_version": "Int64", "total_active_hours": "float64", "last_curate_at": "float64",
    "last_consolidated_at": UTC, "prune_threshold": "float64", "top_k": "Int64",
    "llm_calls": "Int64", "llm_input_tokens": "Int64", "llm_output_tokens": "Int64",
    "embedding_calls": "Int64", "embedding_tokens": "Int64",
}
TABLE_OF_FRAME = {"blocks": "blocks", "tags": "block_tags", "edges": "edges",
                  "contradictions": "contradictions", "outcomes": "block_outcomes",
                  "amendments": "block_amendments", "sessions": "sessions",
                  "config_raw": "system_config", "frames": "frames", "peers": "peer_roster",
                  "co_retrieval": "co_retrieval_staging"}

# (frame, column) -> the schema version whose migration adds it (elfmem 0.20.0 db/migrate.py).
ADDED_IN = {("blocks", "source_peer"): 2, ("blocks", "share"): 2, ("blocks", "envelope_json"): 2,
            ("blocks", "last_scored_at"): 3, ("blocks", "success_count"): 4,
            ("blocks", "failure_count"): 4, ("blocks", "superseded_by"): 6,
            ("blocks", "pinned"): 7, ("blocks", "cue"): 8, ("blocks", "volatility_class"): 8,
            ("edges", "declared_by"): 8, ("contradictions", "kind"): 9,
            ("contradictions", "cue_similarity"): 9}

CONSTITUTION_ID = f"{0x85515efd7a93ce41:016x}"


def _age(path: Path, seconds: float = 120.0) -> None:
    """Make a just-built file look quiet, so the in-place (direct) route is taken."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def _folder_state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


def _assert_dtypes(df: pd.DataFrame, expected: dict[str, str], frame: str) -> None:
    assert list(df.columns)[:len(expected)] == list(expected), frame
    for col, dtype in expected.items():
        assert str(df[col].dtype) == dtype or (dtype == "string" and df[col].dtype == "string"), \
            f"{frame}.{col}: {df[col].dtype} != {dtype}"


# -- every schema version, both column orders ----------------------------------------------

CASES = [(v, "fresh") for v in range(1, 10)] + [(v, "migrated") for v in range(2, 10)]


@pytest.mark.parametrize("version,order", CASES, ids=[f"v{v}-{o}" for v, o in CASES])
def test_every_schema_version_loads_with_the_right_version_and_na_columns(tmp_path, version,
                                                                        order):
    db = tmp_path / "elfmem.db"
    written = build_db(db, version, order=order)
    store = load_elfmem(db)

    assert store.kind == "elfmem_db"
    assert store.meta["schema_version"] == version
    assert store.meta["schema_version_recorded"] is (version >= 2)
    assert store.meta["schema_version_from_columns"] == version
    assert store.problems.empty, store.problems.to_dict("records")
    for frame, table in TABLE_OF_FRAME.items():
        assert len(store.frames[frame]) == written.get(table, 0), frame
    for (frame, col), added in ADDED_IN.items():
        table = TABLE_OF_FRAME[frame]
        assert (col in store.meta["columns"][table]) is (version >= added), (frame, col)
        if version < added:
            assert store.frames[frame][col].isna().all(), (frame, col)
    assert ("block_amendments" in store.meta["tables"]) is (version >= 5)
    _assert_dtypes(store.blocks, BLOCK_DTYPES, "blocks")
    for frame, dtypes in FRAME_DTYPES.items():
        _assert_dtypes(store.frames[frame], dtypes, frame)

    blocks = store.blocks.set_index("id")
    constitution = blocks.loc[CONSTITUTION_ID]
    assert constitution.decay_lambda == pytest.approx(1e-05)
    assert constitution.last_reinforced_at == pytest.approx(98.4883598074434)
    # elfmem's v7 migration pins exactly the self/constitutional blocks
    if version >= 7:
        assert blocks.pinned.tolist().count(True) == 1 and bool(constitution.pinned)
    else:
        assert pd.isna(constitution.pinned)
    if version >= 9:
        kinds = store.contradictions.kind.value_counts().to_dict()
        assert kinds["contradiction"] == 1
        assert kinds.get("near_duplicate", 0) == (1 if order == "migrated" else 0)


def test_v1_has_no_schema_version_key_and_the_0_1_0_shape_loads(tmp_path):
    db = tmp_path / "early.db"
    written = build_db(db, 1, origin="0.1.0")
    store = load_elfmem(db)
    assert store.meta["schema_version"] == 1
    assert store.meta["schema_version_recorded"] is False
    assert store.meta["elfmem_release"] == "<0.4.0 (0.1.0 shape)"
    assert len(store.blocks) == written["blocks"] == 6
    # 0.1.0 had no summary / outcome_evidence, no typed edges, no outcome or co-retrieval table
    assert store.blocks.summary.isna().all() and store.blocks.summary_chars.isna().all()
    assert store.blocks.outcome_evidence.isna().all()
    assert store.edges.relation_type.isna().all() and len(store.edges) == 3
    assert store.outcomes.empty and list(store.outcomes.columns) == list(FRAME_DTYPES["outcomes"])
    assert store.co_retrieval.empty and store.peers.empty
    _assert_dtypes(store.outcomes, FRAME_DTYPES["outcomes"], "outcomes")


def test_column_order_does_not_matter_fresh_and_migrated_agree(tmp_path):
    fresh, migrated = tmp_path / "fresh.db", tmp_path / "migrated.db"
    build_db(fresh, 9, order="fresh")
    build_db(migrated, 9, order="migrated")
    with sqlite3.connect(fresh) as a, sqlite3.connect(migrated) as b:
        # the point of the test: same columns, different positions
        assert columns_of(a, "blocks")[7] == "pinned" and columns_of(b, "blocks")[7] != "pinned"
    a_, b_ = load_elfmem(fresh).blocks, load_elfmem(migrated).blocks
    same = ["id", "content", "category", "status", "archive_reason", "confidence", "reinforcement_count", "decay_lambda", "last_reinforced_at",
            "pinned", "token_count", "created_at", "content_chars"]
    b_ = b_[b_.id.isin(a_.id)].reset_index(drop=True)
    pd.testing.assert_frame_equal(a_[same], b_[same])


def test_migration_backfills_are_what_the_loader_reports(tmp_path):
    db = tmp_path / "old.db"
    build_db(db, 9, order="migrated")
    blocks = load_elfmem(db).blocks.set_index("id")
    old = blocks.drop(index="3c8dc28ffb9239ce")
    # v3: last_scored_at backfilled from created_at, even for the unscored inbox block
    assert (old.last_scored_at == old.created_at).all()
    # v4: alpha = confidence * (1 + evidence) for rows that existed before the migration
    knowledge = old.loc[f"{0x85515efd7a93ce42:016x}"]
    assert knowledge.success_count == pytest.approx(0.55 * 3.0)
    assert knowledge.failure_count == pytest.approx(0.45 * 3.0)
    # v6: no superseded_by can be recovered for archivals before the column existed
    assert old.superseded_by.isna().all()
    new = blocks.loc["3c8dc28ffb9239ce"]
    assert new.cue == "when scheduling or restoring backups" and new.volatility_class == "durable"
    assert pd.isna(new.last_scored_at)


def test_typed_values_of_a_v9_database(tmp_path):
    db = tmp_path / "elfmem.db"
    build_db(db, 9)
    store = load_elfmem(db)
    b = store.blocks.set_index("id")
    assert b.status.value_counts().to_dict() == {"active": 3, "archived": 2, "inbox": 1}
    assert list(store.blocks.status.cat.categories) == ["inbox", "active", "archived"]
    archived = b[b.status == "archived"]
    assert archived.archive_reason.astype(str).tolist() == ["superseded", "decayed"]
    assert archived.superseded_by.iloc[0] == f"{0x85515efd7a93ce44:016x}"
    assert b.loc[CONSTITUTION_ID].created_at == pd.Timestamp("2026-08-01T08:50:21.660418Z")
    assert b.loc[CONSTITUTION_ID].content_chars == len(b.loc[CONSTITUTION_ID].content)
    assert "—" in b.loc[CONSTITUTION_ID].content  # non-ASCII counted as one character
    assert pd.isna(b[b.status == "inbox"].summary_chars.iloc[0])

    sessions = store.sessions.set_index("id")
    assert sessions.loc["a17fc817a5ad4e2b"].duration_s == pytest.approx(1800.0)
    assert sessions.loc["068ddd9c66b14a3b"].duration_s == pytest.approx(0.407891)
    assert pd.isna(sessions.loc["a7845bd8387f4749"].duration_s)  # still open

    cfg = store.config.iloc[0]
    assert len(store.config) == 1
    assert cfg.schema_version == 9 and cfg.top_k == 5
    assert cfg.total_active_hours == pytest.approx(105.988359807443)
    assert cfg.last_curate_at == pytest.approx(98.4883598074434)  # active hours, not a time
    assert cfg.last_consolidated_at == pd.Timestamp("2026-10-17T08:50:21.660418Z")
    assert (cfg.llm_calls, cfg.llm_input_tokens, cfg.llm_output_tokens) == (82, 27236, 3360)
    assert (cfg.embedding_calls, cfg.embedding_tokens) == (496, 12114)
    assert cfg.embedding_model_lock == "mock"
    assert store.config["embedding_model_lock"].dtype == "string"
    _assert_dtypes(store.config, CONFIG_DTYPES, "config")
    # config_raw keeps every value exactly as stored
    raw = dict(zip(store.config_raw.key, store.config_raw.value))
    assert json.loads(raw["lifetime_token_usage"])["llm_calls"] == 82

    amend = store.amendments.iloc[0]
    assert amend.timestamp == pd.Timestamp("2026-11-30 08:50:21", tz="UTC")  # naive = UTC
    assert amend.acceptor == "user"
    edge = store.edges.set_index("relation_type").loc["supports"]
    assert edge.origin == "agent" and edge.declared_by == edge.from_id
    assert store.peers.is_self.tolist() == [False]
    assert store.contradictions.resolved.tolist() == [False]


def test_embeddings_only_on_request_as_float32(tmp_path):
    db = tmp_path / "elfmem.db"
    build_db(db, 9)
    con = sqlite3.connect(db)
    con.execute("UPDATE blocks SET embedding = NULL WHERE status = 'inbox'")
    expected = dict(con.execute("SELECT id, embedding FROM blocks WHERE embedding IS NOT NULL"))
    con.commit()
    con.close()
    assert "embedding" not in load_elfmem(db).blocks.columns
    blocks = load_elfmem(db, embeddings=True).blocks
    assert blocks.columns[-1] == "embedding"
    for block_id, vec in zip(blocks.id, blocks.embedding):
        if block_id in expected:
            assert vec.dtype == np.float32 and vec.shape == (8,)
            np.testing.assert_array_equal(vec, struct.unpack("<8f", expected[block_id]))
        else:
            assert vec is None


def test_embeddings_of_mixed_widths_and_a_broken_blob(tmp_path):
    db = tmp_path / "elfmem.db"
    build_db(db, 5)
    con = sqlite3.connect(db)
    ids = [r[0] for r in con.execute("SELECT id FROM blocks ORDER BY id")]
    con.execute("UPDATE blocks SET embedding = ? WHERE id = ?",
                (np.arange(4, dtype=np.float32).tobytes(), ids[0]))
    con.execute("UPDATE blocks SET embedding = ? WHERE id = ?", (b"\x00\x01\x02", ids[1]))
    con.commit()
    con.close()
    store = load_elfmem(db, embeddings=True)
    by_id = dict(zip(store.blocks.id, store.blocks.embedding))
    np.testing.assert_array_equal(by_id[ids[0]], [0, 1, 2, 3])
    assert by_id[ids[1]] is None and by_id[ids[2]].shape == (8,)
    assert "bad_embedding" in set(store.problems.kind)


def test_split_parallel_reads_match_one_whole_read(tmp_path, monkeypatch):
    import memlab.kinds.elfmem_db._load as elfmem_db

    db = tmp_path / "many.db"
    build_db(db, 9)
    rng = np.random.default_rng(3)
    with sqlite3.connect(db) as con:
        for i in range(3000):
            _new_block(con, f"bulk{i:012d}")
        # 8 dims like the sample rows: one width, so the one-matrix decoding is used
        vectors = {f"bulk{i:012d}": rng.standard_normal(8).astype(np.float32)
                   for i in range(3000) if i % 7}
        con.executemany("UPDATE blocks SET embedding = ? WHERE id = ?",
                        [(v.tobytes(), k) for k, v in vectors.items()])
        con.execute("DELETE FROM blocks WHERE id = 'bulk000000001500'")  # a hole in the rowids
        con.executemany("INSERT INTO block_tags VALUES (?, 'bulk')",
                        [(f"bulk{i:012d}",) for i in range(0, 3000, 2)])
    whole = load_elfmem(db, embeddings=True)
    monkeypatch.setattr(elfmem_db, "_SPLIT_ROWS", 300)
    parts = []
    real_fetch = elfmem_db._fetch_arrow
    monkeypatch.setattr(elfmem_db, "_fetch_arrow",
                        lambda uri, table, cols, part: parts.append((table, part))
                        or real_fetch(uri, table, cols, part))
    split = load_elfmem(db, embeddings=True)

    assert len([p for t, p in parts if t == "blocks"]) > 1

    assert len(split.blocks) == 6 + 2999 and split.blocks.id.is_unique
    for name in ("blocks", "tags"):
        cols = [c for c in whole.frames[name].columns if c != "embedding"]
        pd.testing.assert_frame_equal(whole.frames[name][cols], split.frames[name][cols])
    got = dict(zip(split.blocks.id, split.blocks.embedding))
    for block_id, vec in vectors.items():
        if block_id != "bulk000000001500":
            np.testing.assert_array_equal(got[block_id], vec)
    assert got["bulk000000000007"] is None  # every 7th has none
    assert got[CONSTITUTION_ID].shape == (8,)
    assert split.problems.empty


@pytest.mark.parametrize("name", ["elfmem-0.19.2-schema5", "elfmem-0.20.0-schema9"])
def test_exact_path_gives_the_same_frames_as_the_arrow_path(monkeypatch, name):
    import memlab.kinds.elfmem_db._load as elfmem_db

    fast = load_elfmem(SAMPLES / f"{name}.db", embeddings=True)

    def no_arrow(*args):
        raise RuntimeError("arrow disabled for this test")

    monkeypatch.setattr(elfmem_db, "_fetch_arrow", no_arrow)
    exact = load_elfmem(SAMPLES / f"{name}.db", embeddings=True)
    assert set(exact.meta["readers"].values()) == {"sqlite3 (arrow disabled for this test)"}
    assert set(fast.meta["readers"].values()) == {"arrow"}
    for frame in fast.frames:
        a, b = fast.frames[frame], exact.frames[frame]
        if frame == "blocks":
            for x, y in zip(a.pop("embedding"), b.pop("embedding")):
                np.testing.assert_array_equal(x, y)
        pd.testing.assert_frame_equal(a, b, obj=frame)


# -- the two real samples --------------------------------------------------------------------

SAMPLE_FILES = ["elfmem-0.19.2-schema5", "elfmem-0.20.0-schema9"]


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_real_samples_match_their_summary(name):
    summary = json.loads((SAMPLES / f"{name}.summary.json").read_text())
    store = load_elfmem(SAMPLES / f"{name}.db")

    assert store.meta["schema_version"] == int(summary["system_config"]["schema_version"])
    assert store.problems.empty
    frame_of = {t: f for f, t in TABLE_OF_FRAME.items()}
    for table, n in summary["tables"].items():
        assert len(store.frames[frame_of[table]]) == n, table
    assert store.blocks.status.value_counts().to_dict() == {
        **{k: 0 for k in ("inbox", "active", "archived")}, **summary["block_status"]}
    reasons = store.blocks.archive_reason.value_counts()
    assert reasons[reasons > 0].to_dict() == summary["archive_reason"]
    assert store.edges.relation_type.value_counts().to_dict() == summary["edge_relations"]
    kinds = summary["contradiction_kinds"]
    if "(no kind column)" in kinds:
        assert "kind" not in store.meta["columns"]["contradictions"]
        assert store.contradictions.kind.isna().all()
        assert len(store.contradictions) == kinds["(no kind column)"]
    else:
        counts = store.contradictions.kind.value_counts()
        assert counts[counts > 0].to_dict() == kinds
    assert store.tags.tag.str.startswith("self/role/").sum() == summary["self_role_tags"]
    raw = dict(zip(store.config_raw.key, store.config_raw.value))
    assert raw == summary["system_config"]
    cfg = store.config.iloc[0]
    usage = json.loads(summary["system_config"]["lifetime_token_usage"])
    for key, value in usage.items():
        assert cfg[key] == value, key
    assert cfg.total_active_hours == float(summary["system_config"]["total_active_hours"])
    assert store.meta["elfmem_release"].startswith(
        "0.18.0" if summary["elfmem"] == "0.19.2" else ">=0.20.0")


@pytest.mark.parametrize("name,version", [("elfmem-0.19.2-schema5", 5),
                                          ("elfmem-0.20.0-schema9", 9)])
def test_builder_ddl_is_what_real_elfmem_wrote(tmp_path, name, version):
    built = tmp_path / "built.db"
    build_db(built, version)
    query = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
    real = sqlite3.connect(f"file:{SAMPLES / name}.db?immutable=1", uri=True)
    try:
        assert sqlite3.connect(built).execute(query).fetchall() == real.execute(query).fetchall()
    finally:
        real.close()
    assert RELEASE_FOR_VERSION[version] in name


# -- read-only, live WAL ---------------------------------------------------------------------

def _new_block(con: sqlite3.Connection, block_id: str) -> None:
    con.execute(
        "INSERT INTO blocks (id, content, category, source, created_at, status, confidence, "
        "reinforcement_count, decay_lambda, last_reinforced_at, outcome_evidence) "
        "VALUES (?, 'written by a live process', 'knowledge', 'api', "
        "'2026-11-30T12:00:00+00:00', 'inbox', 0.5, 0, 0.01, 105.9, 0.0)", (block_id,))


def test_live_wal_folder_is_byte_identical_and_wal_rows_are_seen(tmp_path):
    folder = tmp_path / "instance"
    folder.mkdir()
    db = folder / "elfmem.db"
    build_db(db, 9)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")  # keep the rows in the -wal only
        writer.execute("BEGIN")
        for i in range(3):
            _new_block(writer, f"feedfacecafe000{i}")
        writer.execute("INSERT INTO block_tags VALUES ('feedfacecafe0000', 'live')")
        writer.execute("COMMIT")
        writer.execute("BEGIN")
        _new_block(writer, "0000uncommitted0")  # open transaction: must not be seen
        assert Path(f"{db}-wal").stat().st_size > 0
        with sqlite3.connect(f"file:{db}?immutable=1", uri=True) as main_only:
            assert main_only.execute("SELECT COUNT(*) FROM blocks").fetchone() == (6,)
        before = _folder_state(folder)

        store = load_elfmem(db, embeddings=True)

        assert _folder_state(folder) == before
        assert store.meta["snapshot"]["method"] == "copy"
        assert store.meta["snapshot"]["wal_bytes"] > 0
        assert len(store.blocks) == 9
        assert {f"feedfacecafe000{i}" for i in range(3)} <= set(store.blocks.id)
        assert "0000uncommitted0" not in set(store.blocks.id)
        assert "live" in set(store.tags.tag)
        writer.execute("ROLLBACK")
    finally:
        writer.close()


def test_a_symlink_finds_the_wal_beside_the_real_file(tmp_path):
    real, links = tmp_path / "real", tmp_path / "links"
    real.mkdir()
    links.mkdir()
    db = real / "elfmem.db"
    build_db(db, 9)
    (links / "current.db").symlink_to(db)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        _new_block(writer, "feedfacecafe0001")
        before = _folder_state(real), sorted(os.listdir(links))
        store = load_elfmem(links / "current.db")
        assert (_folder_state(real), sorted(os.listdir(links))) == before
        assert "feedfacecafe0001" in set(store.blocks.id)
    finally:
        writer.close()


def test_a_wal_with_a_broken_header_is_reported(tmp_path):
    folder = tmp_path / "instance"
    folder.mkdir()
    db = folder / "elfmem.db"
    build_db(db, 9)
    Path(f"{db}-wal").write_bytes(b"\x00garbage" * 1000)
    before = _folder_state(folder)
    store = load_elfmem(db)
    assert _folder_state(folder) == before
    assert len(store.blocks) == 6
    assert store.problems.kind.tolist() == ["wal"]
    assert "cannot be read" in store.problems.message.iloc[0]


def test_quiet_database_is_read_in_place_without_side_files(tmp_path):
    folder = tmp_path / "instance"
    folder.mkdir()
    db = folder / "elfmem.db"
    build_db(db, 5)
    _age(db)
    before = _folder_state(folder)
    stat_before = db.stat()
    store = load_elfmem(db)
    assert store.meta["snapshot"]["method"] == "direct"
    assert _folder_state(folder) == before == {"elfmem.db": before["elfmem.db"]}
    assert db.stat().st_mtime_ns == stat_before.st_mtime_ns
    assert len(store.blocks) == 6


@pytest.mark.parametrize("quiet", [False, True], ids=["copy", "direct"])
def test_paths_that_look_like_uri_syntax(tmp_path, quiet):
    folder = tmp_path / "my store #1 ?mode=rw %20 é"
    folder.mkdir()
    db = folder / "elf mem.db"
    build_db(db, 9)
    if quiet:
        _age(db)
    before = _folder_state(folder)
    store = load_elfmem(db)
    assert len(store.blocks) == 6 and store.meta["readers"]["blocks"] == "arrow"
    assert store.meta["snapshot"]["method"] == ("direct" if quiet else "copy")
    assert _folder_state(folder) == before


def test_hot_journal_is_rolled_back_on_the_private_copy_only(tmp_path):
    # A writer that crashed mid-transaction: uncommitted pages already in the main file and
    # the rollback journal beside it. An in-place read would see the torn state.
    db = tmp_path / "live.db"
    build_db(db, 5, journal_mode="delete")
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN")
    for i in range(400):
        _new_block(writer, f"bulk{i:012d}")
    writer.execute("COMMIT")
    writer.execute("PRAGMA cache_size = 1")  # spill dirty pages to the file before commit
    writer.execute("BEGIN")
    writer.execute("UPDATE blocks SET content = 'torn' || hex(randomblob(400))")
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    shutil.copyfile(db, crashed / "elfmem.db")
    shutil.copyfile(f"{db}-journal", crashed / "elfmem.db-journal")
    writer.execute("ROLLBACK")
    writer.close()
    with sqlite3.connect(f"file:{crashed / 'elfmem.db'}?immutable=1", uri=True) as torn:
        assert torn.execute("SELECT COUNT(*) FROM blocks WHERE content LIKE 'torn%'"
                            ).fetchone()[0] > 0
    before = _folder_state(crashed)

    store = load_elfmem(crashed / "elfmem.db")

    assert _folder_state(crashed) == before
    assert store.meta["journal_mode"] == "rollback"
    assert not store.blocks.content.str.startswith("torn").any()
    assert len(store.blocks) == 406


def test_a_write_during_an_in_place_read_is_retried(tmp_path):
    db = tmp_path / "elfmem.db"
    build_db(db, 9, journal_mode="delete")
    _age(db)
    calls = []

    def reader(snap):
        calls.append(snap.method)
        with snap.connect() as con:
            n = con.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]
        if len(calls) == 1:  # another process commits while we read
            with sqlite3.connect(db) as w:
                _new_block(w, "feedfacecafe0009")
        return n

    assert read_snapshot(db, reader) == 7
    assert calls == ["direct", "copy"]  # the second try sees a hot file and copies it


def test_no_temp_files_are_left_behind(tmp_path, monkeypatch):
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    db = tmp_path / "elfmem.db"
    build_db(db, 9)
    assert load_elfmem(db).meta["snapshot"]["method"] == "copy"  # just written: copied
    with pytest.raises(UnsupportedSchema):
        con = sqlite3.connect(db)
        con.execute("UPDATE system_config SET value = '10' WHERE key = 'schema_version'")
        con.commit()
        con.close()
        load_elfmem(db)
    assert list(scratch.iterdir()) == []


# -- bad input: a specific error naming the file, or a problem row --------------------------

def test_missing_path(tmp_path):
    with pytest.raises(StoreNotFound, match="absent.db"):
        load_elfmem(tmp_path / "absent.db")


def test_folder_is_not_a_database(tmp_path):
    with pytest.raises(UnrecognizedStore, match="folder"):
        load_elfmem(tmp_path)


@pytest.mark.parametrize("content,what", [
    (b"", "empty"),
    (b"hello, this is a text file\n" * 40, "not an SQLite database"),
    (bytes(range(256)) * 16, "not an SQLite database"),
])
def test_not_sqlite(tmp_path, content, what):
    path = tmp_path / "notes.db"
    path.write_bytes(content)
    with pytest.raises(CorruptStore, match=what) as info:
        load_elfmem(path)
    assert "notes.db" in str(info.value) and info.value.hint


def test_truncated_file(tmp_path):
    db = tmp_path / "cut.db"
    build_db(db, 9)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptStore, match="truncated") as info:
        load_elfmem(db)
    assert "cut.db" in str(info.value)
    db.write_bytes(data[:5000])  # not even a whole page
    with pytest.raises(CorruptStore, match="cut.db"):
        load_elfmem(db)


def test_damaged_pages(tmp_path):
    db = tmp_path / "damaged.db"
    build_db(db, 9)
    data = bytearray(db.read_bytes())
    page = struct.unpack(">H", data[16:18])[0]
    rng = np.random.default_rng(7)
    data[page: len(data)] = rng.integers(0, 256, len(data) - page, dtype=np.uint8).tobytes()
    db.write_bytes(bytes(data))
    with pytest.raises(CorruptStore, match="damaged.db"):
        load_elfmem(db)


def test_schema_10_is_unsupported(tmp_path):
    db = tmp_path / "future.db"
    build_db(db, 9, extra_config=[("schema_version", "10")])
    with pytest.raises(UnsupportedSchema, match="future.db") as info:
        load_elfmem(db)
    assert "10" in str(info.value) and "1-9" in str(info.value)


def test_database_without_blocks_table(tmp_path):
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE notes (id INTEGER, body TEXT)")
    with pytest.raises(UnsupportedSchema, match="other.db") as info:
        load_elfmem(db)
    assert "blocks" in str(info.value)


def test_bad_values_become_na_with_a_problem_row_never_a_dropped_row(tmp_path):
    db = tmp_path / "odd.db"
    build_db(db, 9, extra_config=[("lifetime_token_usage", "{not json"),
                                  ("total_active_hours", "lots")])
    con = sqlite3.connect(db)
    con.execute(f"UPDATE blocks SET created_at = 'yesterday' WHERE id = '{CONSTITUTION_ID}'")
    # text in REAL / INTEGER columns: SQLite keeps it, so a reader meets it
    con.execute("UPDATE blocks SET confidence = 'high', token_count = '12.5' "
                "WHERE status = 'inbox'")
    con.execute("UPDATE blocks SET status = 'deleted' WHERE category = 'mind'")
    con.commit()
    con.close()
    store = load_elfmem(db)

    assert len(store.blocks) == 6
    b = store.blocks.set_index("id")
    assert pd.isna(b.loc[CONSTITUTION_ID].created_at)
    inbox = b[b.status == "inbox"].iloc[0]
    assert np.isnan(inbox.confidence) and pd.isna(inbox.token_count)
    assert b.confidence.notna().sum() == 5
    assert "deleted" in set(b.status.astype(str))
    cfg = store.config.iloc[0]
    assert pd.isna(cfg.llm_calls) and np.isnan(cfg.total_active_hours)
    assert cfg.top_k == 5
    messages = " | ".join(store.problems.message)
    assert set(store.problems.kind) >= {"bad_json", "bad_value", "unknown_value"}
    assert "blocks.created_at" in messages and "'yesterday'" in messages
    assert "blocks.confidence" in messages and "blocks.token_count" in messages
    assert "config.total_active_hours" in messages and "lifetime_token_usage" in messages
    assert set(store.problems.file) == {str(db)}
    assert store.meta["readers"]["blocks"].startswith("sqlite3")
    _assert_dtypes(store.blocks, BLOCK_DTYPES, "blocks")


@pytest.mark.parametrize("value", ["inf", "-inf", "1e300", str(10 ** 22)])
def test_an_integer_past_int64_is_na_with_a_problem_row_not_a_crash(tmp_path, value):
    db = tmp_path / "huge.db"
    build_db(db, 9, extra_config=[("top_k", value)])
    con = sqlite3.connect(db)
    con.execute(f"UPDATE blocks SET reinforcement_count = {value!r} WHERE status = 'inbox'")
    con.commit()
    con.close()
    store = load_elfmem(db)
    assert pd.isna(store.config.iloc[0].top_k)
    assert store.blocks["reinforcement_count"].isna().sum() == 1
    messages = " | ".join(store.problems.message)
    assert "config.top_k" in messages and "blocks.reinforcement_count" in messages
    assert audit_elfmem(store).headline["blocks_ever"] == len(store.blocks)


def test_unparseable_schema_version_reads_as_1_like_elfmem(tmp_path):
    db = tmp_path / "odd.db"
    build_db(db, 9, extra_config=[("schema_version", "nine")])
    store = load_elfmem(db)
    assert store.meta["schema_version"] == 1
    assert store.meta["schema_version_from_columns"] == 9
    assert "schema_version" in set(store.problems.kind)


def test_recorded_version_ahead_of_columns_is_reported(tmp_path):
    db = tmp_path / "drift.db"
    build_db(db, 5, extra_config=[("schema_version", "9")])
    store = load_elfmem(db)
    assert store.meta["schema_version"] == 9
    assert store.blocks.pinned.isna().all()
    assert "schema_drift" in set(store.problems.kind)


def test_memlab_load_dispatches_here(tmp_path):
    db = tmp_path / "memory.sqlite"
    build_db(db, 3)
    store = memlab.load(db)
    assert store.kind == "elfmem_db" and store.meta["schema_version"] == 3
    assert store.meta["elfmem_release"] == "0.13.3-0.15.3"
