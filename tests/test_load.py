"""memlab.load picks the loader from content; unknown things get a clear error."""

from __future__ import annotations

import shutil

import pytest

import memlab
from memlab.errors import CorruptStore, StoreNotFound, UnrecognizedStore
from memlab.kinds import detect


def test_detects_each_bundled_format(data_dir):
    assert detect(data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db").kind == "elfmem_db"
    assert detect(data_dir / "samples/letta-af/ezra.af").kind == "agent_file"
    assert detect(data_dir / "demo/elfmem-demo.db").kind == "elfmem_db"


def test_a_renamed_database_still_loads(tmp_path, data_dir):
    renamed = tmp_path / "memory.bin"
    shutil.copy(data_dir / "samples/elfmem/elfmem-0.20.0-schema9.db", renamed)
    store = memlab.load(renamed)
    assert store.kind == "elfmem_db" and len(store.blocks) == 47


def test_missing_path(tmp_path):
    with pytest.raises(StoreNotFound) as info:
        memlab.load(tmp_path / "absent.db")
    assert "absent.db" in str(info.value)


def test_folder_without_memory_markers(tmp_path):
    (tmp_path / "random.txt").write_text("hello")
    with pytest.raises(UnrecognizedStore) as info:
        memlab.load(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_binary_junk_is_unrecognised(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(UnrecognizedStore):
        memlab.load(junk)


def test_db_suffix_that_is_not_sqlite_is_corrupt(tmp_path):
    fake = tmp_path / "elfmem.db"
    fake.write_text("not sqlite at all\n")
    with pytest.raises(CorruptStore) as info:
        memlab.load(fake)
    assert "elfmem.db" in str(info.value)


def test_public_surface_is_explicit():
    for name in memlab.__all__:
        assert getattr(memlab, name) is not None, name
