"""`memlab discover HOME` never follows a symlinked agent or ``memory`` folder (``memory -> /``
walked the whole filesystem, /proc included: 990,931 files, 36 GB), and a symlink, FIFO or
socket where it looks for ``agent.yaml``, ``.letta/config.json`` or a ``.db`` is a note in the
``problem`` column, not silence."""

from __future__ import annotations

import os
import socket

import pandas as pd

from memlab.sources.discover import discover


def test_a_symlinked_memory_or_agent_folder_is_listed_and_not_walked(tmp_path):
    home = tmp_path / "home"
    (home / ".letta/agents/big").mkdir(parents=True)
    (home / ".letta/agents/big/memory").symlink_to("/")
    (home / ".letta/agents/proc").mkdir()
    (home / ".letta/agents/proc/memory").symlink_to("/proc/self")
    real = tmp_path / "elsewhere"
    (real / "memory/system").mkdir(parents=True)
    (real / "memory/system/persona.md").write_text("---\ndescription: x\n---\nhi\n")
    (home / ".letta/agents/linked").symlink_to(real)
    (home / ".souveraine/agents/s1").mkdir(parents=True)
    (home / ".souveraine/agents/s1/memory").symlink_to(real / "memory")
    (home / ".pi/unified/agents").mkdir(parents=True)
    (home / ".pi/unified/agents/p1").symlink_to(real)
    inv = discover(home).set_index("agent_id")
    assert set(inv.index) == {"big", "proc", "linked", "s1", "p1"}
    for agent_id, link, target in [("big", "memory", "/"), ("proc", "memory", "/proc/self"),
                                   ("linked", "linked", str(real)),
                                   ("s1", "memory", str(real / "memory")),
                                   ("p1", "p1", str(real))]:
        row = inv.loc[agent_id]
        assert row["files"] is pd.NA and row["bytes"] is pd.NA and row["name"] is pd.NA
        assert f"{link} is a symlink to {target!r}; not followed, not read" in row["problem"]


def test_special_files_where_discover_looks_are_notes(tmp_path):
    home = tmp_path / "home"
    sv = home / ".souveraine/agents/s1"
    (sv / "memory").mkdir(parents=True)
    os.mkfifo(sv / "agent.yaml")
    sv2 = home / ".souveraine/agents/s2"
    (sv2 / "memory").mkdir(parents=True)
    (sv2 / "agent.yaml").symlink_to("/etc/passwd")
    letta = home / ".letta/agents/a1/memory/.letta"
    letta.mkdir(parents=True)
    os.mkfifo(letta / "config.json")
    dbs = home / ".elfmem/databases"
    dbs.mkdir(parents=True)
    os.mkfifo(dbs / "fifo.db")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(dbs / "sock.db"))
        inv = discover(home).set_index("agent_id")
    finally:
        sock.close()
    assert "agent.yaml is a FIFO; not read" in inv.loc["s1", "problem"]
    assert "agent.yaml is a symlink to '/etc/passwd'; not followed" in inv.loc["s2", "problem"]
    assert ".letta/config.json is a FIFO; not read" in inv.loc["a1", "problem"]
    assert inv.loc["fifo", "problem"] == "fifo.db is a FIFO; not read"
    assert inv.loc["sock", "problem"] == "sock.db is a socket; not read"
    assert inv.loc["fifo", "files"] is pd.NA
