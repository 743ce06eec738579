"""What engines once asked of a capability string is a kind's method (issue 36, item 1), so a
kind written as a class, a plugin's too, brings its own: ``walked_folder`` and ``lists_file``
(what ``discover`` lists for a store it meets walking a folder), ``elfmem_frames`` and
``simulates`` (what the simulations read), ``doc_value``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memlab import kinds
from memlab.sources.discover import discover


class ToyFolder(kinds.KindBase):
    """A folder holding ``toy.marker``; its walked row names a layout of its own."""

    name = "toy_folder"
    display = "toy folder"
    priority = 50
    load_ref = "builtins:print"  # never loaded here

    def detect(self, probe):
        return "holds toy.marker" if probe.has("toy.marker") else None

    def walked_folder(self, folder: Path):
        return {"agent_id": f"toy-{folder.name}", "path": str(folder), "layout": "toy_layout",
                "kind": self.name}


class ToyFile(kinds.KindBase):
    """A file starting with ``TOY``; a walk lists it only when its second line says ``store``."""

    name = "toy_file"
    display = "toy file"
    priority = 50
    load_ref = "builtins:print"

    def detect(self, probe):
        return None if probe.is_dir or not probe.head.startswith(b"TOY") else "starts with TOY"

    def lists_file(self, path: Path) -> bool:
        return path.read_text().splitlines()[1:2] == ["store"]

    def elfmem_frames(self, store):
        return {"blocks": None}


@pytest.fixture
def toys():
    kinds.register(ToyFolder())
    kinds.register(ToyFile())
    try:
        yield
    finally:
        kinds.unregister("toy_folder")
        kinds.unregister("toy_file")


def _tree(root: Path) -> None:
    (root / "fleet" / "a").mkdir(parents=True)
    (root / "fleet" / "a" / "toy.marker").write_text("")
    (root / "fleet" / "one.toy").write_text("TOY\nstore\n")
    (root / "fleet" / "summary.toy").write_text("TOY\nsummary of the stores\n")


def test_discover_lists_what_the_kinds_own_hooks_say(tmp_path, toys):
    _tree(tmp_path)
    found = discover(tmp_path)
    rows = {(r.kind, r.agent_id, None if r.layout is pd.NA else r.layout)
            for r in found.itertuples()}
    assert ("toy_folder", "toy-a", "toy_layout") in rows
    assert ("toy_file", "one", None) in rows
    assert not any(r.agent_id == "summary" for r in found.itertuples())  # lists_file said no


def test_without_the_kinds_nothing_of_theirs_is_listed(tmp_path):
    _tree(tmp_path)
    found = discover(tmp_path)
    assert not any(str(k).startswith("toy") for k in found["kind"])
    assert not any(str(a).startswith("toy-") for a in found["agent_id"])


def test_simulates_follows_elfmem_frames(toys):
    assert kinds.get("elfmem_db").simulates()
    assert not kinds.get("letta_memfs").simulates() and not kinds.get("agent_file").simulates()
    assert kinds.get("toy_file").simulates() and not kinds.get("toy_folder").simulates()
    assert kinds.get("elfmem_db").doc_value("supersession_share") is not None
    assert kinds.get("letta_memfs").doc_value("supersession_share") is None
