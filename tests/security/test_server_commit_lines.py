"""`memlab migrate LETTA_SERVER DEST`: agent names, history actor fields and ids are store text.
None of them may end a commit-message line, add a trailer, or reach ``git log`` as a raw control
character; and ``--verify``, which reads the ``Letta-*`` trailers back, must not be fooled by a
forged ``Letta-Block:`` into reporting a difference that is not there.

Each case changes a copy of the committed letta 0.11.7 SQLite database (the migration code is the
same for PostgreSQL) and migrates it with the real CLI; ``git log`` is read by real git.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from memlab.cli import main
from memlab.migrations import verify
from memlab.kinds.letta_server._migrate import history_trailers
from memlab.kinds.letta_server._load import load_letta_server

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples" / "letta-server"
HUMAN = "block-88e1c60f-6f67-40ee-9f14-ea417fca4416"  # ezra/human: 4 checkpoints
FORGED = f"\nLetta-Block: {HUMAN}\nLetta-History-Sequence: 9"
TRICKS = "\x1b]0;PWNED\x07\x1b[31m\u2028\u202e\x85\x00"

CASES = {
    "agent-name": "UPDATE agents SET name = 'juno' || :x WHERE name = 'juno'",
    "actor-id": "UPDATE block_history SET actor_id = actor_id || :x "
                "WHERE id = 'block_hist-5ca64e70-0edb-4c43-b45b-40a42713ceeb'",
    "history-id": "UPDATE block_history SET id = id || :x "
                  "WHERE id = 'block_hist-cd8383d2-6495-46f5-82eb-a7a3bf675628'",
    "actor-type": "UPDATE block_history SET actor_type = 'letta_user' || :x "
                  "WHERE id = 'block_hist-f9ba571f-2874-4704-bb45-f98dcf4f925f'",
    "block-id": "PRAGMA foreign_keys = OFF; "
                "UPDATE block SET id = id || :x WHERE id = 'block-ae894698-5e1f-43b9-91c5-481772843217'; "
                "UPDATE blocks_agents SET block_id = block_id || :x "
                "WHERE block_id = 'block-ae894698-5e1f-43b9-91c5-481772843217'; "
                "UPDATE block_history SET block_id = block_id || :x "
                "WHERE block_id = 'block-ae894698-5e1f-43b9-91c5-481772843217'",
}


def _hostile_db(tmp_path: Path, case: str) -> Path:
    db = tmp_path / "sqlite.db"
    shutil.copyfile(SAMPLES / "letta-0.11.7.db", db)
    conn = sqlite3.connect(db)
    try:
        for statement in CASES[case].split("; "):
            conn.execute(statement, {"x": FORGED + TRICKS} if ":x" in statement else {})
        conn.commit()
    finally:
        conn.close()
    return db


def _messages(repo: Path) -> list[bytes]:
    out = subprocess.run(["git", "-C", str(repo), "log", "--format=%an%x1f%ae%x1f%B%x00", "main"],
                         capture_output=True, check=True).stdout
    return [m.strip(b"\n") for m in out.split(b"\x00") if m.strip(b"\n")]


@pytest.mark.parametrize("case", sorted(CASES))
def test_store_text_cannot_break_out_of_a_commit_line(tmp_path, capsys, case):
    db = _hostile_db(tmp_path, case)
    store = load_letta_server(db)
    dest = tmp_path / "out"
    assert main(["migrate", str(db), str(dest), "--verify", "--no-retrieval"]) == 0, \
        capsys.readouterr().err
    assert "0 difference(s)" in capsys.readouterr().out
    n_trailers, shown = 0, 0
    for repo in sorted(p for p in dest.iterdir() if (p / ".git").exists()):
        for entry in _messages(repo):
            text = entry.decode("utf-8")
            author, email, message = text.split("\x1f", 2)
            shown += "\\x1b]0;PWNED\\x07" in author + message  # the escape, made visible
            assert author.isprintable() and email.isprintable(), (author, email)
            for line in message.split("\n"):
                assert line.isprintable(), repr(line)  # no ESC, NUL, U+2028, bidi, NEL raw
            paragraphs = message.split("\n\n")
            # A trailer line starts a line only in the last paragraph, where memlab wrote it.
            for para in paragraphs[:-1]:
                assert not any(l.startswith("Letta-") for l in para.split("\n")), message
            if "Letta-Block" in history_trailers(message):
                n_trailers += 1
                assert len(paragraphs[-1].split("\n")) == 3, message
    # One trailer block per checkpoint of each live block in each repository it is in, no more.
    blocks = store.blocks.set_index("block_id")
    live = blocks[~blocks["is_deleted"].astype(bool)]
    want = sum(int(live.loc[b, "history_len"]) for b in store.block_agents["block_id"]
               if b in live.index)
    assert want > 0 and n_trailers == want
    assert shown, "the hostile text is in no commit"


def test_verify_is_not_fooled_by_a_forged_trailer(tmp_path):
    db = _hostile_db(tmp_path, "history-id")
    dest = tmp_path / "out"
    assert main(["migrate", str(db), str(dest), "--no-retrieval"]) == 0
    parity = verify(db, dest, retrieval=False)
    history = parity[parity["check"] == "history"]
    assert len(history) and history["ok"].all(), history.to_string()
    assert parity["ok"].fillna(True).all()


def test_a_forged_trailer_outside_the_trailer_block_is_not_read():
    body = (f"Update human block\n\nCheckpoint 1 of 1 (letta_user u{FORGED}).\n\n"
            "Letta-Block: block-a\nLetta-History-Id: h1\nLetta-History-Sequence: 1")
    assert history_trailers(body) == {"Letta-Block": "block-a", "Letta-History-Id": "h1",
                                      "Letta-History-Sequence": "1"}
    twice = "Update x\n\nLetta-Block: block-a\nLetta-History-Sequence: 1\nLetta-Block: block-b"
    assert history_trailers(twice) == {}
    assert history_trailers(f"Update x{FORGED}") == {}  # a subject alone has no trailers
