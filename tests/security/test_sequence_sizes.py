"""Sizes derived from store values are bounded (issue 34, hole 3): one Letta
``block_history.sequence_number`` of 9e18 made ``inspect`` build ``set(range(1, 9e18 + 1))``
(a MemoryError after eating the machine's memory). The gap is now arithmetic.

The CLI runs under an address-space limit (``RLIMIT_AS``), so the unfixed code fails fast with
a MemoryError instead of taking the shared machine's memory; the database is a copy of the
committed Letta 0.11.7 sample with one number changed by sqlite3."""

from __future__ import annotations

import json
import resource
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "samples" / "letta-server" / "letta-0.11.7.db"
HUGE = 9_000_000_000_000_000_000
LIMIT = 3 * 1024**3  # bytes of address space: memlab's imports fit, a set of 9e18 ints does not


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memlab", *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, preexec_fn=_limited)


def _last_of_a_block(db: Path) -> tuple[str, str, int]:
    """The history row with the highest sequence number of a block, and how many rows it has."""
    with sqlite3.connect(db) as con:
        hid, block = con.execute("SELECT id, block_id FROM block_history "
                                 "ORDER BY block_id, sequence_number DESC LIMIT 1").fetchone()
        n = con.execute("SELECT count(*) FROM block_history WHERE block_id = ?",
                        (block,)).fetchone()[0]
    return hid, block, n


@pytest.mark.parametrize("number", [HUGE, 2**63 - 1])
def test_a_huge_sequence_number_is_a_gap_row_not_an_allocation(tmp_path, number):
    db = tmp_path / "letta.db"
    shutil.copy(SAMPLE, db)
    hid, block, n = _last_of_a_block(db)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE block_history SET sequence_number = ? WHERE id = ?", (number, hid))
    got = _cli("inspect", str(db))
    assert got.returncode == 0 and "Traceback" not in got.stderr, got.stderr[-1500:]
    text = " ".join(got.stdout.split())
    assert "history_gap" in text and block in text, text[-2000:]
    # 1..n-1 kept, n..number-1 missing: the count is exact, however large
    assert f"missing [{n}, {n + 1}," in text and f"({number - n:,} in all)" in text, text[-2000:]


def test_an_untouched_database_has_no_gap(tmp_path):
    """Negative control: the sample as committed (sequences 1..N) has no history_gap row."""
    got = _cli("inspect", str(SAMPLE))
    assert got.returncode == 0, got.stderr[-1500:]
    assert "history_gap" not in got.stdout


def test_gaps_are_counted_arithmetically():
    from memlab._numbers import missing_numbers, repeated_numbers

    assert missing_numbers([1, 2, 3]) == ([], 0)
    assert missing_numbers([]) == ([], 0)
    assert missing_numbers([3, 1]) == ([2], 1)
    assert missing_numbers([1, HUGE]) == (list(range(2, 12)), HUGE - 2)
    assert missing_numbers([HUGE, HUGE]) == (list(range(1, 11)), HUGE - 1)
    assert missing_numbers([-5, 0, 2], show=3) == ([1], 1)  # below 1 fills nothing
    assert missing_numbers(range(1, 20, 2), show=3) == ([2, 4, 6], 9)
    assert repeated_numbers([1, HUGE, HUGE, 2, 2, 3]) == ([2, HUGE], 2)
    assert repeated_numbers(range(5)) == ([], 0)


@pytest.mark.parametrize("number", [HUGE])
def test_audit_of_a_huge_sequence_number_is_a_gap_not_an_allocation(tmp_path, number):
    """``memlab audit`` runs the integrity check, which built ``set(range(1, max + 1))`` and
    counted repeats with ``list.count`` after the loader had been fixed (MemoryError here)."""
    db = tmp_path / "letta.db"
    shutil.copy(SAMPLE, db)
    hid, block, n = _last_of_a_block(db)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE block_history SET sequence_number = ? WHERE id = ?", (number, hid))
    got = _cli("audit", "-q", "--json", str(db))
    assert got.returncode == 0 and "Traceback" not in got.stderr, got.stderr[-1500:]
    rows = json.loads(got.stdout)["tables"]["integrity"]
    gaps = [r for r in rows if r["kind"] == "sequence_gap" and block in r["ref"]]
    assert len(gaps) == 1, rows
    detail = gaps[0]["detail"]
    assert f"[{n}, {n + 1}," in detail and f"({number - n:,} in all)" in detail, detail
    assert not [r for r in rows if r["kind"] == "sequence_duplicate"], rows


def test_audit_of_a_repeated_huge_number_is_one_duplicate_row(tmp_path):
    """Two rows of one block both at 9e18: one duplicate row, counted without ``list.count``."""
    db = tmp_path / "letta.db"
    shutil.copy(SAMPLE, db)
    with sqlite3.connect(db) as con:
        block, n = con.execute("SELECT block_id, count(*) FROM block_history GROUP BY block_id "
                               "ORDER BY count(*) DESC, block_id LIMIT 1").fetchone()
        assert n >= 3
        # Letta's unique index forbids a repeat; a store written around it (index dropped) is
        # exactly what the integrity check is for
        con.execute("DROP INDEX ix_block_history_block_id_sequence")
        con.execute("UPDATE block_history SET sequence_number = ? WHERE block_id = ? "
                    "AND sequence_number >= ?", (HUGE, block, n - 1))
    got = _cli("audit", "-q", "--json", str(db))
    assert got.returncode == 0 and "Traceback" not in got.stderr, got.stderr[-1500:]
    rows = json.loads(got.stdout)["tables"]["integrity"]
    dupes = [r for r in rows if r["kind"] == "sequence_duplicate" and block in r["ref"]]
    assert len(dupes) == 1 and f"[{HUGE}]" in dupes[0]["detail"], rows


def test_audit_of_the_untouched_database_has_no_sequence_rows():
    """Negative control: the committed sample's chains are 1..N with no repeats."""
    got = _cli("audit", "-q", "--json", str(SAMPLE))
    assert got.returncode == 0, got.stderr[-1500:]
    kinds = {r["kind"] for r in json.loads(got.stdout)["tables"]["integrity"]}
    assert not kinds & {"sequence_gap", "sequence_duplicate"}, kinds
