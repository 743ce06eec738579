"""An elfmem ``blocks`` table without readable text (issue 34, hole 12): its ``content`` column
dropped, or replaced by a generated column (which ``PRAGMA table_info`` does not list) loaded
185 blocks with 0 problems and "0 chars". Now it is one error line naming the file and why.

Each case is a copy of the committed demo database changed with sqlite3 (``ALTER TABLE``), read
through the real loader and the real CLI."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import memlab
from memlab.errors import MemlabError

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "demo" / "elfmem-demo.db"

CHANGES = {
    "dropped": (["ALTER TABLE blocks DROP COLUMN content"], "there is no 'content' column"),
    "generated": (["ALTER TABLE blocks RENAME COLUMN content TO body",
                   "ALTER TABLE blocks ADD COLUMN content TEXT GENERATED ALWAYS AS "
                   "(upper(body)) VIRTUAL"], "'content' is a generated column"),
    "no_id": (["ALTER TABLE blocks RENAME COLUMN id TO block_key"], "there is no 'id' column"),
}


def _changed(tmp_path: Path, statements: list[str]) -> Path:
    db = tmp_path / "elfmem.db"
    shutil.copy(DEMO, db)
    with sqlite3.connect(db) as con:
        for sql in statements:
            con.execute(sql)
    return db


@pytest.mark.parametrize("case", sorted(CHANGES))
def test_blocks_without_text_are_one_error_line(tmp_path, case):
    statements, reason = CHANGES[case]
    db = _changed(tmp_path, statements)
    with pytest.raises(MemlabError, match=reason) as info:
        memlab.load(db)
    assert "elfmem.db" in str(info.value)
    for command in ("inspect", "audit"):
        got = subprocess.run([sys.executable, "-m", "memlab", command, str(db)],
                             capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
        lines = got.stderr.strip().splitlines()
        assert got.returncode == 2 and len(lines) == 1, got.stdout[-500:] + got.stderr
        assert reason in lines[0] and "elfmem.db" in lines[0]


def test_the_demo_and_an_extra_generated_column_still_load(tmp_path):
    """Negative controls: the demo as committed, and the demo with an extra generated column
    beside a stored ``content``, load their 185 blocks with their text."""
    db = _changed(tmp_path, ["ALTER TABLE blocks ADD COLUMN shout TEXT GENERATED ALWAYS AS "
                             "(upper(content)) VIRTUAL"])
    for path in (DEMO, db):
        blocks = memlab.load(path).blocks
        assert len(blocks) == 185 and blocks["content_chars"].sum() > 10_000
        assert blocks["content"].notna().all()
