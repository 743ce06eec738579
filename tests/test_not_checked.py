"""Numbers that say what they are (issue 26 item 6): a figure memlab did not check, or the store
never recorded, is null in ``memlab audit --json`` and "–" in the text, never 0; elfmem's own
``blocks.token_count`` is the live-token figure where it was recorded.

Expected values come from the databases themselves through sqlite3 (the real elfmem samples),
and from git-built repositories of each layout, never from memlab.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from elfmem_schemas import build_db
from memfs_repos import build_letta_v1, build_souveraine, build_substrate

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "data" / "samples" / "elfmem").glob("*.db"))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def _audit_json(path: Path, *extra: str) -> dict:
    done = _cli("audit", str(path), "--json", "--as-of", "2026-12-01", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["headline"]


def _sql(path: Path, query: str):
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return con.execute(query).fetchone()
    finally:
        con.close()


@pytest.mark.parametrize("db", SAMPLES, ids=lambda p: p.name)
def test_live_tokens_are_elfmem_own_counts_where_recorded(db):
    recorded, est_chars, missing = _sql(db, (
        "SELECT SUM(token_count), SUM(CASE WHEN token_count IS NULL THEN length(content) END), "
        "SUM(token_count IS NULL) FROM blocks WHERE status = 'active'"))
    assert missing >= 1  # the samples hold a block elfmem stored without a count
    (usage,) = _sql(db, "SELECT value FROM system_config WHERE key = 'lifetime_token_usage'")
    llm_in = json.loads(usage)["llm_input_tokens"]
    h = _audit_json(db)
    expected = recorded + est_chars / 4
    assert h["live_tokens"] == pytest.approx(expected)
    assert h["live_blocks_uncounted"] == missing
    assert h["live_tokens_est_share"] == pytest.approx((est_chars / 4) / expected)
    assert h["input_per_corpus_token"] == pytest.approx(llm_in / expected)
    # chars/4 everywhere (the old figure) is a different number on these databases
    (chars,) = _sql(db, "SELECT SUM(length(content)) FROM blocks WHERE status = 'active'")
    assert abs(h["input_per_corpus_token"] - llm_in / (chars / 4)) > 0.1
    text = _cli("audit", str(db), "--as-of", "2026-12-01").stdout
    share = (est_chars / 4) / expected * 100
    # the summary wraps at the terminal's width (100 in a pipe): compare words, not lines
    assert f"{share:.1f}% estimated as chars/4 for {missing} block(s)" in " ".join(text.split())


@pytest.mark.parametrize("db", SAMPLES, ids=lambda p: p.name)
def test_amendments_and_outcomes_counted_where_the_tables_exist(db):
    (amend,) = _sql(db, "SELECT COUNT(*) FROM block_amendments")
    (outcomes,) = _sql(db, "SELECT COUNT(*) FROM block_outcomes")
    h = _audit_json(db)
    assert h["amendments"] == amend and h["outcomes"] == outcomes
    (schema,) = _sql(db, "SELECT value FROM system_config WHERE key = 'schema_version'")
    (near,) = _sql(db, "SELECT COUNT(*) FROM contradictions WHERE kind = 'near_duplicate'") \
        if int(schema) >= 9 else (None,)
    assert h["near_duplicates"] == near  # schema 5 has no contradictions.kind: null


def test_schema_without_amendments_table_is_null_not_zero(tmp_path):
    db = tmp_path / "schema4.db"
    build_db(db, 4)  # elfmem's real schema-4 DDL: block_amendments arrived in schema 5
    (tables,) = _sql(db, "SELECT group_concat(name) FROM sqlite_master WHERE type='table'")
    assert "block_amendments" not in tables.split(",")
    h = _audit_json(db)
    assert h["amendments"] is None and h["amendments_reverted"] is None
    assert h["near_duplicates"] is None
    assert h["outcomes"] == _sql(db, "SELECT COUNT(*) FROM block_outcomes")[0]
    text = _cli("audit", str(db), "--as-of", "2026-12-01").stdout
    assert "amendments: – (not recorded: no block_amendments table)" in text
    assert "amendments: 0" not in text


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    root = tmp_path_factory.mktemp("layouts")
    return {"v1": build_letta_v1(root / "v1"), "souv": build_souveraine(root / "souv"),
            "sub": build_substrate(root / "sub")}


@pytest.mark.parametrize("name", ["souv", "sub"])
def test_hook_figures_are_null_where_no_letta_hook_guards(layouts, name):
    path = layouts[name].path
    h = _audit_json(path)
    assert h["layout"] in ("souveraine", "elfmem_substrate")
    assert h["hook_violations"] is None and h["no_verify_commits"] is None
    # history is still walked: limit breaches and read_only are checked there
    repo = path / "memory" if (path / "memory" / ".git").exists() else path
    commits = subprocess.run(["git", "-C", str(repo), "rev-list", "--all", "--count"],
                             capture_output=True, text=True, check=True).stdout
    assert h["commits"] == int(commits)
    assert isinstance(h["limit_breach_commits"], int)
    text = _cli("audit", str(path), "--as-of", "2026-12-01").stdout
    assert "hook: not checked" in text and "0 violation" not in text


def test_letta_layout_hook_figures_are_counts(layouts):
    h = _audit_json(layouts["v1"].path)
    assert h["layout"] == "letta_v1"
    assert h["no_verify_commits"] == 4 and h["hook_violations"] >= 4
