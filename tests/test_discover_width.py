"""`memlab discover` prints one table at any terminal width: no line wider than $COLUMNS, one
line per store, an agent without a name named by its id (never "–"), and the columns it had
to leave out named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    from test_discover import CONFIG, PERSONA, _commit, _repo, _write

    home = tmp_path_factory.mktemp("home")
    named = home / ".letta/agents/agent-aaa/memory"
    _write(named / "system/persona.md", PERSONA)
    _write(named / ".letta/config.json", CONFIG)
    _commit(_repo(named, name="EmmaBot"), ["system/persona.md", ".letta/config.json"],
            "Initial commit", "2026-03-01T12:00:00+00:00")
    # a deep local-backend copy without git (a long path, a long layout and a problem)
    _write(home / ".letta/lc-local-backend/memfs/agent-ddd/memory/memory/system/persona.md", "x")
    _write(home / ".pi/unified/agents/agent-bad/agent.yaml", "name: [unclosed\n")
    _write(home / ".elfmem/databases/main.db", "x" * 100)
    return home


def _discover(home: Path, columns: int) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns)}
    done = subprocess.run([sys.executable, "-m", "memlab", "-q", "discover", str(home)],
                          capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("columns", [60, 73, 100, 140, 200])
def test_one_table_within_the_width(home, columns):
    lines = _discover(home, columns)
    assert max(len(line) for line in lines) <= columns, "\n".join(lines)
    assert lines[0].startswith("4 store(s) under ")
    header = lines[1].split()
    assert header[:2] == ["name", "kind"] and "path" in header
    assert set(lines[2]) <= {"─", " "}  # a table, not a block of `column: value` per store
    rows = lines[3:7]
    assert len(rows) == 4 and not any(r.startswith("not shown") for r in rows)  # one per store
    names = sorted(line.split()[0] for line in rows)
    assert names == ["EmmaBot", "agent-bad", "agent-ddd", "main"]  # every one it knows
    left_out = [c for c in ("layout", "files", "last_commit", "problem") if c not in header]
    note = " ".join(lines[7:])
    if left_out:
        assert note.startswith(f"not shown at this width: {', '.join(left_out)} (--json")
    else:
        assert note == ""
    if columns >= 140:
        assert left_out == []
