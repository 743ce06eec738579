"""A live elfmem database read through the wal-link route: only the -wal is copied.

The writer is another process, as a live elfmem instance is; these tests check what a user
relies on: rows committed only in the -wal are seen, uncommitted ones are not, the store's folder
is byte-identical afterwards, the result equals a full private copy's, and a checkpoint that
writes the main file during the read is caught and the read repeated.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from elfmem_schemas import build_db
from memlab.sources._sqlite_snapshot import read_snapshot
from memlab.kinds.elfmem_db._load import load_elfmem

_WRITER = textwrap.dedent("""
    import sqlite3, sys
    con = sqlite3.connect(sys.argv[1], isolation_level=None)
    con.execute("PRAGMA wal_autocheckpoint = 0")   # rows stay in the -wal until asked
    def block(bid):
        con.execute("INSERT INTO blocks (id, content, category, source, created_at, status, "
                    "confidence, reinforcement_count, decay_lambda, last_reinforced_at, "
                    "outcome_evidence) VALUES (?, 'written by a live process', 'knowledge', "
                    "'api', '2026-11-30T12:00:00+00:00', 'inbox', 0.5, 0, 0.01, 105.9, 0.0)",
                    (bid,))
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "commit":
            con.execute("BEGIN"); block(arg); con.execute("COMMIT")
        elif cmd == "open":
            con.execute("BEGIN"); block(arg)       # left uncommitted
        elif cmd == "rollback":
            con.execute("ROLLBACK")
        elif cmd == "checkpoint":
            con.execute("PRAGMA wal_checkpoint(PASSIVE)")
        print("ok", flush=True)
""")


class Writer:
    def __init__(self, db: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(db)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def __call__(self, command: str) -> None:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "ok"

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _folder_state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def live(tmp_path):
    folder = tmp_path / "instance"
    folder.mkdir()
    db = folder / "elfmem.db"
    build_db(db, 9)  # 6 blocks, checkpointed
    then = time.time() - 120
    os.utime(db, (then, then))  # quiet main file, as a long-running instance's is
    writer = Writer(db)
    for i in range(3):
        writer(f"commit feedfacecafe000{i}")
    writer("open 0000uncommitted0")
    yield folder, db, writer
    writer.close()


def test_wal_rows_are_read_without_copying_the_main_file(live):
    folder, db, writer = live
    assert Path(f"{db}-wal").stat().st_size > 0
    before = _folder_state(folder)
    store = load_elfmem(db)
    assert _folder_state(folder) == before  # main, -wal and -shm all byte-identical
    assert store.meta["snapshot"]["method"] == "wal-link"
    ids = set(store.blocks.id)
    assert len(ids) == 9 and {f"feedfacecafe000{i}" for i in range(3)} <= ids
    assert "0000uncommitted0" not in ids
    assert db.stat().st_nlink == 1  # the private link is gone


def test_wal_link_reads_what_a_full_private_copy_reads(live):
    folder, db, writer = live
    linked = load_elfmem(db)
    # This process holding the file open sends the load down the full-copy route.
    with open(db, "rb"):
        copied = load_elfmem(db)
    assert (linked.meta["snapshot"]["method"], copied.meta["snapshot"]["method"]) == \
        ("wal-link", "copy")
    for name in ("blocks", "tags", "edges", "config"):
        pd.testing.assert_frame_equal(linked.frames[name], copied.frames[name])


def test_a_checkpoint_during_the_read_is_caught_and_the_read_repeated(live):
    folder, db, writer = live
    writer("rollback")
    seen = []

    def reader(snap):
        con = snap.connect()
        try:
            n = con.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]
        finally:
            con.close()
        if not seen:
            # While our first read runs, the live process commits and checkpoints into the
            # main file, which our link reads directly: that read must be thrown away.
            writer("commit feedfacecafe0009")
            writer("checkpoint")
        seen.append((snap.method, snap.attempt, n))
        return n

    n = read_snapshot(db, reader)
    assert seen[0] == ("wal-link", 1, 9)
    assert len(seen) >= 2 and seen[-1][1] >= 2
    assert n == 10  # the repeated read sees the writer's state after its checkpoint


def test_the_source_file_is_opened_read_only(live, monkeypatch):
    folder, db, writer = live
    modes = []
    real_connect = sqlite3.connect

    def spy(database, *a, **kw):
        modes.append(database)
        return real_connect(database, *a, **kw)

    monkeypatch.setattr(sqlite3, "connect", spy)
    store = load_elfmem(db)
    assert store.meta["snapshot"]["method"] == "wal-link"
    assert modes and all("mode=ro" in str(u) for u in modes)
